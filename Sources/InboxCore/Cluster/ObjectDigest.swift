/// The SHA-256 digest of an object in a NATS object store, as the store writes it in the object's info:
/// `SHA-256=` and the base64url of the 32 bytes, padded (`SHA-256=` + 43 characters + `=`).
public struct ObjectDigest: Sendable, Hashable, CustomStringConvertible {
    /// What the text starts with.
    public static let prefix = "SHA-256="
    /// The bytes of a SHA-256 digest.
    public static let byteCount = 32

    /// The digest's 32 bytes.
    public let bytes: [UInt8]

    /// The digest of these bytes; nil unless they are 32.
    public init?(sha256 bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// `SHA-256=` and the padded base64url of the bytes.
    public var description: String { Self.prefix + Base64URL.encode(bytes) }

    /// The digest `text` spells, or why it spells none, as a phrase about it. The padding may be left out; bits past
    /// the last byte must be zero, so that each digest has one spelling.
    public static func parse(_ text: String) -> Result<ObjectDigest, ObjectDigestError> {
        guard text.hasPrefix(prefix) else { return .failure(.init("does not start with \(prefix)")) }
        guard let bytes = Base64URL.decode(text.utf8.dropFirst(prefix.utf8.count)) else {
            return .failure(.init("is not base64url after \(prefix)"))
        }
        guard let digest = ObjectDigest(sha256: bytes) else {
            return .failure(.init("holds \(bytes.count) bytes, not the \(byteCount) of a SHA-256 digest"))
        }
        return .success(digest)
    }
}

/// Why text is not an object digest.
public struct ObjectDigestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A phrase saying what is wrong with the text ("is not base64url after SHA-256=").
    public let message: String
    /// The message.
    public var description: String { message }

    /// An error with its phrase.
    init(_ message: String) {
        self.message = message
    }
}

/// Base64 with the URL and file name safe alphabet (RFC 4648 5: '-' and '_' for '+' and '/'), as Go's
/// `base64.URLEncoding` writes it: how the object store spells an object's name in its meta subject and its SHA-256
/// in the digest. Every character of it may stand in a NATS subject token.
public enum Base64URL {
    /// The 64 digits, in the order of their values.
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The bytes as base64url, padded with '=' to a multiple of four characters.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                out.append(position <= count ? alphabet[Int(group >> (18 - 6 * position) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes base64url `text` stands for, padded or not; nil for any other character, a length no encoding has,
    /// padding that does not complete the last group, or bits set past the last byte.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var digits = Array(text)
        var padding = 0
        while digits.last == UInt8(ascii: "=") && padding < 2 {
            digits.removeLast()
            padding += 1
        }
        guard !digits.isEmpty, digits.count % 4 != 1 else { return nil }
        if padding > 0 && (digits.count + padding) % 4 != 0 { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for digit in digits {
            guard let value = value(of: digit) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return accumulator == 0 ? bytes : nil
    }

    /// The same for a string's UTF-8.
    public static func decode(_ text: String) -> [UInt8]? { decode(text.utf8) }

    /// The value of one digit, nil for any other byte.
    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): digit - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
