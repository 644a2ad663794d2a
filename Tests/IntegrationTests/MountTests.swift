import Foundation
import Testing

/// A drop Inbox on another mount than the state directory, on the same filesystem: a bind mount, as a unit's
/// ReadWritePaths= makes. st_dev is the same, but rename(2) says EXDEV: the agent says so at start-up (one warning per
/// Inbox, and in status.json and `inboxctl status`), and what cannot be moved aside there is left in place, counted by
/// `inboxctl status`, listed by `inboxctl list failed`, and logged once across restarts.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: getuid() == 0, "a bind mount for the Inbox needs root"))
struct MountTests {
    /// The agent's "Watching N inboxes" entry, once its start-up is done.
    static let started = "MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5d"

    /// Binds the world's Inbox onto itself: a mount of its own on the same filesystem.
    func bindInbox(_ world: AgentHarness) throws {
        #expect(try run("/bin/mount", ["--bind", world.inbox.path, world.inbox.path]).status == 0)
        #expect(try device(world.inbox) == device(world.state), "a bind mount keeps st_dev")
    }

    func device(_ url: URL) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: url.path)[.systemNumber] as? NSNumber).uint64Value
    }

    func statusJSON(_ world: AgentHarness) throws -> [String: Any] {
        let data = try Data(contentsOf: world.runtime.appendingPathComponent("status.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func mountWarnings(_ world: AgentHarness) -> [[String: Any]] {
        Journal.entries(["_PID=\(world.pid)", "INBOX_INBOX=\(world.inbox.path)", "INBOX_REASON=another mount"])
    }

    @Test func anInboxOnAnotherMountIsReportedAtStartUp() throws {
        let world = try AgentHarness()
        // One mount for both first: not a word.
        try world.start()
        _ = try Journal.wait(for: ["_PID=\(world.pid)", Self.started])
        #expect(mountWarnings(world).isEmpty)
        #expect(try statusJSON(world)["crossMountInboxes"] as? [String] == [])
        world.stop()

        try bindInbox(world)
        defer {
            world.stop()
            _ = try? run("/bin/umount", [world.inbox.path])
        }
        try world.start()
        _ = try Journal.wait(for: ["_PID=\(world.pid)", Self.started])
        let warnings = mountWarnings(world)
        #expect(warnings.count == 1)
        let message = try #require(warnings.first?["MESSAGE"] as? String)
        #expect(message.hasPrefix("Inbox \(world.inbox.path) is on another mount than the state directory \(world.state.path)"))
        #expect(message.contains("every file is copied instead of moved by inode"))
        #expect(message.contains("cannot be moved aside"))
        #expect(warnings.first?["PRIORITY"] as? String == "4")
        #expect(try statusJSON(world)["crossMountInboxes"] as? [String] == [world.inbox.path])
        let status = try world.inboxctl("status", ["--runtime-dir", world.runtime.path])
        #expect(status.stdout.contains("Warning:        \(world.inbox.path) is on another mount than \(world.state.path)"))
    }

    @Test func anEntryLeftInPlaceIsShownAndLoggedOnce() throws {
        let world = try AgentHarness()
        try bindInbox(world)
        defer {
            world.stop()
            _ = try? run("/bin/umount", [world.inbox.path])
        }
        try world.start()
        let link = world.inbox.appendingPathComponent("link.png")
        #expect(symlink("/etc/hostname", link.path) == 0)
        let left = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_FILE=\(link.path)", "INBOX_FILE_KIND=symbolic link"])
        let message = try #require(left.first?["MESSAGE"] as? String)
        #expect(message.hasPrefix("Left symbolic link \(link.path) in place: cannot move it aside"))
        try waitUntil("status.json counts it") { (try? self.statusJSON(world)["leftInPlace"] as? Int) == 1 }
        let status = try world.inboxctl("status", ["--runtime-dir", world.runtime.path])
        #expect(status.stdout.contains("Left in place:  1 (cannot be moved aside: inboxctl list failed)"))
        let list = try world.inboxctl("list", ["failed"])
        #expect(list.stdout.contains("Left in place, not moved aside: 1 entry"))
        #expect(list.stdout.contains(link.path))
        #expect(list.stdout.contains("symbolic link"))
        #expect(list.stdout.contains("is on another mount than \(world.state.path)"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(world.inboxctl("list", ["failed", "--json"]).stdout.utf8))
            as? [String: Any])
        let entries = try #require(json["leftInPlace"] as? [[String: Any]])
        #expect(entries.map { $0["path"] as? String } == [link.path])

        // The next start finds it in its rescan, known: counted, not logged again.
        world.stop()
        try world.start()
        _ = try Journal.wait(for: ["_PID=\(world.pid)", Self.started])
        // A file dropped now is taken after what the start's rescan found.
        try world.drop("after.unknownkind", contents: [0x00, 0x9F, 0x13, 0xFE, 0x37, 0x00, 0x80])
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=unhandled"])
        #expect(try statusJSON(world)["leftInPlace"] as? Int == 1)
        #expect(Journal.entries(["_PID=\(world.pid)", "INBOX_FILE=\(link.path)", "PRIORITY=4"]).isEmpty)

        // Removed by hand: forgotten at the next start.
        world.stop()
        #expect(unlink(link.path) == 0)
        try world.start()
        _ = try Journal.wait(for: ["_PID=\(world.pid)", Self.started])
        #expect(try statusJSON(world)["leftInPlace"] as? Int == 0)
        #expect(!(try world.inboxctl("list", ["failed"]).stdout.contains("Left in place")))
    }
}
