import Foundation
import Testing

/// The repository's example registrations and programs, installed with scripts/example-handlers.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct ExampleHandlersTests {
    /// The package directory: this file is Tests/IntegrationTests/<name>.swift.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Runs scripts/example-handlers into the world and starts the agent on its handlers.d.
    private func startWithExamples(_ world: AgentHarness) throws {
        let examples = world.root.appendingPathComponent("examples")
        let result = try run(Self.repository.appendingPathComponent("scripts/example-handlers").path, [examples.path])
        #expect(result.status == 0, "scripts/example-handlers failed: \(result.stderr)")
        try world.start(["--handlers", examples.appendingPathComponent("handlers.d").path])
    }

    @Test func theImageViewerLogsTheDimensionsAndSender() throws {
        let world = try AgentHarness()
        try startWithExamples(world)
        let name = "holiday-\(world.tag).png"
        try world.drop(name, contents: pngBytes(width: 3, height: 2),
                       attributes: ["user.inbox.source-app": "com.example.mail",
                                    "user.inbox.annotation": #"{"subject":"Holiday"}"#])

        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == "com.example.image-viewer")
        var line: String?
        try waitUntil("the image viewer logged \(name)") {
            line = Journal.entries(["SYSLOG_IDENTIFIER=com.example.image-viewer"])
                .compactMap { $0[field: "MESSAGE"] }.first { $0.contains(name) }
            return line != nil
        }
        let message = try #require(line)
        #expect(message.contains("3x2"))
        #expect(message.contains("com.example.mail"))
        #expect(message.contains("public.png"))
        #expect(message.contains(#"{"subject":"Holiday"}"#))
    }

    @Test func theProfileViewerKeepsItsCopyInDocuments() throws {
        let world = try AgentHarness()
        try startWithExamples(world)
        let name = "profile-\(world.tag).customprofile"
        try world.drop(name, contents: Array("<profile id=\"3F2A\"/>".utf8))

        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == "com.example.profile-viewer")
        #expect(finished.first?[field: "INBOX_CONTENT_TYPE"] == "com.example.customprofile")
        let container = world.state.appendingPathComponent("containers/com.example.profile-viewer")
        let kept = container.appendingPathComponent("Documents/\(name)")
        #expect(try String(contentsOf: kept, encoding: .utf8) == "<profile id=\"3F2A\"/>")
        #expect(world.contents(of: container.appendingPathComponent("Inbox")).isEmpty)
    }

    /// The two resident examples, as scripts/example-handlers installs them: each keeps a checksum line per file.
    @Test func theResidentExamplesKeepAChecksumPerFile() throws {
        let world = try AgentHarness()
        try startWithExamples(world)
        try world.drop("note-\(world.tag).txt", contents: Array("hello\n".utf8))
        try world.drop("data-\(world.tag).json", contents: Array("{\"a\":1}".utf8))
        let finished = try world.waitForEvents("finished", count: 2)
        #expect(Set(finished.compactMap { $0[field: "INBOX_HANDLER"] })
                == ["com.example.text-checksum", "com.example.checksum"])
        for (handler, name, line) in [("com.example.text-checksum", "note-\(world.tag).txt", "6\t363a3020"),
                                      ("com.example.checksum", "data-\(world.tag).json", "7\t561bacaf")] {
            let container = world.state.appendingPathComponent("containers/\(handler)")
            let kept = try String(contentsOf: container.appendingPathComponent("Documents/checksums.tsv"), encoding: .utf8)
            #expect(kept.hasSuffix("\t\(name)\t\(line)\n"), "\(handler): \(kept)")
            #expect(world.contents(of: container.appendingPathComponent("Inbox")).isEmpty)
        }
    }
}
