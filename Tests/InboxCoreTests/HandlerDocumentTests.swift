import Testing
@testable import InboxCore

@Suite("What a handler is told: environment and stdin")
struct HandlerDocumentTests {
    static func metadata(sourceApp: String? = "com.example.sender", sourceUID: UInt32? = 1000,
                         annotation: [UInt8]? = Array("{\"page\": 3}".utf8)) -> Delivery {
        Delivery(id: "d-42", handler: "com.example.viewer", name: "My \"Photo\".png",
                 path: "/var/lib/inboxd/containers/v/Inbox/My \"Photo\".png",
                 documents: "/var/lib/inboxd/containers/v/Documents", contentType: "public.png",
                 contentTypes: ["public.png", "public.image", "public.data", "public.content", "public.item"],
                 sender: SenderMetadata(sourceApp: sourceApp, annotation: annotation), sourceUID: sourceUID, attempt: 2)
    }

    @Test func fullEnvironment() {
        #expect(Self.metadata().environment() == [
            "INBOX_FILE=/var/lib/inboxd/containers/v/Inbox/My \"Photo\".png",
            "INBOX_URL=file:///var/lib/inboxd/containers/v/Inbox/My%20%22Photo%22.png",
            "INBOX_NAME=My \"Photo\".png",
            "INBOX_CONTENT_TYPE=public.png",
            "INBOX_CONTENT_TYPES=public.png public.image public.data public.content public.item",
            "INBOX_SOURCE_APP=com.example.sender",
            "INBOX_SOURCE_UID=1000",
            "INBOX_ANNOTATION={\"page\": 3}",
            "INBOX_DELIVERY_ID=d-42",
            "INBOX_ATTEMPT=2",
            "INBOX_DOCUMENTS=/var/lib/inboxd/containers/v/Documents",
            "INBOX_HANDLER=com.example.viewer",
        ])
    }

    static func keys(_ environment: [String]) -> [String] {
        environment.map { String($0.prefix { $0 != "=" }) }
    }

    @Test func absentValuesAreOmitted() {
        let keys = Self.keys(Self.metadata(sourceApp: nil, sourceUID: nil, annotation: nil).environment())
        #expect(keys == ["INBOX_FILE", "INBOX_URL", "INBOX_NAME", "INBOX_CONTENT_TYPE", "INBOX_CONTENT_TYPES",
                         "INBOX_DELIVERY_ID", "INBOX_ATTEMPT", "INBOX_DOCUMENTS", "INBOX_HANDLER"])
    }

    static func annotation(ofSize size: Int) -> [UInt8] {
        Array(("\"" + String(repeating: "x", count: size - 2) + "\"").utf8)
    }

    @Test(arguments: [
        (16 * 1024, true), (16 * 1024 + 1, false), (64 * 1024, false),
    ])
    func annotationInEnvironmentOnlyWhenSmall(_ size: Int, _ inEnvironment: Bool) {
        let metadata = Self.metadata(annotation: Self.annotation(ofSize: size))
        #expect(Self.keys(metadata.environment()).contains("INBOX_ANNOTATION") == inEnvironment)
        let document = metadata.stdinDocument()
        #expect(JSON.validate(document) == nil)
        #expect(document.count > size, "stdin always carries the whole annotation")
    }

    @Test func stdinDocumentContents() {
        let expected = "{\"file\":\"/var/lib/inboxd/containers/v/Inbox/My \\\"Photo\\\".png\","
            + "\"url\":\"file:///var/lib/inboxd/containers/v/Inbox/My%20%22Photo%22.png\","
            + "\"name\":\"My \\\"Photo\\\".png\",\"package\":false,\"contentType\":\"public.png\","
            + "\"contentTypes\":[\"public.png\",\"public.image\",\"public.data\",\"public.content\",\"public.item\"],"
            + "\"sourceApplication\":\"com.example.sender\",\"sourceUID\":1000,\"sourceHost\":null,"
            + "\"annotation\":{\"page\": 3},"
            + "\"deliveryID\":\"d-42\",\"attempt\":2,\"redelivered\":false,\"documents\":\"/var/lib/inboxd/containers/v/Documents\","
            + "\"handler\":\"com.example.viewer\"}\n"
        let document = Self.metadata().stdinDocument()
        #expect(String(decoding: document, as: UTF8.self) == expected)
        #expect(JSON.validate(document) == nil)
    }

    @Test func aRedeliveryAfterACrashSaysSo() {
        var metadata = Self.metadata()
        metadata.attempt = 3
        metadata.redelivered = true
        #expect(metadata.environment() == [
            "INBOX_FILE=/var/lib/inboxd/containers/v/Inbox/My \"Photo\".png",
            "INBOX_URL=file:///var/lib/inboxd/containers/v/Inbox/My%20%22Photo%22.png",
            "INBOX_NAME=My \"Photo\".png",
            "INBOX_CONTENT_TYPE=public.png",
            "INBOX_CONTENT_TYPES=public.png public.image public.data public.content public.item",
            "INBOX_SOURCE_APP=com.example.sender",
            "INBOX_SOURCE_UID=1000",
            "INBOX_ANNOTATION={\"page\": 3}",
            "INBOX_DELIVERY_ID=d-42",
            "INBOX_ATTEMPT=3",
            "INBOX_REDELIVERED=1",
            "INBOX_DOCUMENTS=/var/lib/inboxd/containers/v/Documents",
            "INBOX_HANDLER=com.example.viewer",
        ])
        let document = metadata.stdinDocument()
        #expect(String(decoding: document, as: UTF8.self)
            .contains(#""deliveryID":"d-42","attempt":3,"redelivered":true,"documents":"#))
        #expect(JSON.validate(document) == nil)
    }

    /// A package (a directory delivered whole) is named like a file, by its path and URL without a trailing slash,
    /// and said to be one: INBOX_PACKAGE=1 after INBOX_NAME, "package":true after "name".
    @Test func aPackageIsNamedLikeAFileAndSaysSo() {
        var package = Delivery(id: "d-7", handler: "com.example.editor", name: "Report 2.rtfd",
                               path: "/var/lib/inboxd/containers/e/Inbox/Report 2.rtfd",
                               documents: "/var/lib/inboxd/containers/e/Documents", contentType: "com.apple.rtfd",
                               contentTypes: ["com.apple.rtfd", "com.apple.package", "public.directory", "public.item"],
                               attempt: 1)
        package.isPackage = true
        #expect(Array(package.environment().prefix(5)) == [
            "INBOX_FILE=/var/lib/inboxd/containers/e/Inbox/Report 2.rtfd",
            "INBOX_URL=file:///var/lib/inboxd/containers/e/Inbox/Report%202.rtfd",
            "INBOX_NAME=Report 2.rtfd",
            "INBOX_PACKAGE=1",
            "INBOX_CONTENT_TYPE=com.apple.rtfd",
        ])
        let document = package.stdinDocument()
        #expect(String(decoding: document, as: UTF8.self).hasPrefix(
            #"{"file":"/var/lib/inboxd/containers/e/Inbox/Report 2.rtfd","#
            + #""url":"file:///var/lib/inboxd/containers/e/Inbox/Report%202.rtfd","name":"Report 2.rtfd","package":true,"#))
        #expect(JSON.validate(document) == nil)
        // Inside a batch's array too; a file of the same batch says false.
        let batch = String(decoding: Delivery.batchDocument([package, Self.metadata()]), as: UTF8.self)
        #expect(batch.contains(#""name":"Report 2.rtfd","package":true,"#))
        #expect(batch.contains(#""name":"My \"Photo\".png","package":false,"#))
        #expect(!Self.keys(Self.metadata().environment()).contains("INBOX_PACKAGE"))
    }

    @Test func stdinDocumentUsesNullForAbsentValues() {
        let document = String(decoding: Self.metadata(sourceApp: nil, sourceUID: nil, annotation: nil).stdinDocument(),
                              as: UTF8.self)
        #expect(document.contains("\"sourceApplication\":null,\"sourceUID\":null,\"sourceHost\":null,\"annotation\":null,"))
        #expect(JSON.validate(bytes(document)) == nil)
    }

    @Test(arguments: [[UInt8]("{broken".utf8), [0xFF, 0xFE], []])
    func invalidAnnotationIsTreatedAsAbsent(_ annotation: [UInt8]) {
        let metadata = Self.metadata(annotation: annotation)
        #expect(!Self.keys(metadata.environment()).contains("INBOX_ANNOTATION"))
        #expect(JSON.validate(metadata.stdinDocument()) == nil)
    }

    @Test func controlCharactersInNamesStayValidJSON() {
        var metadata = Self.metadata()
        metadata.name = "tab\there\u{1}\n"
        metadata.path = "/i/tab\there\u{1}\n"
        #expect(JSON.validate(metadata.stdinDocument()) == nil)
    }

    @Test(arguments: [
        ("com.example.sender", true), ("org.mozilla.firefox/2", true), ("", false), ("has space", false),
        ("tab\tin", false), ("caf\u{E9}", false), ("nul\u{0}", false), (String(repeating: "a", count: 256), true),
        (String(repeating: "a", count: 257), false),
    ])
    func sourceApplication(_ text: String, _ valid: Bool) {
        #expect(SourceApplication.isValid(text) == valid)
    }

    @Test func aPreviewAddsItsTitleAndPlace() {
        var metadata = Self.metadata(annotation: nil)
        metadata.preview = Delivery.Preview(title: "Holiday \"2026\"", index: 2, count: 3)
        #expect(Array(metadata.environment().suffix(4)) == ["INBOX_PREVIEW=1", "INBOX_TITLE=Holiday \"2026\"",
                                                            "INBOX_PREVIEW_INDEX=2", "INBOX_PREVIEW_COUNT=3"])
        let stdin = String(decoding: metadata.stdinDocument(), as: UTF8.self)
        #expect(stdin.hasSuffix(#","handler":"com.example.viewer","preview":{"title":"Holiday \"2026\"","index":2,"count":3}}"#
                                + "\n"))
        #expect(!String(decoding: Self.metadata().stdinDocument(), as: UTF8.self).contains("preview"))
    }
}
