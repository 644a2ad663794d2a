import Testing
@testable import InboxCore

/// SHA-256 against FIPS 180-4's examples and Python's hashlib, base64url against RFC 4648's vectors, and the names and
/// object-store layout a cluster uses on NATS JetStream.
@Suite("Cluster")
struct ClusterTests {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    /// FIPS 180-4's examples (the one-block "abc", the two-block 448-bit message, the 896-bit message of the SHA-512
    /// examples) and the empty message.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func sha256Vectors(message: String, expected: String) {
        #expect(hex(SHA256.digest(Array(message.utf8))) == expected)
    }

    /// A million times "a" (FIPS 180-2's long example), fed in uneven pieces.
    @Test func sha256MillionA() {
        var hash = SHA256()
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 999)
        var left = 1_000_000
        while left > 0 {
            let take = min(left, piece.count)
            hash.update(Array(piece[..<take]))
            left -= take
        }
        #expect(hex(hash.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Lengths around the padding's block boundary (55 bytes pad in one block, 56 need two), bytes `i % 251`, from
    /// Python's hashlib; and every split of each into two updates gives the same digest.
    @Test(arguments: [
        (55, "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59"),
        (56, "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562"),
        (63, "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488"),
        (64, "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"),
        (65, "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781"),
        (127, "92ca0fa6651ee2f97b884b7246a562fa71250fedefe5ebf270d31c546bfea976"),
        (128, "471fb943aa23c511f6f72f8d1652d9c880cfa392ad80503120547703e56a2be5"),
    ])
    func sha256Boundaries(length: Int, expected: String) {
        let message = (0..<length).map { UInt8($0 % 251) }
        #expect(hex(SHA256.digest(message)) == expected)
        for split in 0...length {
            var hash = SHA256()
            hash.update(Array(message[..<split]))
            hash.update(Array(message[split...]))
            #expect(hex(hash.finish()) == expected, "split at \(split)")
        }
    }

    /// RFC 4648, 10, and the two characters that differ from standard base64 (nothing encodes as nothing; the
    /// empty text is no name or digest, so decoding refuses it).
    @Test(arguments: [
        ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"), ("rapport final.pdf", "cmFwcG9ydCBmaW5hbC5wZGY="), ("é/ü", "w6kvw7w="),
    ])
    func base64URL(text: String, encoded: String) {
        #expect(Base64URL.encode(Array(text.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(text.utf8))
        #expect(Base64URL.decode(String(encoded.filter { $0 != "=" })) == Array(text.utf8), "unpadded")
    }

    @Test func base64URLAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xFE]) == "-__-")
        #expect(Base64URL.decode("-__-") == [0xFB, 0xFF, 0xFE])
        #expect(Base64URL.decode("+//+") == nil, "standard base64's digits are not this alphabet's")
        #expect(Base64URL.decode("Zg=a") == nil, "padding only at the end")
        #expect(Base64URL.decode("Zm9vY") == nil, "one digit over a group encodes nothing")
        #expect(Base64URL.decode("Zg===") == nil, "at most two pads")
        // The digest of "abc" as the object store writes it (Python: base64.urlsafe_b64encode).
        #expect(ObjectInfo.digestText(SHA256.digest(Array("abc".utf8)))
                == "SHA-256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0=")
    }

    @Test func objectStoreLayout() throws {
        let layout = try ObjectStoreLayout(bucket: "docs")
        #expect(layout.streamName == "OBJ_docs")
        #expect(layout.chunkSubjects == "$O.docs.C.>")
        #expect(layout.metaSubjects == "$O.docs.M.>")
        #expect(layout.chunkSubject(nuid: "N") == "$O.docs.C.N")
        #expect(layout.metaSubject(name: "rapport final.pdf") == "$O.docs.M.cmFwcG9ydCBmaW5hbC5wZGY=")
        #expect(layout.objectName(metaSubject: "$O.docs.M.cmFwcG9ydCBmaW5hbC5wZGY=") == "rapport final.pdf")
        #expect(layout.objectName(metaSubject: "$O.other.M.cmFwcG9ydCBmaW5hbC5wZGY=") == nil)
        #expect(layout.objectName(metaSubject: "$O.docs.M.+++") == nil)
        #expect(throws: ClusterNameError.self) { try ObjectStoreLayout(bucket: "a.b") }
    }

    @Test func nuids() {
        #expect(ObjectStoreLayout.nuid(random: (0, 0)) == String(repeating: "0", count: 22))
        #expect(ObjectStoreLayout.nuid(random: (0, 61)) == String(repeating: "0", count: 21) + "z")
        #expect(ObjectStoreLayout.nuid(random: (0, 62)) == String(repeating: "0", count: 20) + "10")
        // 2^128 - 1 = 7n42DGM5Tflk9n8mt7Fhc7 in base 62 with the digits 0-9, A-Z, a-z (Python: a loop of divmod by 62).
        #expect(ObjectStoreLayout.nuid(random: (.max, .max)) == "7n42DGM5Tflk9n8mt7Fhc7")
        var garbage = Garbage(state: 0x2545_F491_4F6C_DD1D)
        let ids = (0..<1000).map { _ in ObjectStoreLayout.nuid(random: (garbage.next(), garbage.next())) }
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { $0.utf8.count == 22 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
    }

    @Test func objectInfoRoundTrip() throws {
        let digest = ObjectInfo.digestText(SHA256.digest(Array("abc".utf8)))
        let info = ObjectInfo(name: "a \"quoted\" name", bucket: "docs", nuid: "N1", size: 3_145_728, chunks: 24,
                              digest: digest)
        let text = String(decoding: info.json(), as: UTF8.self)
        #expect(text == "{\"name\":\"a \\\"quoted\\\" name\",\"options\":{\"max_chunk_size\":131072},\"bucket\":\"docs\","
                + "\"nuid\":\"N1\",\"size\":3145728,\"mtime\":\"0001-01-01T00:00:00Z\",\"chunks\":24,\"digest\":\""
                + digest + "\"}")
        let read = try ObjectInfo.parse(info.json(), modified: 42).get()
        #expect(read == ObjectInfo(name: "a \"quoted\" name", bucket: "docs", nuid: "N1", size: 3_145_728, chunks: 24,
                                   digest: digest, modified: 42))
        #expect(read.digestBytes == SHA256.digest(Array("abc".utf8)))
        var deleted = info
        (deleted.deleted, deleted.size, deleted.chunks, deleted.digest) = (true, 0, 0, nil)
        #expect(String(decoding: deleted.json(), as: UTF8.self).hasSuffix("\"chunks\":0,\"deleted\":true}"))
        #expect(try ObjectInfo.parse(deleted.json()).get().deleted)
    }

    /// What another client may write: nats.go's own JSON (headers, the zero mtime, a lower-case digest prefix of early
    /// versions) reads the same; what lacks a name or has no count for a size is refused.
    @Test func objectInfoFromOtherClients() throws {
        let go = #"{"name":"x","headers":{"A":["b"]},"options":{"max_chunk_size":8192},"bucket":"b","nuid":"n","#
            + #""size":5,"mtime":"0001-01-01T00:00:00Z","chunks":1,"digest":"sha-256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0="}"#
        let info = try ObjectInfo.parse(Array(go.utf8)).get()
        #expect(info.chunkSize == 8192 && info.size == 5 && info.chunks == 1 && !info.deleted)
        #expect(info.digestBytes == SHA256.digest(Array("abc".utf8)))
        #expect(throws: JSONError.self) { try ObjectInfo.parse(Array(#"{"bucket":"b","nuid":"n"}"#.utf8)).get() }
        #expect(throws: JSONError.self) { try ObjectInfo.parse(Array(#"{"name":"x","bucket":"b","nuid":"n","size":-1}"#.utf8)).get() }
        #expect(throws: JSONError.self) { try ObjectInfo.parse(Array("not json".utf8)).get() }
        #expect(ObjectInfo(name: "x", bucket: "b", nuid: "n", size: 0, chunks: 0, digest: "MD5=abc").digestBytes == nil)
    }
}
