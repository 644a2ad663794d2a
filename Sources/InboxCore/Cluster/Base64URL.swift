/// Base64 with the URL and file name safe alphabet (RFC 4648, 5: `-` and `_` for `+` and `/`), padded with `=` as
/// Go's `base64.URLEncoding` writes it: how the JetStream object store spells an object's name in its meta subject
/// and its SHA-256 in the digest. Every character of it may stand in a NATS subject token.
public enum Base64URL {
    /// The 64 digits, in value order.
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` encoded, padded to a multiple of four with `=`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let rest = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = rest > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = rest > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(group >> 18 & 63)])
            out.append(alphabet[Int(group >> 12 & 63)])
            out.append(rest > 1 ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            out.append(rest > 2 ? alphabet[Int(group & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, padded or not; nil for a character outside the alphabet, padding anywhere but at the
    /// end, or a length no encoding has (one digit over a group of four).
    public static func decode(_ text: String) -> [UInt8]? {
        var digits = Array(text.utf8)
        while digits.last == UInt8(ascii: "=") { digits.removeLast() }
        guard digits.count % 4 != 1, text.utf8.count - digits.count <= 2 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count * 3 / 4)
        var group: UInt32 = 0
        var held = 0
        for digit in digits {
            guard let value = value(of: digit) else { return nil }
            group = group << 6 | value
            held += 1
            if held == 4 {
                out.append(UInt8(truncatingIfNeeded: group >> 16))
                out.append(UInt8(truncatingIfNeeded: group >> 8))
                out.append(UInt8(truncatingIfNeeded: group))
                group = 0
                held = 0
            }
        }
        if held == 2 { out.append(UInt8(truncatingIfNeeded: group >> 4)) }
        if held == 3 {
            out.append(UInt8(truncatingIfNeeded: group >> 10))
            out.append(UInt8(truncatingIfNeeded: group >> 2))
        }
        return out
    }

    /// The value of one digit, nil for a byte outside the alphabet.
    private static func value(of digit: UInt8) -> UInt32? {
        switch digit {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(digit - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(digit - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(digit - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
