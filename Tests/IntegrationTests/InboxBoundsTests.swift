import Foundation
import Testing

/// MaxInboxFiles= and the other Inbox bounds through the real agent: an arrival over a bound is refused into failed/
/// with the bound named in its failure attribute and its journal entry; the counts follow deliveries and are rebuilt
/// from the containers at start-up.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxBoundsTests {
    /// Registers a handler that records its delivery and then waits until `output/gate` exists.
    static func gatedHandler(_ world: AgentHarness) throws -> String {
        let handler = "test.gated.\(world.tag)"
        let script = try world.script("gated-handler", """
            : > "$OUTPUT_DIR/$INBOX_DELIVERY_ID.$INBOX_ATTEMPT"
            while [ ! -e "$OUTPUT_DIR/gate" ]; do sleep 0.05; done
            exit 0
            """)
        try world.register(handler, exec: "\(script.path) %f", contentTypes: "public.plain-text")
        return handler
    }

    /// Drops a file owned by `uid` (renamed into place whole).
    static func drop(_ world: AgentHarness, _ name: String, bytes: Int = 4, uid: uid_t) throws {
        let hidden = world.inbox.appendingPathComponent(".\(name).part")
        try Data(repeating: UInt8(ascii: "a"), count: bytes).write(to: hidden)
        #expect(chown(hidden.path, uid, uid) == 0)
        #expect(rename(hidden.path, world.inbox.appendingPathComponent(name).path) == 0)
    }

    @Test func theThirdFileOverMaxInboxFilesIsRefusedWithTheBoundNamed() throws {
        let world = try AgentHarness()
        _ = try Self.gatedHandler(world)
        try world.start(config: "[Agent]\nMaxInboxFiles=2\n")
        try world.drop("1.txt", contents: Array("one".utf8))
        try world.drop("2.txt", contents: Array("two".utf8))
        try waitUntil("two handlers run") { world.contents(of: world.output).count == 2 }
        try world.drop("3.txt", contents: Array("three".utf8))
        let reason = "over MaxInboxFiles=2 in \(world.inbox.path)"
        let rejected = try #require(world.waitForEvents("rejected").first)
        #expect(rejected[field: "INBOX_REASON"] == reason)
        #expect(rejected[field: "INBOX_FILE"] == world.inbox.appendingPathComponent("3.txt").path)
        #expect(world.contents(of: world.failedDirectory) == ["3.txt"])
        #expect(attribute("user.inboxd.failure", of: world.failedDirectory.appendingPathComponent("3.txt")) == reason)
        // inboxctl status shows the bound and what is in hand.
        try waitUntil("the status shows the two in hand") {
            let status = try run(Binaries.inboxctl.path, ["status", "--runtime-dir", world.runtime.path])
            return status.stdout.contains("\nBounds:         MaxInboxFiles=2\n                \(world.inbox.path): 2 files, 6 bytes in hand\n")
        }

        // Once the two are handled, the Inbox has room again.
        #expect(FileManager.default.createFile(atPath: world.output.appendingPathComponent("gate").path, contents: nil))
        try world.waitForEvents("finished", count: 2)
        try world.drop("4.txt", contents: Array("four".utf8))
        try world.waitForEvents("finished", count: 3)
        #expect(world.events("rejected", ["_PID=\(world.pid)"]).count == 1)
    }

    @Test func perSenderBoundsCountEachUidApart() throws {
        let world = try AgentHarness()
        _ = try Self.gatedHandler(world)
        try world.start(config: "[Agent]\nMaxInboxFilesPerSender=1\nMaxInboxBytesPerSender=1K\n")
        try Self.drop(world, "root.txt", uid: 0)
        try Self.drop(world, "alice.txt", uid: 4321)
        try waitUntil("both senders' files run") { world.contents(of: world.output).count == 2 }
        // The second file of either sender is over their own bound; one too large is over the bytes bound.
        try Self.drop(world, "alice-2.txt", uid: 4321)
        try Self.drop(world, "big.txt", bytes: 2000, uid: 4322)
        let rejected = try world.waitForEvents("rejected", count: 2)
        let reasons = Dictionary(uniqueKeysWithValues: rejected.compactMap { entry in
            entry[field: "INBOX_FILE"].map { (URL(fileURLWithPath: $0).lastPathComponent, entry[field: "INBOX_REASON"] ?? "") }
        })
        #expect(reasons == [
            "alice-2.txt": "over MaxInboxFilesPerSender=1 for uid 4321 in \(world.inbox.path)",
            "big.txt": "over MaxInboxBytesPerSender=1K for uid 4322 in \(world.inbox.path) (0 bytes in hand, this file 2000)",
        ])
        #expect(Set(rejected.compactMap { $0[field: "INBOX_SOURCE_UID"] }) == ["4321", "4322"])
        #expect(Set(world.contents(of: world.failedDirectory)) == ["alice-2.txt", "big.txt"])
        // The refused files keep their sender as owner (so their disk quota counts them).
        var st = stat()
        #expect(lstat(world.failedDirectory.appendingPathComponent("alice-2.txt").path, &st) == 0 && st.st_uid == 4321)
        #expect(FileManager.default.createFile(atPath: world.output.appendingPathComponent("gate").path, contents: nil))
        try world.waitForEvents("finished", count: 2)
    }

    @Test func aFileWaitingForItsRetryStillCountsAfterARestart() throws {
        let world = try AgentHarness()
        try world.register("test.later.\(world.tag)", contentTypes: "public.plain-text", exit: 75)
        let config = "[Agent]\nMaxInboxFiles=1\nRetryDelaySec=1h\n"
        try world.start(config: config)
        try world.drop("waiting.txt", contents: Array("w".utf8))
        try world.waitForEvents("retry")
        world.stop()
        try world.start(config: config)
        // Taken again from its container at start-up (and waiting for its retry again): the Inbox is full.
        try world.waitForEvents("retry")
        try world.drop("second.txt", contents: Array("s".utf8))
        let rejected = try #require(world.waitForEvents("rejected").first)
        #expect(rejected[field: "INBOX_REASON"] == "over MaxInboxFiles=1 in \(world.inbox.path)")
        #expect(world.contents(of: world.failedDirectory) == ["second.txt"])
    }
}

/// Bad values of the retention and bound settings are `file:line` errors, in `inboxctl verify` and at start-up.
struct HeldFileLimitConfigTests {
    @Test func badValuesAreReportedWithTheirLines() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-limits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("inboxd.conf")
        try "[Agent]\nKeepFailedSec=0\nKeepUnhandledSec=2 fortnights\nMaxInboxFiles=lots\nMaxInboxBytesPerSender=10Q\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let verified = try run(Binaries.inboxctl.path, ["verify", config.path])
        #expect(verified.status == 1)
        let path = config.path
        for expected in [
            "\(path):2: KeepFailedSec= must be longer than 0 (infinity keeps entries forever)",
            "\(path):3: invalid KeepUnhandledSec=: unknown time unit 'fortnights' in '2 fortnights'",
            "\(path):4: MaxInboxFiles= must be a positive number of files or infinity, got 'lots'",
            "\(path):5: invalid MaxInboxBytesPerSender=: invalid size '10Q'",
        ] {
            #expect(verified.stdout.contains(expected) || verified.stderr.contains(expected), "\(verified)")
        }
        let agent = try run(Binaries.inboxd.path, ["--config", path, "--state", directory.path + "/state"])
        #expect(agent.status == 2)
        #expect(agent.stderr.contains("\(path):2: KeepFailedSec= must be longer than 0"))
    }
}
