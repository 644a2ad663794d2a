import Foundation
import Testing

/// A drop Inbox on another filesystem than the state directory: rename(2) says EXDEV, the agent copies.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: getuid() == 0, "mounting a tmpfs for the Inbox needs root"))
struct CrossDeviceTests {
    @Test func aFileOnAnotherFilesystemIsCopiedWithItsMetadataAndRemoved() throws {
        let world = try AgentHarness()
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m,mode=1733", "tmpfs", world.inbox.path]).status == 0)
        defer {
            world.stop()
            _ = try? run("/bin/umount", [world.inbox.path])
        }
        let handler = "test.xdev.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        try world.start()
        let annotation = #"{"from":"tmpfs"}"#
        try world.drop("far.txt", contents: Array("across".utf8),
                       attributes: ["user.inbox.source-app": "com.example.far", "user.inbox.annotation": annotation])
        let finished = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        #expect(finished.first?["INBOX_SOURCE_APP"] as? String == "com.example.far")
        let record = try #require(world.recordings().values.first)
        #expect(record.contains("INBOX_ANNOTATION=\(annotation)"))
        #expect(record.contains("INBOX_NAME=far.txt"))
        #expect(world.contents(of: world.inbox).isEmpty)
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)

        // Without a handler the copy is kept in unhandled/, attributes and all.
        try world.drop("far.unknownkind", contents: [0x00, 0x9F, 0x13, 0xFE, 0x37, 0x00, 0x80], attributes: ["user.inbox.source-app": "com.example.far"])
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=unhandled"])
        #expect(world.contents(of: world.unhandledDirectory) == ["far.unknownkind"])
        #expect(attribute("user.inbox.source-app", of: world.unhandledDirectory.appendingPathComponent("far.unknownkind"))
                == "com.example.far")
        #expect(attribute("user.inboxd.delivery", of: world.unhandledDirectory.appendingPathComponent("far.unknownkind")) != nil)
        #expect(world.contents(of: world.inbox).isEmpty)
    }
}
