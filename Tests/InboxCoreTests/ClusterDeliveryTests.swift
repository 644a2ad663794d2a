import Testing
@testable import InboxCore

/// The delivery message a worker host reads: written and read back, and refused, with its sentence, whatever a
/// publisher on the subject sends.
@Suite("Cluster delivery messages")
struct ClusterDeliveryTests {
    /// SHA-256 of nothing, as the object store spells it.
    static let emptyDigest = "SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU="

    static let sample = ClusterDelivery(
        id: "0123456789abcdef0123456789abcdef", handler: "com.example.viewer", name: "report.pdf",
        contentType: "com.adobe.pdf", contentTypes: ["com.adobe.pdf", "public.data", "public.item"],
        sourceApp: "com.example.scanner", annotation: Array(#"{"pages": 3, "note": "a \"b\"\n"}"#.utf8),
        sourceHost: "ingest-1.example.org", sourceUID: 1000, object: "0123456789abcdef0123456789abcdef",
        digest: try! ObjectDigest.parse(emptyDigest).get(), size: 48213, arrivedAtUSec: 1_700_000_000_123_456)

    /// The sample's message with members replaced (raw JSON text), added, or removed (nil).
    static func message(_ changes: KeyValuePairs<String, String?> = [:]) -> [UInt8] {
        var members = (try! JSON.members(sample.encode()).get()!).map { ($0.key, String(decoding: $0.raw, as: UTF8.self)) }
        for (key, value) in changes {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                if let value { members[index].1 = value } else { members.remove(at: index) }
            } else if let value {
                members.append((key, value))
            }
        }
        return Array(("{" + members.map { JSON.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}").utf8)
    }

    @Test func theMessage() {
        #expect(String(decoding: Self.sample.encode(), as: UTF8.self) == #"""
            {"deliveryID":"0123456789abcdef0123456789abcdef","handler":"com.example.viewer","name":"report.pdf",\#
            "contentType":"com.adobe.pdf","contentTypes":["com.adobe.pdf","public.data","public.item"],\#
            "sourceApplication":"com.example.scanner","annotation":"{\"pages\": 3, \"note\": \"a \\\"b\\\"\\n\"}",\#
            "sourceHost":"ingest-1.example.org","sourceUID":1000,"object":"0123456789abcdef0123456789abcdef",\#
            "digest":"SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=","size":48213,"package":false,\#
            "arrivedAtUSec":1700000000123456}
            """#)
    }

    static var variants: [ClusterDelivery] {
        var minimal = sample
        minimal.sourceApp = nil
        minimal.annotation = nil
        minimal.isPackage = true
        minimal.contentTypes = [minimal.contentType]
        minimal.size = 0
        minimal.sourceUID = 0
        minimal.arrivedAtUSec = 0
        var quoted = sample
        quoted.name = "Bericht \"Q3\" — ünïcödé 😀 \\ back.pdf"
        var wide = sample
        wide.contentType = "dyn.mime.application.x-foo!bar"
        wide.contentTypes = [wide.contentType] + (1..<ClusterDelivery.maximumContentTypes).map { "t.\($0)" }
        wide.size = ClusterDelivery.maximumInteger
        wide.sourceUID = UInt32(ClusterDelivery.maximumUID)
        wide.handler = String(repeating: "h", count: 255)
        wide.sourceHost = String(repeating: "n", count: 253)
        wide.object = String(repeating: "o", count: 255)
        wide.name = String(repeating: "é", count: 100)
        // The largest annotation that escapes the most: every other byte a quote.
        var deep = sample
        deep.annotation = Array(("[" + String(repeating: "\"\\\"\",", count: MetadataLimits.annotationBytes / 5 - 1)
                                 + "1]").utf8)
        var nested = sample
        nested.annotation = Array((String(repeating: "[", count: JSON.maximumDepth)
                                   + String(repeating: "]", count: JSON.maximumDepth)).utf8)
        return [sample, minimal, quoted, wide, deep, nested]
    }

    @Test(arguments: variants)
    func roundTrip(_ delivery: ClusterDelivery) throws {
        let message = delivery.encode()
        #expect(message.count <= ClusterDelivery.maximumBytes)
        #expect(try ClusterDelivery.parse(message).get() == delivery)
    }

    @Test func theLargestAnnotationFits() throws {
        let annotation = try #require(Self.variants[4].annotation)
        #expect(annotation.count > MetadataLimits.annotationBytes - 8)
        #expect(annotation.count <= MetadataLimits.annotationBytes)
        #expect(JSON.validate(annotation) == nil)
    }

    @Test func orderWhitespaceEscapesAndUnknownMembers() throws {
        let text = #"""
             { "arrivedAtUSec" : 5, "package" : true, "size" : 7, "digest" : "\#(Self.emptyDigest)",
               "object" : "obj-1", "sourceUID" : 0, "sourceHost" : "h", "annotation" : null,
               "sourceApplication" : null, "contentTypes" : [ "public.data" ], "contentType" : "public.data",
               "n\u0061me" : "caf\u00e9", "handler" : "x", "deliveryID" : "ffffffffffffffffffffffffffffffff",
               "future" : { "nested" : [ [ [ ] ] ] }, "priority" : 3, "": null }
            """#
        let delivery = try ClusterDelivery.parse(Array(text.utf8)).get()
        #expect(delivery == ClusterDelivery(
            id: "ffffffffffffffffffffffffffffffff", handler: "x", name: "café", contentType: "public.data",
            contentTypes: ["public.data"], sourceHost: "h", sourceUID: 0, object: "obj-1",
            digest: try ObjectDigest.parse(Self.emptyDigest).get(), size: 7, isPackage: true, arrivedAtUSec: 5))
        #expect(delivery.sender == SenderMetadata())
    }

    /// A name is cleaned as a dropped file's is, when it is not refused.
    @Test(arguments: [
        ("report.pdf", "report.pdf"),
        (".hidden", "hidden"),
        ("...", "file"),
        ("tab\\tnew\\nline", "tab_new_line"),
        ("bell\\u0007\\u007f", "bell__"),
        ("\\ufffd.txt", "_.txt"),
        (String(repeating: "x", count: 251) + ".pdf", String(repeating: "x", count: 196) + ".pdf"),
        (String(repeating: "x", count: 55) + "." + String(repeating: "y", count: 199), String(repeating: "y", count: 199)),
    ])
    func nameIsCleaned(_ raw: String, cleaned: String) throws {
        let delivery = try ClusterDelivery.parse(Self.message(["name": "\"\(raw)\""])).get()
        #expect(delivery.name == cleaned)
        #expect(FileNames.sanitized(Array(delivery.name.utf8)) == delivery.name)
    }

    /// Bytes in, the refusal's sentence out; named by the sentence, so that no megabyte is printed.
    struct Hostile: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let member: String?
        let sentence: String
        init(_ bytes: [UInt8], _ member: String?, _ sentence: String) {
            self.bytes = bytes
            self.member = member
            self.sentence = sentence
        }
        init(_ changes: KeyValuePairs<String, String?>, _ member: String, _ sentence: String) {
            self.init(ClusterDeliveryTests.message(changes), member, sentence)
        }
        var testDescription: String { sentence }
    }

    static let tenMegabytes = Array(#"{"name":""#.utf8) + [UInt8](repeating: 0x61, count: 10 << 20) + Array(#""}"#.utf8)
    static let deepNesting = Array(#"{"name":"#.utf8) + [UInt8](repeating: UInt8(ascii: "["), count: 100)
        + [UInt8](repeating: UInt8(ascii: "]"), count: 100) + [UInt8(ascii: "}")]
    static let nameTwice = Array(String(decoding: message(), as: UTF8.self)
        .replacing(#""name":"report.pdf""#, with: #""name":"a","name":"b""#).utf8)
    static let padded = message(["padding": "\"" + String(repeating: " ", count: 160 * 1024) + "\""])
    static let digestOf16Bytes = "\"SHA-256=" + Base64URL.encode([UInt8](repeating: 7, count: 16)) + "\""
    static let digestOf33Bytes = "\"SHA-256=" + Base64URL.encode([UInt8](repeating: 7, count: 33)) + "\""

    @Test(arguments: [
        // The message as a whole
        Hostile(Array("hello".utf8), nil, "the message is not JSON: unexpected byte 0x68 at byte 0"),
        Hostile([], nil, "the message is not JSON: empty JSON text at byte 0"),
        Hostile([0x7B, 0xFF, 0x7D], nil, "the message is not JSON: unexpected byte 0xFF at byte 1"),
        Hostile(Array(#"{"name":""#.utf8) + [0xC3, 0x28, 0x22, 0x7D], nil, "the message is not JSON: invalid UTF-8 at byte 9"),
        Hostile(Array("[1]".utf8), nil, "the message is not a JSON object"),
        Hostile(Array("\"delivery\"".utf8), nil, "the message is not a JSON object"),
        Hostile(deepNesting, nil, "the message is not JSON: nesting deeper than 64 at byte 71"),
        Hostile(tenMegabytes, nil, "the message is 10485771 bytes, over the limit of 163840"),
        Hostile(padded, nil, "the message is \(padded.count) bytes, over the limit of 163840"),
        // name
        Hostile(["name": "\"" + String(repeating: "n", count: 300) + "\""], "name", "\"name\" is 300 bytes, over the limit of 255"),
        Hostile(["name": "\"" + String(repeating: "é", count: 128) + "\""], "name", "\"name\" is 256 bytes, over the limit of 255"),
        Hostile(["name": #""../../etc/passwd""#], "name", "\"name\" has a '/': a file name is not a path"),
        Hostile(["name": #""/etc/passwd""#], "name", "\"name\" has a '/': a file name is not a path"),
        Hostile(["name": #""a\/b""#], "name", "\"name\" has a '/': a file name is not a path"),
        Hostile(["name": #"".""#], "name", "\"name\" is '.', not a file name"),
        Hostile(["name": #""..""#], "name", "\"name\" is '..', not a file name"),
        Hostile(["name": #""""#], "name", "\"name\" is empty"),
        Hostile(["name": #""a\u0000b""#], "name", "\"name\" has a NUL byte"),
        Hostile(["name": "42"], "name", "\"name\" is a number, not a string"),
        Hostile(["name": "null"], "name", "\"name\" is null, not a string"),
        Hostile(["name": #"["a"]"#], "name", "\"name\" is an array, not a string"),
        Hostile(["name": nil], "name", "\"name\" is missing"),
        Hostile(["name": nil, "Name": #""report.pdf""#], "name", "\"name\" is missing"),
        Hostile(nameTwice, "name", "\"name\" appears twice"),
        // digest
        Hostile(["digest": #""SHA-256=!!!DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=""#], "digest",
                "\"digest\" is not base64url after SHA-256="),
        Hostile(["digest": #""SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=""#], "digest",
                "\"digest\" is not base64url after SHA-256="),
        Hostile(["digest": #""SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFV=""#], "digest",
                "\"digest\" is not base64url after SHA-256="),
        Hostile(["digest": #""SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU==""#], "digest",
                "\"digest\" is not base64url after SHA-256="),
        Hostile(["digest": #""SHA-256=""#], "digest", "\"digest\" is not base64url after SHA-256="),
        Hostile(["digest": digestOf16Bytes], "digest", "\"digest\" holds 16 bytes, not the 32 of a SHA-256 digest"),
        Hostile(["digest": digestOf33Bytes], "digest", "\"digest\" holds 33 bytes, not the 32 of a SHA-256 digest"),
        Hostile(["digest": #""sha-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=""#], "digest",
                "\"digest\" does not start with SHA-256="),
        Hostile(["digest": #""e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855""#], "digest",
                "\"digest\" does not start with SHA-256="),
        // size, sourceUID, arrivedAtUSec
        Hostile(["size": "-1"], "size", "\"size\" is not a size in bytes, a whole number from 0 to 9007199254740991"),
        Hostile(["size": "1e300"], "size", "\"size\" is not a size in bytes, a whole number from 0 to 9007199254740991"),
        Hostile(["size": "99999999999999999999"], "size",
                "\"size\" is not a size in bytes, a whole number from 0 to 9007199254740991"),
        Hostile(["size": "9007199254740992"], "size",
                "\"size\" is not a size in bytes, a whole number from 0 to 9007199254740991"),
        Hostile(["size": "1.5"], "size", "\"size\" is not a size in bytes, a whole number from 0 to 9007199254740991"),
        Hostile(["size": "1.0"], "size", "\"size\" is not a size in bytes, a whole number from 0 to 9007199254740991"),
        Hostile(["size": "-0"], "size", "\"size\" is not a size in bytes, a whole number from 0 to 9007199254740991"),
        Hostile(["size": #""12""#], "size", "\"size\" is a string, not a number"),
        Hostile(["size": nil], "size", "\"size\" is missing"),
        Hostile(["sourceUID": "4294967295"], "sourceUID", "\"sourceUID\" is not a uid, a whole number from 0 to 4294967294"),
        Hostile(["sourceUID": "true"], "sourceUID", "\"sourceUID\" is a boolean, not a number"),
        Hostile(["arrivedAtUSec": "-5"], "arrivedAtUSec",
                "\"arrivedAtUSec\" is not a time in microseconds, a whole number from 0 to 9007199254740991"),
        // sourceHost, object
        Hostile(["sourceHost": #""ingest\u0007host""#], "sourceHost", "\"sourceHost\" has a control character"),
        Hostile(["sourceHost": #""ingest\nhost""#], "sourceHost", "\"sourceHost\" has a control character"),
        Hostile(["sourceHost": #""ingest\u007fhost""#], "sourceHost", "\"sourceHost\" has a control character"),
        Hostile(["sourceHost": #""ingest host""#], "sourceHost", "\"sourceHost\" is not printable ASCII without spaces"),
        Hostile(["sourceHost": #""hôte""#], "sourceHost", "\"sourceHost\" is not printable ASCII without spaces"),
        Hostile(["sourceHost": "\"" + String(repeating: "h", count: 254) + "\""], "sourceHost",
                "\"sourceHost\" is 254 bytes, over the limit of 253"),
        Hostile(["sourceHost": #""""#], "sourceHost", "\"sourceHost\" is empty"),
        Hostile(["object": #""""#], "object", "\"object\" is empty"),
        Hostile(["object": "\"" + String(repeating: "o", count: 256) + "\""], "object",
                "\"object\" is 256 bytes, over the limit of 255"),
        // deliveryID, handler
        Hostile(["deliveryID": #""0123456789ABCDEF0123456789ABCDEF""#], "deliveryID",
                "\"deliveryID\" is not 32 lowercase hex digits"),
        Hostile(["deliveryID": #""0123456789abcdef""#], "deliveryID", "\"deliveryID\" is not 32 lowercase hex digits"),
        Hostile(["deliveryID": "7"], "deliveryID", "\"deliveryID\" is a number, not a string"),
        Hostile(["handler": #""com..example""#], "handler",
                "\"handler\" is not a handler identifier a subject can carry (letters, digits, '-', and dots between them, at most 255 bytes)"),
        Hostile(["handler": #""com.example.*""#], "handler",
                "\"handler\" is not a handler identifier a subject can carry (letters, digits, '-', and dots between them, at most 255 bytes)"),
        Hostile(["handler": #""com_example""#], "handler",
                "\"handler\" is not a handler identifier a subject can carry (letters, digits, '-', and dots between them, at most 255 bytes)"),
        Hostile(["handler": "\"" + String(repeating: "h", count: 256) + "\""], "handler",
                "\"handler\" is not a handler identifier a subject can carry (letters, digits, '-', and dots between them, at most 255 bytes)"),
        // contentType, contentTypes
        Hostile(["contentType": #""""#], "contentType",
                "\"contentType\" is not a type identifier (printable ASCII without spaces, at most 256 bytes)"),
        Hostile(["contentType": #""public data""#], "contentType",
                "\"contentType\" is not a type identifier (printable ASCII without spaces, at most 256 bytes)"),
        Hostile(["contentTypes": "[]"], "contentTypes", "\"contentTypes\" is empty"),
        Hostile(["contentTypes": "[" + (0...64).map { _ in #""com.adobe.pdf""# }.joined(separator: ",") + "]"],
                "contentTypes", "\"contentTypes\" has 65 entries, over the limit of 64"),
        Hostile(["contentTypes": #"["com.adobe.pdf", 1]"#], "contentTypes", "\"contentTypes\" has a number among its strings"),
        Hostile(["contentTypes": #"["com.adobe.pdf", "public data"]"#], "contentTypes",
                "\"contentTypes\" has an entry that is not a type identifier"),
        Hostile(["contentTypes": #"["public.data", "com.adobe.pdf"]"#], "contentTypes",
                "\"contentTypes\" does not start with \"contentType\""),
        Hostile(["contentTypes": #"{"0": "com.adobe.pdf"}"#], "contentTypes", "\"contentTypes\" is an object, not an array"),
        // sourceApplication, annotation
        Hostile(["sourceApplication": #""com example""#], "sourceApplication",
                "\"sourceApplication\" is not a source application (printable ASCII without spaces, at most 256 bytes)"),
        Hostile(["sourceApplication": "12"], "sourceApplication", "\"sourceApplication\" is a number, not a string"),
        Hostile(["annotation": #""{""#], "annotation", "\"annotation\" does not hold JSON: unexpected end of input at byte 1"),
        Hostile(["annotation": #"{"pages": 3}"#], "annotation", "\"annotation\" is an object, not a string"),
        Hostile(["annotation": "\"" + String(repeating: "1", count: 65537) + "\""], "annotation",
                "\"annotation\" is 65537 bytes, over the limit of 65536"),
        // package
        Hostile(["package": #""yes""#], "package", "\"package\" is a string, not true or false"),
        Hostile(["package": nil], "package", "\"package\" is missing"),
    ])
    func refused(_ hostile: Hostile) {
        guard case .failure(let error) = ClusterDelivery.parse(hostile.bytes) else {
            Issue.record("accepted: \(hostile.sentence)")
            return
        }
        #expect(error.message == hostile.sentence)
        #expect(error.member == hostile.member)
    }

    @Test(arguments: [
        (Array("f".utf8), "Zg==", "Zg"), (Array("fo".utf8), "Zm8=", "Zm8"),
        (Array("foo".utf8), "Zm9v", nil), (Array("foob".utf8), "Zm9vYg==", "Zm9vYg"), (Array("fooba".utf8), "Zm9vYmE=", nil),
        (Array("foobar".utf8), "Zm9vYmFy", nil), ([0xFB, 0xFF], "-_8=", "-_8"),
    ] as [([UInt8], String, String?)])
    func base64url(_ bytes: [UInt8], padded: String, unpadded: String?) {
        #expect(Base64URL.encode([]) == "")
        #expect(Base64URL.encode(bytes) == padded)
        #expect(Base64URL.decode(padded.utf8) == bytes)
        if let unpadded { #expect(Base64URL.decode(unpadded.utf8) == bytes) }
    }

    @Test(arguments: ["", "Z", "Zh==", "Zm9=", "Zm8==", "Zg=", "Zg===", "Z===", "Zm+v", "Zm/v", "Zm9v\n", "=Zg="])
    func notBase64url(_ text: String) {
        #expect(Base64URL.decode(text.utf8) == nil)
    }

    @Test func digest() throws {
        let digest = try ObjectDigest.parse(Self.emptyDigest).get()
        #expect(digest.bytes.prefix(4) == [0xE3, 0xB0, 0xC4, 0x42])
        #expect(digest.description == Self.emptyDigest)
        #expect(try ObjectDigest.parse(String(Self.emptyDigest.dropLast())).get() == digest)
        #expect(ObjectDigest(sha256: [UInt8](repeating: 0, count: 31)) == nil)
    }
}

extension ClusterDeliveryTests {
    /// The fuzz target's seeds (Tests/Fuzz/Corpus/cluster-delivery) cover both ends: those named refused-* are
    /// refused, the others read.
    @Test(arguments: FuzzCorpus.seeds(["cluster-delivery"]))
    func seed(_ seed: FuzzCorpus.Seed) {
        let result = ClusterDelivery.parse(seed.bytes)
        if seed.name.hasPrefix("refused-") {
            #expect(throws: ClusterDeliveryError.self) { try result.get() }
        } else {
            #expect(throws: Never.self) { try result.get() }
        }
    }
}
