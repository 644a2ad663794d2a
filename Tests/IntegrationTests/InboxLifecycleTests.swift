import Foundation
import Testing

/// What appears in a drop Inbox by any event, and what becomes of the Inbox itself when it is deleted, moved or
/// missing.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxLifecycleTests {
    func inboxEntries(_ world: AgentHarness, _ matches: [String] = [], count: Int = 1) throws -> [[String: Any]] {
        try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_INBOX=\(world.inbox.path)"] + matches, count: count)
    }

    func status(_ world: AgentHarness) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.inboxctl.path, ["status", "--runtime-dir", world.runtime.path, "--state", world.state.path,
                                         "--inbox", world.inbox.path, "--handlers", world.handlers.path])
    }

    /// Links, FIFOs, sockets, devices and directories made in the Inbox (IN_CREATE only) are moved aside at once;
    /// a regular file made there waits until it is closed.
    @Test func objectsCreatedInPlaceAreMovedAsideAndAFileBeingWrittenWaits() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()
        let secret = world.root.appendingPathComponent("secret.txt")
        try "do not deliver".write(to: secret, atomically: true, encoding: .utf8)
        func inInbox(_ name: String) -> String { world.inbox.appendingPathComponent(name).path }

        // Made in place and kept open (FileManager.createFile would close it at once: IN_CLOSE_WRITE).
        let descriptor = open(inInbox("writing.txt"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        #expect(descriptor >= 0)
        let writing = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try writing.write(contentsOf: Data("first half ".utf8))

        var expected: [String: String] = [:]   // name -> kind
        #expect(symlink(secret.path, inInbox("link.txt")) == 0)
        expected["link.txt"] = "symbolic link"
        #expect(link(secret.path, inInbox("hard.txt")) == 0)
        expected["hard.txt"] = "hard link"
        #expect(mkfifo(inInbox("pipe.txt"), 0o644) == 0)
        expected["pipe.txt"] = "FIFO"
        #expect(mkdir(inInbox("folder"), 0o755) == 0)
        expected["folder"] = "directory"
        let bound = try run("/usr/bin/python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
                                                 inInbox("socket.txt")])
        #expect(bound.status == 0, "\(bound.stderr)")
        expected["socket.txt"] = "socket"
        if geteuid() == 0, try run("/usr/bin/mknod", [inInbox("device.txt"), "c", "1", "3"]).status == 0 {
            expected["device.txt"] = "character device"
        } else {
            print("InboxLifecycleTests: no device node made (needs root with CAP_MKNOD); the other kinds are tested")
        }

        let rejected = try world.waitForEvents("rejected", count: expected.count)
        var seen: [String: String] = [:]
        for entry in rejected {
            let file = (entry["INBOX_FILE"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } ?? "?"
            seen[file] = entry["INBOX_FILE_KIND"] as? String
            let movedTo = entry["INBOX_MOVED_TO"] as? String ?? "?"
            #expect(movedTo.hasPrefix(world.failedDirectory.path + "/rejected-"))
            // A directory made in place is never a package: the warning says so.
            let why = file == "folder" ? ": a directory made in place is never taken: rename a finished directory in" : ""
            #expect(entry["MESSAGE"] as? String == "Moved aside \(entry["INBOX_FILE_KIND"] as? String ?? "?") "
                    + "\(world.inbox.path)/\(file) to \(movedTo)\(why)")
        }
        #expect(seen == expected)
        #expect(Set(world.contents(of: world.failedDirectory)) == Set(expected.keys.map { "rejected-" + $0 }))
        #expect(try String(contentsOf: secret, encoding: .utf8) == "do not deliver")
        // Only the file still being written is left, untaken.
        #expect(world.contents(of: world.inbox) == ["writing.txt"])
        #expect(world.recordings().isEmpty)

        try writing.write(contentsOf: Data("second half".utf8))
        try writing.close()
        _ = try world.waitForEvents("finished")
        #expect(world.recordings().values.first?.contains("INBOX_NAME=writing.txt") == true)
        #expect(world.contents(of: world.inbox).isEmpty)
    }

    /// `rm -rf Inbox; mkdir Inbox`: one warning, the status says it is missing, and the new one is watched and
    /// rescanned as soon as it is there.
    @Test func aDeletedInboxIsReportedAndTheNewOneWatched() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()
        try FileManager.default.removeItem(at: world.inbox)
        let lost = try inboxEntries(world, ["PRIORITY=4"])
        #expect((lost.first?["MESSAGE"] as? String)?.hasPrefix("Inbox \(world.inbox.path) was deleted") == true)
        #expect(lost.first?["INBOX_REASON"] as? String == "deleted")
        try waitUntil("inboxctl status shows the Inbox missing") {
            let shown = try status(world)
            return shown.stdout.contains("Missing:        \(world.inbox.path) (gone: nothing is taken until it is back)")
        }
        let json = try Data(contentsOf: world.runtime.appendingPathComponent("status.json"))
        let object = try JSONSerialization.jsonObject(with: json) as? [String: Any]
        #expect(object?["missingInboxes"] as? [String] == [world.inbox.path])

        // It comes back with a file already in it: renamed into place, the file is found by the rescan.
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        try "waiting".write(to: staging.appendingPathComponent("early.txt"), atomically: true, encoding: .utf8)
        #expect(rename(staging.path, world.inbox.path) == 0)
        _ = try inboxEntries(world, ["PRIORITY=5"])
        _ = try world.waitForEvents("finished")
        try world.drop("later.txt", contents: Array("later".utf8))
        _ = try world.waitForEvents("finished", count: 2)
        try waitUntil("inboxctl status no longer shows it missing") {
            let shown = try status(world)
            return shown.status == 0 && !shown.stdout.contains("Missing:")
        }
        // One warning for the loss, however many events the kernel sent (IN_DELETE_SELF, IN_IGNORED).
        #expect(world.journal(["INBOX_INBOX=\(world.inbox.path)", "PRIORITY=4"]).count == 1)
    }

    /// Deleted and made again before the agent reads the first event: one warning, and the new one is watched.
    @Test func anInboxReplacedAtOnceGivesOneWarning() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()
        for _ in 0..<2 {
            try FileManager.default.removeItem(at: world.inbox)
            #expect(mkdir(world.inbox.path, 0o755) == 0)
        }
        try world.drop("after.txt", contents: Array("after".utf8))
        _ = try world.waitForEvents("finished")
        let warnings = world.journal(["INBOX_INBOX=\(world.inbox.path)", "PRIORITY=4"])
        #expect((1...2).contains(warnings.count), "\(warnings.map { $0["MESSAGE"] ?? "" })")
        // The loss is "deleted", or "replaced" when the new directory is already there as the agent reads the first
        // event (a loaded machine): both are the one warning for it.
        #expect(warnings.allSatisfy { ($0["MESSAGE"] as? String)?.hasSuffix("watching the directory now there") == true
                                      || ["deleted", "replaced"].contains($0["INBOX_REASON"] as? String) })
        try waitUntil("inboxctl status shows nothing missing") {
            let shown = try status(world)
            return shown.status == 0 && !shown.stdout.contains("Missing:")
        }
    }

    /// A moved Inbox is no longer the Inbox: what is dropped into it where it went stays there.
    @Test func aMovedInboxIsLeftAndTheNameWatchedAgain() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()
        let moved = world.root.appendingPathComponent("Inbox.old")
        #expect(rename(world.inbox.path, moved.path) == 0)
        let lost = try inboxEntries(world, ["PRIORITY=4"])
        #expect(lost.first?["INBOX_REASON"] as? String == "moved away")
        try "not for the agent".write(to: moved.appendingPathComponent("old.txt"), atomically: true, encoding: .utf8)
        #expect(mkdir(world.inbox.path, 0o755) == 0)
        _ = try inboxEntries(world, ["PRIORITY=5"])
        try world.drop("new.txt", contents: Array("new".utf8))
        _ = try world.waitForEvents("finished")
        #expect(world.recordings().count == 1)
        #expect(world.recordings().values.first?.contains("INBOX_NAME=new.txt") == true)
        #expect(world.contents(of: moved) == ["old.txt"])
    }

    /// A filesystem mounted over the Inbox, and then unmounted, changes which directory is there; no inotify event
    /// says so (the watch stays on the directory underneath, and one held open is never sent IN_UNMOUNT), the mount
    /// table does.
    @Test(.enabled(if: geteuid() == 0, "mounting needs root"))
    func anInboxMountedOverOrUnmountedIsWatchedWhereItIsNow() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()
        let mounted = try run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=0755", "inboxd-it", world.inbox.path])
        guard mounted.status == 0 else {
            print("InboxLifecycleTests: cannot mount a tmpfs here (\(mounted.stderr)); the mount case is not tested")
            return
        }
        var unmounted = false
        defer { if !unmounted { _ = try? run("/usr/bin/umount", ["-l", world.inbox.path]) } }
        let covered = try inboxEntries(world, ["PRIORITY=4", "INBOX_REASON=covered or uncovered by a mount"])
        #expect((covered.first?["MESSAGE"] as? String)?.hasSuffix("watching the directory now there") == true)
        try world.drop("on-tmpfs.txt", contents: Array("x".utf8))
        _ = try world.waitForEvents("finished")

        // The agent holds the tmpfs open (a plain umount is EBUSY): detached lazily, it is let go of once noticed.
        #expect(try run("/usr/bin/umount", ["-l", world.inbox.path]).status == 0)
        unmounted = true
        _ = try inboxEntries(world, ["PRIORITY=4", "INBOX_REASON=covered or uncovered by a mount"], count: 2)
        try world.drop("underneath.txt", contents: Array("y".utf8))
        _ = try world.waitForEvents("finished", count: 2)
        #expect(world.contents(of: world.inbox).isEmpty)
    }

    /// A missing Inbox at start-up is made and said so; as root with the drop mode of units/inboxd-tmpfiles.conf.
    @Test func aMissingInboxAtStartIsCreatedWithTheDropMode() throws {
        let world = try AgentHarness()
        try FileManager.default.removeItem(at: world.inbox)
        try world.start()
        let created = try inboxEntries(world, ["PRIORITY=4"])
        let message = created.first?["MESSAGE"] as? String ?? ""
        #expect(message.hasPrefix("Inbox \(world.inbox.path) did not exist; created it ("), "\(message)")
        var st = stat()
        #expect(stat(world.inbox.path, &st) == 0)
        if geteuid() == 0 {
            #expect(st.st_mode & 0o7777 == 0o1733)
            if let group = getgrnam("inboxd") {
                #expect(st.st_gid == group.pointee.gr_gid)
                #expect(message.hasSuffix("(mode 1733, group inboxd)"))
            } else {
                #expect(st.st_gid == getegid())
                #expect(message.hasSuffix("(mode 1733, the agent's group)"))
            }
        } else {
            #expect(st.st_mode & 0o7777 == 0o755)
        }
        try world.drop("first.txt", contents: Array("x".utf8))
        try waitUntil("the file is taken") { world.contents(of: world.inbox).isEmpty }
    }
}

/// An ordinary user sends through the shared Inbox (root's, 1733: write and search, no read) with every inboxctl
/// command that puts a file there.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: nobodyCanRunTheAgent, "needs root, and inboxctl executable by nobody (uid 65534) from here"))
struct SharedInboxTests {
    func asNobody(_ arguments: [String], input: [UInt8]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let all = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "-i", "HOME=/nonexistent",
                   "PATH=/usr/bin:/bin", Binaries.inboxctl.path] + arguments
        if let input { return try run("/usr/bin/setpriv", all, input: input) }
        return try run("/usr/bin/setpriv", all)
    }

    @Test func sendStdinOpenAndRetryWorkForAnOrdinaryUser() throws {
        let world = try AgentHarness()
        let text = "test.text.\(world.tag)"
        try world.register(text, contentTypes: "public.plain-text")
        #expect(chown(world.inbox.path, 0, 0) == 0 && chmod(world.inbox.path, 0o1733) == 0)
        try world.start()
        let common = ["--inbox", world.inbox.path, "--handlers", world.handlers.path, "--state", world.state.path,
                      "--runtime-dir", world.runtime.path]
        let note = world.root.appendingPathComponent("note.txt")
        try "from nobody".write(to: note, atomically: true, encoding: .utf8)
        #expect(chmod(note.path, 0o644) == 0)

        let sent = try asNobody(["send"] + common + [note.path])
        #expect(sent.status == 0 && sent.stderr.isEmpty, "\(sent.stderr)")
        #expect(sent.stdout == world.inbox.appendingPathComponent("note.txt").path + "\n")
        let piped = try asNobody(["send", "--type", "public.plain-text"] + common + ["-"], input: Array("piped".utf8))
        #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped.stderr)")
        let opened = try asNobody(["open", "--with", text] + common + [note.path])
        #expect(opened.status == 0 && opened.stderr.isEmpty, "\(opened.stderr)")
        let finished = try world.waitForEvents("finished", count: 3)
        #expect(finished.allSatisfy { $0["INBOX_SOURCE_UID"] as? String == "65534" }, "\(finished)")
        #expect(finished.contains { $0["INBOX_CHOSEN_BY"] as? String == "sender" })

        // retry: the user's own failed/ (as for their own agent's state), back into the shared Inbox.
        let own = world.root.appendingPathComponent("nobody-state")
        let failed = own.appendingPathComponent("failed")
        try FileManager.default.createDirectory(at: failed, withIntermediateDirectories: true)
        try "again".write(to: failed.appendingPathComponent("again.txt"), atomically: true, encoding: .utf8)
        for path in [own.path, failed.path, failed.appendingPathComponent("again.txt").path] {
            #expect(chown(path, 65534, 65534) == 0)
        }
        let retried = try asNobody(["retry", "again.txt", "--inbox", world.inbox.path, "--handlers", world.handlers.path,
                                    "--state", own.path, "--runtime-dir", world.runtime.path])
        #expect(retried.status == 0 && retried.stderr.isEmpty, "\(retried.stderr)")
        #expect(retried.stdout == "\(failed.path)/again.txt -> \(world.inbox.path)/again.txt\n")
        let all = try world.waitForEvents("finished", count: 4)
        #expect(all.contains { ($0["INBOX_FILE"] as? String)?.hasSuffix("/again.txt") == true }, "\(all)")
        // Nothing hidden left behind.
        try waitUntil("the Inbox is empty") { world.contents(of: world.inbox).isEmpty }
    }
}
