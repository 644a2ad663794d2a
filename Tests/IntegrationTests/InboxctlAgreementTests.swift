import Foundation
import Testing

/// inboxctl and the running agent decide the same type, source and handler for the same file.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxctlAgreementTests {
    @Test func infoAgreesWithTheAgent() throws {
        let world = try AgentHarness()
        let owner = "test.z-image-owner.\(world.tag)", png = "test.a-png.\(world.tag)"
        try world.register(owner, contentTypes: "public.image", rank: "Owner")
        try world.register(png, contentTypes: "public.png", rank: "Default")
        try world.start()
        let options = ["--inbox", world.inbox.path, "--handlers", world.handlers.path, "--state", world.state.path,
                       "--runtime-dir", world.runtime.path, "--defaults", world.root.appendingPathComponent("defaults.conf").path]

        // One named by its extension, one without a name that says anything (typed by its content).
        let files: [(name: String, bytes: [UInt8])] = [("agree.png", pngBytes(width: 3, height: 3)),
                                                      ("agree-picture", pngBytes(width: 4, height: 4))]
        let outside = world.root.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        for (index, file) in files.enumerated() {
            let copy = outside.appendingPathComponent(file.name)
            try Data(file.bytes).write(to: copy)
            let result = try run(Binaries.inboxctl.path, ["info", "--json", copy.path] + options)
            #expect(result.status == 0, "\(result.stderr)")
            let report = try #require((try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])?.first)

            try world.drop(file.name, contents: file.bytes)
            let finished = try #require(try world.waitForEvents("finished", count: index + 1)
                .first { ($0[field: "INBOX_FILE"] ?? "").hasSuffix("/" + file.name) })
            #expect(finished[field: "INBOX_CONTENT_TYPE"] == report["contentType"] as? String)
            #expect(finished[field: "INBOX_TYPE_SOURCE"] == report["typeSource"] as? String)
            #expect(finished[field: "INBOX_HANDLER"] == report["chosen"] as? String)
            #expect(finished[field: "INBOX_HANDLER"] == owner)
        }
    }
}
