import Foundation
import Testing

/// `inboxctl send` into an Inbox on the state directory's mount: the agent moves the very inode on, takes a read lease
/// on it before its handler starts, and refuses a copy its sender still holds open for writing. So inboxctl closes
/// the file before it renames it into place: no send of its own is ever withdrawn as tampered with.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct SendByInodeTests {
    @Test func filesSentWithInboxctlAreNeverHeldOpenAtTheRename() throws {
        let world = try AgentHarness()
        let handler = "test.send-inode.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        try world.start()
        let source = world.root.appendingPathComponent("note.txt")
        try Data("a note\n".utf8).write(to: source)
        let count = 40
        for _ in 0..<count {
            let sent = try world.inboxctl("send", [source.path])
            #expect(sent.status == 0, "\(sent.stderr)")
        }
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"], count: count)
        let withdrawn = Journal.entries(["_PID=\(world.pid)", "INBOX_EVENT=rejected"])
        #expect(withdrawn.isEmpty, "\(withdrawn.compactMap { $0["MESSAGE"] as? String })")
    }
}
