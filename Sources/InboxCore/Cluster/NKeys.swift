/// NATS NKeys, the text form of Ed25519 keys that NATS servers and clients exchange: a public key is a prefix byte
/// naming its role and the 32 key bytes, a seed two prefix bytes (`S` and the role) and the 32 bytes of the Ed25519
/// seed; each followed by their CRC-16/XMODEM (little-endian) and written in base32 (RFC 4648) without padding. So a
/// user's public key reads `U…` (56 characters) and its seed `SU…` (58).
///
/// Only the text is here: deriving the public key from a seed (Ed25519) and signing are libcrypto's, in InboxCluster.
public enum NKeyRole: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// `A…`: an account (a signer of user JWTs).
    case account = 0
    /// `C…`: a server cluster.
    case cluster = 16
    /// `N…`: a server.
    case server = 104
    /// `O…`: an operator (a signer of account JWTs).
    case `operator` = 112
    /// `U…`: a user, the role a client connects as.
    case user = 160

    public var description: String {
        switch self {
        case .account: "account"
        case .cluster: "cluster"
        case .server: "server"
        case .operator: "operator"
        case .user: "user"
        }
    }
}

/// A public NKey: its role and the 32 bytes of an Ed25519 public key.
public struct NKeyPublicKey: Sendable, Hashable, CustomStringConvertible {
    public let role: NKeyRole
    /// The Ed25519 public key.
    public let bytes: [UInt8]

    /// The key of `role` with these bytes; nil unless they are 32.
    public init?(role: NKeyRole, bytes: [UInt8]) {
        guard bytes.count == NKeys.keyByteCount else { return nil }
        self.role = role
        self.bytes = bytes
    }

    /// The text form: `U…` for a user, 56 characters.
    public var description: String { NKeys.encode([role.rawValue] + bytes) }

    /// The public key `text` spells, or why it spells none.
    public static func parse(_ text: String) -> Result<NKeyPublicKey, NKeyError> {
        let raw: [UInt8]
        switch NKeys.decode(text) {
        case .success(let bytes): raw = bytes
        case .failure(let error): return .failure(error)
        }
        guard raw.count == 1 + NKeys.keyByteCount else { return .failure(.wrongLength(raw.count)) }
        guard let role = NKeyRole(rawValue: raw[0]) else { return .failure(.notAPublicKey) }
        return .success(NKeyPublicKey(role: role, bytes: Array(raw[1...]))!)
    }
}

/// An NKey seed: its role and the 32-byte Ed25519 seed. It is a secret: its text is never printed or logged, and
/// whoever holds one should `clear()` it when done.
public struct NKeySeed: Sendable {
    public let role: NKeyRole
    /// The Ed25519 seed (RFC 8032's private key).
    public private(set) var bytes: [UInt8]

    /// The seed of `role` with these bytes; nil unless they are 32.
    public init?(role: NKeyRole, bytes: [UInt8]) {
        guard bytes.count == NKeys.keyByteCount else { return nil }
        self.role = role
        self.bytes = bytes
    }

    /// The text form, `SU…` for a user (58 characters): for writing a seed file, never for a log.
    public var text: String {
        NKeys.encode([NKeys.seedPrefix | (role.rawValue >> 5), (role.rawValue & 31) << 3] + bytes)
    }

    /// Overwrites the seed's bytes with zeros (this copy's: a value copied before holds its own).
    public mutating func clear() {
        for index in bytes.indices { bytes[index] = 0 }
    }

    /// The seed `text` spells, or why it spells none.
    public static func parse(_ text: String) -> Result<NKeySeed, NKeyError> {
        parse(Array(text.utf8)[...])
    }

    /// The seed of a seed file's bytes: the first line that, without the spaces around it, starts with `S` and is all
    /// base32 letters (a bare seed, or `nk`'s and `nsc`'s files with their comment lines). The buffers made on the way
    /// are zeroed.
    public static func parse(file: [UInt8]) -> Result<NKeySeed, NKeyError> {
        for line in file.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let token = line.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            let end = token.lastIndex { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }.map { $0 + 1 } ?? token.startIndex
            let candidate = token[token.startIndex..<end]
            if candidate.first == UInt8(ascii: "S"), candidate.allSatisfy({ NKeys.value(of: $0) != nil }) {
                return parse(candidate)
            }
        }
        return .failure(.noSeedInFile)
    }

    private static func parse(_ text: ArraySlice<UInt8>) -> Result<NKeySeed, NKeyError> {
        var raw: [UInt8]
        switch NKeys.decode(text) {
        case .success(let bytes): raw = bytes
        case .failure(let error): return .failure(error)
        }
        defer { for index in raw.indices { raw[index] = 0 } }
        guard raw.count == 2 + NKeys.keyByteCount else { return .failure(.wrongLength(raw.count)) }
        guard raw[0] & 0xF8 == NKeys.seedPrefix else { return .failure(.notASeed) }
        guard let role = NKeyRole(rawValue: (raw[0] & 7) << 5 | (raw[1] & 0xF8) >> 3), raw[1] & 7 == 0 else {
            return .failure(.unknownRole)
        }
        return .success(NKeySeed(role: role, bytes: Array(raw[2...]))!)
    }
}

/// Why text is not an NKey. `description` is a phrase about the text, which it never quotes (it may be a secret).
public enum NKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A character outside base32's `A`–`Z`, `2`–`7`, or a length base32 cannot have.
    case notBase32
    /// The CRC-16 does not match: a character was changed or lost.
    case badChecksum
    /// Decoded to a number of bytes (without the CRC) no key has.
    case wrongLength(Int)
    /// A seed whose first prefix byte is not a seed's.
    case notASeed
    /// A public key whose prefix is no role's (a seed, or a private key, where a public key was wanted).
    case notAPublicKey
    /// A seed whose second prefix names no role.
    case unknownRole
    /// A seed file with no line that could be a seed.
    case noSeedInFile

    public var description: String {
        switch self {
        case .notBase32: "is not an NKey (not base32)"
        case .badChecksum: "is not an NKey (its checksum does not match)"
        case .wrongLength(let count): "is not an NKey of the kind wanted (\(count) bytes: a public key has 33, a seed 34)"
        case .notASeed: "is not an NKey seed (it does not start with S)"
        case .notAPublicKey: "is not a public NKey (no account, cluster, server, operator or user prefix)"
        case .unknownRole: "is not an NKey seed (its role is unknown)"
        case .noSeedInFile: "holds no NKey seed (a line starting with S)"
        }
    }
}

/// The encoding NKeys share: base32 without padding around the raw bytes and their CRC-16.
public enum NKeys {
    /// The bytes of an Ed25519 key or seed.
    public static let keyByteCount = 32
    /// The first prefix byte of every seed (18 << 3, `S`).
    static let seedPrefix: UInt8 = 18 << 3
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// CRC-16/XMODEM (polynomial 0x1021, initial 0, no reflection) of `bytes`: 0x31C3 for "123456789".
    public static func crc16<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }

    /// `raw` and its CRC-16 (little-endian) in base32 without padding.
    public static func encode(_ raw: [UInt8]) -> String {
        let crc = crc16(raw)
        return base32(raw + [UInt8(crc & 0xFF), UInt8(crc >> 8)])
    }

    /// The raw bytes of an NKey's text, its CRC-16 checked and removed.
    public static func decode(_ text: String) -> Result<[UInt8], NKeyError> { decode(Array(text.utf8)[...]) }

    static func decode(_ text: ArraySlice<UInt8>) -> Result<[UInt8], NKeyError> {
        guard var bytes = base32Decode(text), bytes.count >= 3 else { return .failure(.notBase32) }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        let raw = Array(bytes.dropLast(2))
        let crc = UInt16(bytes[bytes.count - 2]) | UInt16(bytes[bytes.count - 1]) << 8
        guard crc16(raw) == crc else { return .failure(.badChecksum) }
        return .success(raw)
    }

    /// RFC 4648 base32, without the `=` padding.
    public static func base32(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int(buffer >> UInt32(bits - 5) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of unpadded base32 (upper case only); nil for another character, a length no byte count gives, or
    /// bits past the last byte that are not zero (so that each byte string has one spelling).
    public static func base32Decode<Text: Collection<UInt8>>(_ text: Text) -> [UInt8]? {
        // Lengths mod 8 of whole bytes: 0, 2, 4, 5, 7 characters.
        guard [0, 2, 4, 5, 7].contains(text.count % 8) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 5 / 8)
        var buffer: UInt32 = 0, bits = 0
        for character in text {
            guard let value = value(of: character) else { return nil }
            buffer = (buffer << 5 | UInt32(value)) & 0x1FFF
            bits += 5
            if bits >= 8 {
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits - 8)))
                bits -= 8
            }
        }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }

    /// A base32 letter's value, nil for any other byte.
    static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): character - UInt8(ascii: "2") + 26
        default: nil
        }
    }
}
