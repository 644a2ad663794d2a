import Foundation
import Testing

/// What rides with a file (annotation, source application, its name) when the sender got it wrong.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct MetadataTests {
    @Test func anInvalidAnnotationIsReportedAndLeftOut() throws {
        let world = try AgentHarness()
        let handler = "test.annotation.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        try world.start()

        try world.drop("bad-annotation.txt", contents: Array("text".utf8),
                       attributes: ["user.inbox.annotation": #"{"subject": "unterminated"#,
                                    "user.inbox.source-app": "com.example.mail"])
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == handler)
        let path = world.inbox.appendingPathComponent("bad-annotation.txt").path
        let warnings = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_FILE=\(path)", "PRIORITY=4"])
        #expect(warnings.first?[field: "MESSAGE"]?.contains("bad-annotation.txt") == true)
        #expect(warnings.first?[field: "MESSAGE"]?.contains("JSON") == true)

        let record = try #require(world.recordings().values.first)
        #expect(!record.contains("INBOX_ANNOTATION="))
        #expect(record.contains(#""annotation":null"#))
        // The rest of the metadata still travels.
        #expect(record.contains("INBOX_SOURCE_APP=com.example.mail"))
    }

    @Test func aHiddenNameWaitsUntilItIsRenamed() throws {
        let world = try AgentHarness()
        try world.register("test.hidden.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()

        // Written in place under a hidden name: complete, closed, and still not an arrival.
        let hidden = world.inbox.appendingPathComponent(".x.txt")
        try Data("in progress".utf8).write(to: hidden)
        // A later visible file is handled; by then the hidden one would have been too.
        try world.drop("marker.txt", contents: Array("marker".utf8))
        try world.waitForEvents("finished")
        #expect(world.contents(of: world.inbox) == [".x.txt"])
        #expect(world.recordings().count == 1)
        #expect(world.recordings().values.first?.contains("INBOX_NAME=marker.txt") == true)

        #expect(rename(hidden.path, world.inbox.appendingPathComponent("x.txt").path) == 0)
        let finished = try world.waitForEvents("finished", count: 2)
        #expect(finished.last?[field: "INBOX_FILE"]?.hasSuffix("/x.txt") == true)
        #expect(world.recordings().values.contains { $0.contains("INBOX_NAME=x.txt") })
        #expect(world.contents(of: world.inbox).isEmpty)
    }

    @Test func aNameWithControlCharactersAndInvalidUTF8IsSanitized() throws {
        let world = try AgentHarness()
        let handler = "test.names.\(world.tag)"
        let reader = try world.script("read-handler", """
            printf '%s' "$INBOX_NAME" > "$OUTPUT_DIR/name.tmp" && mv "$OUTPUT_DIR/name.tmp" "$OUTPUT_DIR/name"
            cat "$1" > "$OUTPUT_DIR/content.tmp" && mv "$OUTPUT_DIR/content.tmp" "$OUTPUT_DIR/content"
            """)
        try world.register(handler, exec: "\(reader.path) %f", contentTypes: "public.plain-text")
        try world.start()

        let rawName = Array("bad\nname".utf8) + [0xFF, 0x01] + Array(".txt".utf8)
        try world.drop(rawName: rawName, contents: Array("readable".utf8))
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == handler)
        let file = try #require(finished.first?[field: "INBOX_FILE"], "INBOX_FILE is not plain text")
        #expect(!file.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{FFFD}" })

        try waitUntil("the handler wrote what it read") {
            FileManager.default.fileExists(atPath: world.output.appendingPathComponent("content").path)
        }
        let nameBytes = try [UInt8](Data(contentsOf: world.output.appendingPathComponent("name")))
        let name = try #require(String(validating: nameBytes, as: UTF8.self), "INBOX_NAME is not valid UTF-8")
        #expect(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "\u{FFFD}" },
                "INBOX_NAME \(name.debugDescription) has control characters")
        #expect(name.hasPrefix("bad") && name.hasSuffix(".txt"))
        #expect(file.hasSuffix("/" + name))
        #expect(try String(contentsOf: world.output.appendingPathComponent("content"), encoding: .utf8) == "readable")
        #expect(world.contents(of: world.inbox).isEmpty)
    }

    @Test(arguments: ["com.example mail", "com.example\u{7}mail"])
    func aSourceAppWithASpaceOrControlCharacterIsIgnored(sourceApp: String) throws {
        let world = try AgentHarness()
        try world.register("test.source.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()

        try world.drop("from-nowhere.txt", contents: Array("text".utf8), attributes: ["user.inbox.source-app": sourceApp])
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_SOURCE_APP"] == nil)
        let path = world.inbox.appendingPathComponent("from-nowhere.txt").path
        let warnings = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_FILE=\(path)", "PRIORITY=4"])
        #expect(warnings.first?[field: "MESSAGE"]?.contains("source application") == true)
        let record = try #require(world.recordings().values.first)
        #expect(!record.contains("INBOX_SOURCE_APP="))
        #expect(record.contains(#""sourceApplication":null"#))
    }
}
