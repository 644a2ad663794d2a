import Testing
@testable import InboxCore

@Suite("Sidecar metadata")
struct SidecarTests {
    @Test func documentAndParseRoundTrip() {
        let metadata = SenderMetadata(sourceApp: "com.example.mail", annotation: Array(#"{"n": 12345678901234567890, "s": "\u00e9"}"#.utf8),
                                      contentType: "public.png")
        let document = Sidecar.document(metadata)
        #expect(String(decoding: document, as: UTF8.self)
                == #"{"source-app":"com.example.mail","annotation":{"n": 12345678901234567890, "s": "\u00e9"},"content-type":"public.png"}"# + "\n")
        let (parsed, problems) = Sidecar.parse(document)
        #expect(problems.isEmpty)
        // The annotation comes back exactly as written: no number is rounded, no escape rewritten.
        #expect(parsed == metadata)
    }

    @Test func emptyMetadataIsAnEmptyObject() {
        #expect(Sidecar.document(SenderMetadata()) == Array("{}\n".utf8))
        #expect(Sidecar.parse(Array("{}".utf8)) == (SenderMetadata(), []))
    }

    @Test func badValuesAreLeftOutEachWithItsReason() {
        let text = #"{"source-app": "has space", "annotation": [1, 2], "content-type": 7, "extra": null}"#
        let (parsed, problems) = Sidecar.parse(Array(text.utf8))
        #expect(parsed == SenderMetadata(annotation: Array("[1, 2]".utf8)))
        #expect(problems == ["'source-app' is not a valid source application",
                             "'content-type' is not a string of 1 to 256 bytes", "unknown key 'extra'"])
    }

    @Test(arguments: [
        ("", "it is not valid JSON: empty JSON text at byte 0"),
        ("[1]", "it is not a JSON object"),
        (#"{"annotation": }"#, "it is not valid JSON: unexpected byte 0x7D at byte 15"),
    ])
    func documentsThatAreNotObjectsGiveNothing(text: String, problem: String) {
        #expect(Sidecar.parse(Array(text.utf8)) == (SenderMetadata(), [problem]))
    }

    @Test func limits() {
        let big = Array("{\"annotation\":\"".utf8) + Array(repeating: UInt8(ascii: "x"), count: MetadataLimits.annotationBytes)
            + Array("\"}".utf8)
        #expect(Sidecar.parse(big).problems == ["'annotation' is 65538 bytes, over the limit of 65536"])
        let huge = [UInt8](repeating: 0x20, count: Sidecar.maximumBytes + 1)
        #expect(Sidecar.parse(huge).problems == ["it is \(Sidecar.maximumBytes + 1) bytes, over the limit of \(Sidecar.maximumBytes)"])
    }

    @Test func names() {
        #expect(Sidecar.name(for: Array("photo.png".utf8)) == Array(".photo.png.inbox-meta".utf8))
        #expect(Sidecar.fileName(ofSidecar: Array(".photo.png.inbox-meta".utf8)) == Array("photo.png".utf8))
        #expect(Sidecar.fileName(ofSidecar: [0x2E, 0xFF] + Array(".inbox-meta".utf8)) == [0xFF])
        #expect(Sidecar.fileName(ofSidecar: Array("photo.png.inbox-meta".utf8)) == nil)
        #expect(Sidecar.fileName(ofSidecar: Array("..inbox-meta".utf8)) == nil)
    }

    @Test func membersKeepRawValues() throws {
        let members = try #require(try JSON.members(Array(#" { "a" : 1.50 , "b\u0041":{"x":[ ]} } "#.utf8)).get())
        #expect(members.map(\.key) == ["a", "bA"])
        #expect(members.map { String(decoding: $0.raw, as: UTF8.self) } == ["1.50", #"{"x":[ ]}"#])
    }
}

@Suite("Path names")
struct PathNameTests {
    @Test(arguments: [("/a/b.png", "b.png", "/a"), ("/b.png", "b.png", "/"), ("b.png", "b.png", "."),
                      ("dir/b.png", "b.png", "dir"), ("/", "/", "/")])
    func components(path: String, name: String, parent: String) {
        #expect(lastPathComponent(path) == name)
        #expect(parentPath(path) == parent)
    }
}
