import Foundation
import Testing

/// What a sender can do to a file after dropping it: swap its name for a link, keep writing it, or drop it while the
/// state directory is full. Root only: the secret must be root's, leases on another user's file need CAP_LEASE, and
/// the full disk is a tmpfs mounted for the test.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: getuid() == 0, "a root-only secret, leases on any file and mounting a tmpfs need root"))
struct IntakeSafetyTests {
    /// Records whether the file it was given is a link, and what it could read through it.
    private func recordingHandler(_ world: AgentHarness) throws -> URL {
        try world.script("content-handler", """
            out="$OUTPUT_DIR/$INBOX_DELIVERY_ID"
            { [ -L "$1" ] && echo LINK; cat "$1" 2>&1; } > "$out.tmp"
            mv "$out.tmp" "$out"
            """)
    }

    @Test func aNameSwappedForALinkAfterItsCheckIsNeverDelivered() throws {
        let world = try AgentHarness()
        let handler = "test.swap.\(world.tag)"
        let secret = world.root.appendingPathComponent("secret")
        try Data("TOP-SECRET".utf8).write(to: secret)
        chmod(secret.path, 0o600)
        try world.register(handler, exec: "\(try recordingHandler(world).path) %f", contentTypes: "public.plain-text")
        try world.start()
        var swapped: [[String: Any]] = []
        var dropped = 0
        // The swapper replaces each name with a link to the secret a moment after the drop, at random: before the
        // check (moved aside), between the check and the move (the race), or after the move (too late to matter).
        for round in 0..<5 where swapped.isEmpty {
            for index in 0..<60 {
                let name = "f-\(round)-\(index).txt"
                try world.drop(name, contents: Array("public \(index)\n".utf8))
                dropped += 1
                let link = world.inbox.appendingPathComponent(".link-\(round)-\(index)")
                #expect(symlink(secret.path, link.path) == 0)
                usleep(UInt32.random(in: 0...4000))
                rename(link.path, world.inbox.appendingPathComponent(name).path)
            }
            try waitUntil("the Inbox, intake/ and the container Inbox are empty") {
                world.contents(of: world.inbox).isEmpty
                    && world.contents(of: world.state.appendingPathComponent("intake")).isEmpty
                    && world.contents(of: world.containerInbox(handler)).isEmpty
            }
            let recorded = world.recordings().count
            if recorded > 0 { try world.waitForEvents("finished", count: recorded) }
            swapped = world.events("rejected", ["_PID=\(world.pid)"]).filter {
                ($0["INBOX_REASON"] as? String)?.contains("swapped") == true
            }
        }
        for (name, record) in world.recordings() {
            #expect(!record.contains("LINK"), "\(name): the handler was given a link")
            #expect(!record.contains("TOP-SECRET"), "\(name): the handler read the secret")
        }
        #expect(world.events("violation", ["_PID=\(world.pid)"]).isEmpty)
        #expect(!swapped.isEmpty, "no swap hit the window between the check and the move in \(dropped) drops")
        for entry in swapped {
            #expect(entry["INBOX_SOURCE_UID"] as? String == "0")
            #expect((entry["INBOX_MOVED_TO"] as? String)?.contains("/failed/rejected-") == true)
        }
    }

    /// Opens `url` for writing and keeps it open: the sender's descriptor.
    private func writer(_ url: URL, _ text: String) throws -> FileHandle {
        _ = FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8))
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        return handle
    }

    @Test func aSenderStillWritingIsWaitedForAndItsFinalContentDelivered() throws {
        let world = try AgentHarness()
        let handler = "test.writer.\(world.tag)"
        try world.register(handler, exec: "\(try recordingHandler(world).path) %f", contentTypes: "public.plain-text")
        try world.start()
        let hidden = world.inbox.appendingPathComponent(".open.part")
        let handle = try writer(hidden, "typed ")
        rename(hidden.path, world.inbox.appendingPathComponent("open.txt").path)
        usleep(300_000)
        try handle.write(contentsOf: Data("and written after the drop\n".utf8))
        try handle.close()
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(world.recordings().values.map { $0 } == ["typed and written after the drop\n"])
        #expect(world.events("violation", ["_PID=\(world.pid)"]).isEmpty)
    }

    @Test func aSenderThatKeepsWritingIsRefusedAndNothingDelivered() throws {
        let world = try AgentHarness()
        let handler = "test.writer.\(world.tag)"
        try world.register(handler, exec: "\(try recordingHandler(world).path) %f", contentTypes: "public.plain-text")
        try world.start()
        let hidden = world.inbox.appendingPathComponent(".held.part")
        let handle = try writer(hidden, "first ")
        defer { try? handle.close() }
        rename(hidden.path, world.inbox.appendingPathComponent("held.txt").path)
        let rejected = try world.waitForEvents("rejected", timeout: 20)
        #expect((rejected.first?["INBOX_REASON"] as? String)?.contains("open for writing") == true)
        #expect(rejected.first?["INBOX_SOURCE_UID"] as? String == "0")
        try handle.write(contentsOf: Data("changed later\n".utf8))
        #expect(world.contents(of: world.failedDirectory) == ["held.txt"])
        #expect(world.recordings().isEmpty)
        #expect(world.events("dispatched", ["_PID=\(world.pid)"]).isEmpty)
    }

    /// Waits for `$OUTPUT_DIR/go` (when `gated`), then reads its file twice, a second apart, and records both reads;
    /// it marks its start in `$OUTPUT_DIR/started-NAME`.
    private func slowReader(_ world: AgentHarness, gated: Bool = false) throws -> URL {
        try world.script("slow-reader", """
            touch "$OUTPUT_DIR/started-$INBOX_NAME"
            \(gated ? "while [ ! -e \"$OUTPUT_DIR/go\" ]; do sleep 0.05; done" : "")
            first=$(cat "$1"); sleep 1; second=$(cat "$1")
            out="$OUTPUT_DIR/$INBOX_NAME"
            printf '%s|%s' "$first" "$second" > "$out.tmp"
            mv "$out.tmp" "$out"
            """)
    }

    /// A writer that opens the Inbox copy after the move (root here; a sender through a link or descriptor it kept)
    /// waits on the agent's read lease until the handler is done: the handler reads what was checked, twice alike,
    /// and is not blamed.
    @Test func aWriterAfterTheMoveWaitsForTheHandlerWhichReadsTheCheckedContent() throws {
        let world = try AgentHarness()
        let handler = "test.late-writer.\(world.tag)"
        try world.register(handler, exec: "\(try slowReader(world).path) %f", contentTypes: "public.plain-text")
        try world.start()
        try world.drop("late.txt", contents: Array("checked".utf8))
        try waitUntil("the handler started") {
            FileManager.default.fileExists(atPath: world.output.appendingPathComponent("started-late.txt").path)
        }
        let copy = world.containerInbox(handler).appendingPathComponent("late.txt")
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "printf ' and changed' >> \"$0\"", copy.path]
        try writer.run()
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        writer.waitUntilExit()
        #expect(world.recordings()["late.txt"] == "checked|checked")
        #expect(world.events("violation", ["_PID=\(world.pid)"]).isEmpty)
        #expect(world.events("rejected", ["_PID=\(world.pid)"]).isEmpty)
    }

    /// Two files for a handler that runs one at a time: the first holds the slot until `go`, the second waits in its
    /// container Inbox, where `meddle` gets at it.
    private func queuedBehindAnother(_ world: AgentHarness, _ handler: String,
                                     meddle: (URL) throws -> Void) throws {
        try world.register(handler, exec: "\(try slowReader(world, gated: true).path) %f", contentTypes: "public.plain-text",
                           extraHandler: "MaxConcurrent=1")
        try world.start()
        try world.drop("first.txt", contents: Array("first".utf8))
        try waitUntil("the first handler started") {
            FileManager.default.fileExists(atPath: world.output.appendingPathComponent("started-first.txt").path)
        }
        try world.drop("second.txt", contents: Array("second".utf8))
        let queued = world.containerInbox(handler).appendingPathComponent("second.txt")
        try waitUntil("the second file waits in the container Inbox") {
            FileManager.default.fileExists(atPath: queued.path)
        }
        try meddle(queued)
        _ = FileManager.default.createFile(atPath: world.output.appendingPathComponent("go").path, contents: nil)
    }

    @Test func aCopyHeldOpenForWritingBeforeItsHandlerStartsIsWithdrawnNotDelivered() throws {
        let world = try AgentHarness()
        let handler = "test.queued-writer.\(world.tag)"
        var held: FileHandle?
        try queuedBehindAnother(world, handler) { held = try FileHandle(forWritingTo: $0) }
        defer { try? held?.close() }
        let rejected = try world.waitForEvents("rejected", ["INBOX_HANDLER=\(handler)"])
        #expect((rejected.first?["INBOX_REASON"] as? String)?.contains("held it open for writing before its handler started") == true)
        #expect((rejected.first?["INBOX_REASON"] as? String)?.contains("its sender, uid 0,") == true)
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(world.contents(of: world.failedDirectory) == ["second.txt"])
        #expect(!FileManager.default.fileExists(atPath: world.output.appendingPathComponent("started-second.txt").path))
        #expect(world.events("violation", ["_PID=\(world.pid)"]).isEmpty)
    }

    @Test func aCopyChangedWhileQueuedIsWithdrawnAndTheHandlerNotBlamed() throws {
        let world = try AgentHarness()
        let handler = "test.queued-change.\(world.tag)"
        try queuedBehindAnother(world, handler) { queued in
            let handle = try FileHandle(forWritingTo: queued)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(" and more".utf8))
            try handle.close()
        }
        let rejected = try world.waitForEvents("rejected", ["INBOX_HANDLER=\(handler)"])
        #expect((rejected.first?["INBOX_REASON"] as? String)?.contains("changed it after it was checked") == true)
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(world.contents(of: world.failedDirectory) == ["second.txt"])
        #expect(!FileManager.default.fileExists(atPath: world.output.appendingPathComponent("started-second.txt").path))
        #expect(world.events("violation", ["_PID=\(world.pid)"]).isEmpty)
    }

    /// A file the agent took into intake/ but could not move on (here its container Inbox is another filesystem, so
    /// the rename fails with EXDEV) waits there for the next start, and keeps the metadata its sidecar carried.
    @Test func aFileKeptInIntakeAfterAFailedMoveOnKeepsItsSidecarsMetadata() throws {
        let world = try AgentHarness()
        let handler = "test.kept.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        try world.start()
        try world.drop("first.txt", contents: Array("makes the container\n".utf8))
        try world.waitForEvents("finished")
        world.stop()
        let containerInbox = world.containerInbox(handler)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: containerInbox.path)[.posixPermissions] as? Int)
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=\(String(mode, radix: 8))", "tmpfs",
                                       containerInbox.path]).status == 0)
        var mounted = true
        defer { if mounted { _ = try? run("/bin/umount", [containerInbox.path]) } }
        try world.start()
        let annotation = #"{"body":""# + String(repeating: "x", count: 9_000) + #""}"#
        let file = world.root.appendingPathComponent("letter.txt")
        try Data("dear reader\n".utf8).write(to: file)
        #expect(try world.inboxctl("send", ["--source-app", "com.example.mail", "--annotation", annotation, file.path]).status == 0)
        let intake = world.state.appendingPathComponent("intake")
        try waitUntil("the file waits in intake/ with the agent's sidecar") { world.allEntries(of: intake).count == 2 }
        #expect(world.allEntries(of: world.inbox).isEmpty)
        world.stop()
        #expect(try run("/bin/umount", [containerInbox.path]).status == 0)
        mounted = false
        try world.start()
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(finished.first?["INBOX_SOURCE_APP"] as? String == "com.example.mail")
        let record = try #require(world.recordings().values.first { $0.contains("letter.txt") })
        #expect(record.contains(#""annotation":\#(annotation)"#))
        #expect(world.allEntries(of: intake).isEmpty)
    }

    @Test func aFullStateDirectoryLeavesTheFileUntouchedAndItMovesOnceThereIsRoom() throws {
        let world = try AgentHarness()
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", world.state.path]).status == 0)
        defer {
            world.stop()
            _ = try? run("/bin/umount", [world.state.path])
        }
        let handler = "test.full.\(world.tag)"
        try world.register(handler, exec: "\(try recordingHandler(world).path) %f", contentTypes: "public.plain-text")
        try world.start()
        _ = try world.waitForRegistrationLoads(1)
        let filler = world.state.appendingPathComponent("filler")
        _ = try run("/bin/dd", ["if=/dev/zero", "of=\(filler.path)", "bs=64k"])
        let contents = Array(repeating: UInt8(ascii: "x"), count: 200_000) + [0x0A]
        let dropped = try world.drop("big.txt", contents: contents)
        chmod(dropped.path, 0o644)
        try waitUntil("the move is deferred") {
            !world.journal(["_PID=\(world.pid)", "INBOX_FILE=\(dropped.path)", "INBOX_ERRNO=\(ENOSPC)"]).isEmpty
        }
        // Still the sender's, as it was: mode, owner and attributes untouched.
        let status = try FileManager.default.attributesOfItem(atPath: dropped.path)
        #expect((status[.posixPermissions] as? Int) == 0o644)
        #expect(attribute("user.inboxd.delivery", of: dropped) == nil)
        try FileManager.default.removeItem(at: filler)
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"], timeout: 30)
        #expect(world.recordings().values.first?.count == contents.count)
        #expect(world.contents(of: world.inbox).isEmpty)
        #expect(world.journal(["_PID=\(world.pid)", "INBOX_FILE=\(dropped.path)", "INBOX_ERRNO=\(ENOSPC)"]).count == 1)
    }
}
