import Testing
@testable import InboxCore

/// CRC-32 and MD5 against published vectors and Python's zlib and hashlib.
@Suite("Checksums")
struct ChecksumTests {
    @Test(arguments: [
        ("", UInt32(0)),
        ("123456789", 0xCBF4_3926), // The check value of CRC-32/ISO-HDLC.
        ("The quick brown fox jumps over the lazy dog", 0x414F_A339),
        ("IEND", 0xAE42_6082), // The CRC every PNG ends with.
    ])
    func crc32(text: String, expected: UInt32) {
        #expect(CRC32.checksum(Array(text.utf8)) == expected)
    }

    @Test func crc32AllByteValues() {
        // zlib.crc32(bytes(range(256)) * 3)
        let input = [UInt8]((0...255).map { UInt8($0) } + (0...255).map { UInt8($0) } + (0...255).map { UInt8($0) })
        #expect(CRC32.checksum(input) == 0xB0C0_DF2A)
    }

    @Test func crc32Continues() {
        let input = Array("The quick brown fox jumps over the lazy dog".utf8)
        let whole = CRC32.checksum(input)
        for split in 0...input.count {
            let first = CRC32.checksum(input[..<split])
            #expect(CRC32.checksum(input[split...], continuing: first) == whole, "split at \(split)")
        }
    }

    /// RFC 1321, A.5, then lengths around the padding's block boundary (55 bytes fit one block, 56 need two) and a
    /// million bytes, from Python's hashlib.
    @Test(arguments: [
        ([UInt8](), "d41d8cd98f00b204e9800998ecf8427e"),
        (Array("a".utf8), "0cc175b9c0f1b6a831c399e269772661"),
        (Array("abc".utf8), "900150983cd24fb0d6963f7d28e17f72"),
        (Array("message digest".utf8), "f96b697d7cb7938d525a2f31aaf161d0"),
        (Array("abcdefghijklmnopqrstuvwxyz".utf8), "c3fcd3d76192e4007dfb496cca67e13b"),
        (Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8),
         "d174ab98d277d9f5a5611c2c9f419d9f"),
        (Array(String(repeating: "1234567890", count: 8).utf8), "57edf4a22be3c955ac49da2e2107b67a"),
        ([UInt8](repeating: 0x61, count: 55), "ef1772b6dff9a122358552954ad0df65"),
        ([UInt8](repeating: 0x61, count: 56), "3b0c8ac703f828b04c6c197006d17218"),
        ([UInt8](repeating: 0x61, count: 63), "b06521f39153d618550606be297466d5"),
        ([UInt8](repeating: 0x61, count: 64), "014842d480b571495a4a0363793f7367"),
        ([UInt8](repeating: 0x61, count: 65), "c743a45e0d2e6a95cb859adae0248435"),
        ((0..<768).map { UInt8(truncatingIfNeeded: $0) }, "e6899eaaf06fd702f3ed3f988eb19362"),
    ])
    func md5(input: [UInt8], expected: String) {
        #expect(MD5.hex(input) == expected)
        #expect(MD5.digest(input).count == 16)
    }

    @Test func md5OfAMillionBytes() {
        #expect(MD5.hex([UInt8](repeating: 0x61, count: 1_000_000)) == "7707d6ae4e027c70eea2a935c2296f21")
    }
}
