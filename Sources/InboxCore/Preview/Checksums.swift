/// CRC-32 (ISO-HDLC, as PNG and ZIP use it).
public enum CRC32 {
    /// The CRC of `bytes`; pass an earlier result as `crc` to continue it over the next bytes, so that
    /// `checksum(b, continuing: checksum(a)) == checksum(a + b)`.
    public static func checksum(_ bytes: some Sequence<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        var register = ~crc
        for byte in bytes {
            register = table[Int((register ^ UInt32(byte)) & 0xFF)] ^ (register >> 8)
        }
        return ~register
    }

    /// One entry per byte value: the reflected polynomial 0xEDB88320 applied eight times.
    private static let table: [UInt32] = (0..<256).map { value in
        var register = UInt32(value)
        for _ in 0..<8 {
            register = register & 1 == 1 ? 0xEDB8_8320 ^ (register >> 1) : register >> 1
        }
        return register
    }
}

/// MD5 (RFC 1321), for thumbnail names only: the standard names them so; it protects nothing.
public enum MD5 {
    /// The 16-byte digest of `bytes`.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        // Padding: 0x80, zeros up to 56 mod 64, then the length in bits (mod 2^64, as RFC 1321 says) little-endian.
        var message = bytes
        let bitLength = UInt64(truncatingIfNeeded: bytes.count) &* 8
        message.append(0x80)
        message.append(contentsOf: [UInt8](repeating: 0, count: (119 - bytes.count % 64) % 64))
        for shift in stride(from: 0, to: 64, by: 8) {
            message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        var state: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476]
        for block in stride(from: 0, to: message.count, by: 64) {
            compress(message, at: block, into: &state)
        }
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32($0 * 8)) } }
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        digest(bytes).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// One 64-byte block through the four rounds (RFC 1321, 3.4).
    private static func compress(_ message: [UInt8], at block: Int, into state: inout [UInt32]) {
        let words: [UInt32] = (0..<16).map { index in
            (0..<4).reduce(0) { word, byte in word | UInt32(message[block + index * 4 + byte]) << UInt32(byte * 8) }
        }
        var (a, b, c, d) = (state[0], state[1], state[2], state[3])
        for step in 0..<64 {
            let mixed: UInt32
            let word: Int
            switch step {
            case 0..<16: (mixed, word) = ((b & c) | (~b & d), step)
            case 16..<32: (mixed, word) = ((d & b) | (~d & c), (5 * step + 1) % 16)
            case 32..<48: (mixed, word) = (b ^ c ^ d, (3 * step + 5) % 16)
            default: (mixed, word) = (c ^ (b | ~d), (7 * step) % 16)
            }
            let sum = a &+ mixed &+ sines[step] &+ words[word]
            let shift = UInt32(shifts[step / 16][step % 4])
            (a, d, c) = (d, c, b)
            b = b &+ (sum << shift | sum >> (32 - shift))
        }
        state[0] &+= a
        state[1] &+= b
        state[2] &+= c
        state[3] &+= d
    }

    /// The left rotations of each round, four per round repeated.
    private static let shifts: [[Int]] = [[7, 12, 17, 22], [5, 9, 14, 20], [4, 11, 16, 23], [6, 10, 15, 21]]

    /// floor(|sin(i + 1)| × 2^32), RFC 1321's table T.
    private static let sines: [UInt32] = [
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee,
        0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
        0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
        0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
        0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa,
        0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
        0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
        0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
        0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
        0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05,
        0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039,
        0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
        0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
    ]
}
