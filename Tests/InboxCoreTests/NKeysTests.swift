import Testing
@testable import InboxCore

/// NKeys' text form: base32 against RFC 4648, CRC-16/XMODEM against its check value, and seeds and public keys made
/// with Python (`cryptography`'s Ed25519 and the NKeys encoding), one pair of them the example of nkeys.net's README.
@Suite("NKeys")
struct NKeysTests {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
    func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = [], digits = Array(hex.utf8)[...]
        while !digits.isEmpty { out.append(UInt8(String(decoding: digits.prefix(2), as: UTF8.self), radix: 16)!); digits = digits.dropFirst(2) }
        return out
    }

    /// RFC 4648's test vectors, without the padding.
    @Test(arguments: [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"),
                      ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI")])
    func base32(text: String, encoded: String) {
        #expect(NKeys.base32(Array(text.utf8)) == encoded)
        #expect(NKeys.base32Decode(Array(encoded.utf8)) == Array(text.utf8))
    }

    /// Lengths no byte count has, lower case, padding, other letters, and bits left over that are not zero.
    @Test(arguments: ["M", "MZX", "MZXW6Y", "mzxw6", "MY======", "MZ1Q", "MZ", "MZXR"])
    func base32Refusals(encoded: String) {
        #expect(NKeys.base32Decode(Array(encoded.utf8)) == nil)
    }

    @Test func crc16XModemCheckValue() {
        #expect(NKeys.crc16(Array("123456789".utf8)) == 0x31C3)
        #expect(NKeys.crc16([UInt8]()) == 0)
    }

    /// Seed text, its role and 32 bytes, and the public key of the Ed25519 key it seeds (bytes and text).
    static let pairs: [(seed: String, role: NKeyRole, seedHex: String, publicKey: String, publicHex: String)] = [
        // nkeys.net's README example.
        ("SOAELH6NJCEK4HST5644G4HK7TOAFZGRRJHNM4EUKUY7PPNDLIKO5IH4JM", .operator,
         "459fcd4888ae1e53efb9c370eafcdc02e4d18a4ed670945531f7bda35a14eea0",
         "ODPWIBQJVIQ42462QAFI2RKJC4RZHCQSIVPRDDHWFCJAP52NRZK6Z2YC",
         "df640609aa21cd73da800a8d45491723938a12455f118cf6289207f74d8e55ec"),
        ("SUAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAEQ", .user, String(repeating: "00", count: 32),
         "UA5WUJ54Z23KILLCUOUNAKTPBVZWKMQVO4O6EQ5GHLAERIMLLHNCTYM5",
         "3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29"),
        ("SUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H776Y", .user,
         "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
         "UAB2CB576PHBBPQ5ODORRZ2LYCMWPZGWGCN2KDK7DXOIMZASKUY3RLKK",
         "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"),
        ("SAAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4HYMHI", .account,
         "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
         "AAB2CB576PHBBPQ5ODORRZ2LYCMWPZGWGCN2KDK7DXOIMZASKUY3QPZV",
         "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"),
    ]

    @Test(arguments: pairs)
    func seedsAndPublicKeys(pair: (seed: String, role: NKeyRole, seedHex: String, publicKey: String, publicHex: String)) throws {
        let seed = try NKeySeed.parse(pair.seed).get()
        #expect(seed.role == pair.role && hex(seed.bytes) == pair.seedHex)
        #expect(seed.text == pair.seed, "written back the same")
        let publicKey = try #require(NKeyPublicKey(role: pair.role, bytes: bytes(pair.publicHex)))
        #expect(publicKey.description == pair.publicKey)
        #expect(try NKeyPublicKey.parse(pair.publicKey).get() == publicKey)
        var cleared = seed
        cleared.clear()
        #expect(cleared.bytes == [UInt8](repeating: 0, count: 32) && hex(seed.bytes) == pair.seedHex)
    }

    /// Seed files: bare, with a newline, with CRLF and spaces, and as `nk`/`nsc` decorate them.
    @Test(arguments: [
        "SUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H776Y",
        "SUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H776Y\n",
        "  SUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H776Y \r\n",
        "-----BEGIN USER NKEY SEED-----\nSUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H776Y\n------END USER NKEY SEED------\n",
        "# NKEY Seed printed below can be used to sign and prove identity.\n\nSUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H776Y\n",
    ])
    func seedFiles(text: String) throws {
        let seed = try NKeySeed.parse(file: Array(text.utf8)).get()
        #expect(seed.role == .user && seed.bytes == Array(0..<32))
    }

    @Test(arguments: [
        // One letter changed, one dropped.
        ("SUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H777Y", NKeyError.badChecksum),
        ("SUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H76Y", .notBase32),
        ("suaaaaicamcakbqhbaequcymbuha6earcijrifiwc4mbsgq3dqor4h776y", .notBase32),
        ("", .notBase32),
        ("SU", .notBase32),
        // A public key where a seed was wanted.
        ("UAB2CB576PHBBPQ5ODORRZ2LYCMWPZGWGCN2KDK7DXOIMZASKUY3RLKK", .wrongLength(33)),
        // 34 bytes with a good CRC but no seed prefix (the 2 prefix bytes 0, 0).
        (NKeys.encode([UInt8](repeating: 0, count: 34)), .notASeed),
        // The seed prefix with a role byte no role has (1 << 3).
        (NKeys.encode([18 << 3, 1 << 3] + [UInt8](repeating: 0, count: 32)), .unknownRole),
    ])
    func seedRefusals(text: String, error: NKeyError) {
        #expect(throws: error) { try NKeySeed.parse(text).get() }
    }

    @Test func publicKeyRefusals() {
        #expect(throws: NKeyError.wrongLength(34)) {
            try NKeyPublicKey.parse("SUAAAAICAMCAKBQHBAEQUCYMBUHA6EARCIJRIFIWC4MBSGQ3DQOR4H776Y").get()
        }
        #expect(throws: NKeyError.notAPublicKey) { try NKeyPublicKey.parse(NKeys.encode([8] + Array(0..<32))).get() }
        #expect(throws: NKeyError.noSeedInFile) { try NKeySeed.parse(file: Array("UAB2CB576P\n\n# none\n".utf8)).get() }
        #expect(throws: NKeyError.noSeedInFile) { try NKeySeed.parse(file: [0xFF, 0xFE, 0x0A, 0x00]).get() }
        #expect(NKeyPublicKey(role: .user, bytes: [1, 2]) == nil && NKeySeed(role: .user, bytes: []) == nil)
        // The error's words never quote the text, which may be a secret.
        #expect(!NKeyError.badChecksum.description.contains("SU"))
    }
}
