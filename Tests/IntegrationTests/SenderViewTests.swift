import Foundation
import Testing

/// What a sender sees of their own files (`inboxctl list --mine`, `inboxctl status FILE|ID`) against the real agent
/// (root, its failed/ and unhandled/ closed to others), with inboxctl run as nobody, and what another uid does not see.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: getuid() == 0, "switching to an unprivileged user needs root"),
       .enabled(if: nobodyCanRunTheAgent, "the built inboxctl is not executable by nobody (uid 65534) from here"))
struct SenderViewTests {
    /// inboxctl as `uid` (nobody by default), with the world's places.
    func inboxctl(_ world: AgentHarness, _ arguments: [String], uid: Int = 65534)
        throws -> (status: Int32, stdout: String, stderr: String) {
        try run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/env", "-i",
                                     "HOME=/nonexistent", "PATH=/usr/bin:/bin", Binaries.inboxctl.path] + arguments
                + ["--inbox", world.inbox.path, "--handlers", world.handlers.path, "--state", world.state.path,
                   "--runtime-dir", world.runtime.path])
    }

    /// A world whose handler does what a file's name says (fail, retry, slow, else succeed), with a shared Inbox.
    func world(config: String) throws -> AgentHarness {
        let world = try AgentHarness()
        let handler = try world.script("by-name.sh", """
            case "$INBOX_NAME" in
            fail*) exit 3 ;;
            retry*) exit 75 ;;
            slow*) sleep 30 ;;
            esac
            exit 0
            """)
        try world.register("test.by-name.\(world.tag)", exec: handler.path + " %f", contentTypes: "public.plain-text")
        #expect(chown(world.inbox.path, 0, 0) == 0 && chmod(world.inbox.path, 0o1733) == 0)
        try world.start(config: config)
        return world
    }

    /// Writes `name` readable by nobody, for nobody to send.
    func note(_ world: AgentHarness, _ name: String, _ bytes: [UInt8] = Array("words\n".utf8)) throws -> String {
        let url = world.root.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        #expect(chmod(url.path, 0o644) == 0)
        return url.path
    }

    /// nobody's files as `list --mine --json` gives them, by name.
    func mine(_ world: AgentHarness) throws -> [String: [String: Any]] {
        let listed = try inboxctl(world, ["list", "--mine", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
        var files: [String: [String: Any]] = [:]
        for file in object?["files"] as? [[String: Any]] ?? [] { files[file["name"] as? String ?? "?"] = file }
        return files
    }

    @Test func aSenderSeesDoneFailedUnhandledAndRefusedFilesWithTheirReasons() throws {
        let world = try world(config: "[Agent]\nMaxAttempts=1\n")
        for name in ["done.txt", "fail.txt"] {
            let sent = try inboxctl(world, ["send", try note(world, name)])
            #expect(sent.status == 0, "\(sent.stderr)")
        }
        let sent = try inboxctl(world, ["send", try note(world, "picture.png", pngBytes(width: 2, height: 2))])
        #expect(sent.status == 0, "\(sent.stderr)")
        // A link nobody drops is moved aside unopened: refused, and the sender is told why.
        let link = try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/ln", "-s",
                                                "/etc/hostname", world.inbox.appendingPathComponent("link.txt").path])
        #expect(link.status == 0, "\(link.stderr)")

        var files: [String: [String: Any]] = [:]
        try waitUntil("nobody's four files have an outcome") {
            files = try mine(world)
            return Set(files.keys) == ["done.txt", "fail.txt", "picture.png", "link.txt"]
                && files.values.allSatisfy { ["done", "failed", "unhandled", "refused"].contains($0["state"] as? String) }
        }
        #expect(files["done.txt"]?["state"] as? String == "done")
        #expect(files["fail.txt"]?["state"] as? String == "failed")
        #expect(files["fail.txt"]?["reason"] as? String == "exit status 3 after 1 attempt")
        #expect(files["picture.png"]?["state"] as? String == "unhandled")
        #expect(files["picture.png"]?["reason"] as? String == "no handler for public.png")
        #expect(files["link.txt"]?["state"] as? String == "refused")
        #expect((files["link.txt"]?["reason"] as? String)?.contains("Moved aside symbolic link") == true, "\(files)")

        // failed/ itself stays closed to nobody; the view needs none of it.
        let held = try inboxctl(world, ["list", "failed"])
        #expect(held.status == 1 && held.stdout.isEmpty, "\(held)")
        #expect(held.stderr == "inboxctl: cannot read failed/ (\(world.failedDirectory.path)): Permission denied; it is "
                + "the agent's (uid 0): 'inboxctl list --mine' shows your own files\n", "\(held.stderr)")

        let retry = try inboxctl(world, ["retry", "fail.txt"])
        #expect(retry.status == 1)
        #expect(retry.stderr == "inboxctl: cannot read \(world.failedDirectory.path): Permission denied; it is the agent's: "
                + "'inboxctl list --mine' shows your own files\n", "\(retry.stderr)")

        let one = try inboxctl(world, ["status", world.inbox.appendingPathComponent("fail.txt").path])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.hasPrefix("fail.txt: failed\n  Delivery:      "), "\(one.stdout)")
        #expect(one.stdout.contains("\n  Handler:       test.by-name.\(world.tag)\n"), "\(one.stdout)")
        #expect(one.stdout.hasSuffix("\n  Reason:        exit status 3 after 1 attempt\n"), "\(one.stdout)")
        let id = try #require(files["fail.txt"]?["deliveryID"] as? String)
        let byID = try inboxctl(world, ["status", id.uppercased()])
        // The same file (its "Since" line says how long ago, which moves on between the two).
        let withoutAge = { (text: String) in text.split(separator: "\n").filter { !$0.hasPrefix("  Since:") } }
        #expect(byID.status == 0 && withoutAge(byID.stdout) == withoutAge(one.stdout), "\(byID.stdout)")

        let text = try inboxctl(world, ["list", "--mine"])
        #expect(text.stdout.hasPrefix("Your files (uid 65534, your user instance): 4\nNAME "), "\(text.stdout)")

        // Another uid sees none of nobody's names: not in its own view, not by reading nobody's file or the directory.
        let other = try inboxctl(world, ["list", "--mine"], uid: 65533)
        #expect(other.status == 0)
        #expect(other.stdout.hasPrefix("No files of yours are known (uid 65533, your user instance).\n"), "\(other.stdout)")
        let unknown = try inboxctl(world, ["status", "fail.txt"], uid: 65533)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix(
            "inboxctl: no file or delivery 'fail.txt' of yours is known (uid 65533, your user instance)\n"), "\(unknown.stderr)")
        let senders = world.runtime.appendingPathComponent("senders")
        for path in [senders.path, senders.appendingPathComponent("65534.json").path] {
            let read = try run("/usr/bin/setpriv", ["--reuid=65533", "--regid=65533", "--clear-groups", "/bin/cat", path])
            #expect(read.status != 0 && read.stdout.isEmpty, "\(path): \(read)")
        }
        let listing = try run("/usr/bin/setpriv", ["--reuid=65533", "--regid=65533", "--clear-groups", "/bin/ls", senders.path])
        #expect(listing.status != 0 && listing.stdout.isEmpty, "\(listing)")
        let st = try FileManager.default.attributesOfItem(atPath: senders.appendingPathComponent("65534.json").path)
        #expect(st[.ownerAccountID] as? Int == 65534 && st[.posixPermissions] as? Int == 0o400, "\(st)")

        // After a restart, what failed/ and unhandled/ hold is still nobody's to see.
        world.stop()
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        try waitUntil("the held files are listed again") {
            let again = try mine(world)
            return again["fail.txt"]?["state"] as? String == "failed"
                && again["fail.txt"]?["reason"] as? String == "exit status 3 after 1 attempt"
        }
        world.stop()
    }

    @Test func aSenderSeesQueuedRunningAndRetryingFiles() throws {
        let world = try world(config: "[Agent]\nMaxAttempts=3\nRetryDelaySec=1h\n")
        for name in ["retry.txt", "slow.txt"] {
            let sent = try inboxctl(world, ["send", try note(world, name)])
            #expect(sent.status == 0, "\(sent.stderr)")
        }
        var files: [String: [String: Any]] = [:]
        try waitUntil("one runs and one waits for its retry") {
            files = try mine(world)
            return files["retry.txt"]?["state"] as? String == "retrying" && files["slow.txt"]?["state"] as? String == "running"
        }
        #expect(files["retry.txt"]?["reason"] as? String == "asked to retry (exit status 75)")
        let next = (files["retry.txt"]?["nextAttemptUSec"] as? Int).map { Double($0) / 1e6 } ?? 0
        #expect(next > Date().timeIntervalSince1970 + 3000, "\(files)")
        let one = try inboxctl(world, ["status", "retry.txt"])
        #expect(one.stdout.hasPrefix("retry.txt: waiting for a retry\n"), "\(one.stdout)")
        #expect(one.stdout.contains("\n  Next attempt:  "), "\(one.stdout)")
        #expect(one.stdout.contains("(in 59 min "), "\(one.stdout)")
        #expect(one.stdout.hasSuffix("\n  Reason:        asked to retry (exit status 75)\n"), "\(one.stdout)")
        world.stop()
    }

    @Test func withoutAnAgentNothingIsKnownAndTheOtherInstanceIsNamed() throws {
        let world = try AgentHarness()
        // No agent runs: nothing is known, and the message names the other instance.
        let none = try inboxctl(world, ["list", "--mine"])
        #expect(none.status == 1)
        // Whether the host runs a system instance (in /run/inboxd) is not this test's: either sentence names it.
        let first = "inboxctl: inboxd is not running, so nothing of yours is known to it (no agent in \(world.runtime.path))\n"
            + "This is your user instance, which is not running; the system instance is "
        #expect([first + "not running either ('inboxctl list --mine --system' looks there).\n",
                  first + "running: see 'inboxctl list --mine --system'.\n"].contains(none.stderr), "\(none.stderr)")
    }

    @Test func usageErrors() throws {
        let both = try run(Binaries.inboxctl.path, ["list", "failed", "--mine"])
        #expect(both.status == 2)
        #expect(both.stderr == """
            Error: give either WHICH or --mine, not both
            Usage: inboxctl list failed|unhandled|pending|--mine [--json]
              See 'inboxctl help list'.

            """)
        let neither = try run(Binaries.inboxctl.path, ["list"])
        #expect(neither.status == 2)
        #expect(neither.stderr.hasPrefix("Error: missing WHICH (failed, unhandled or pending) or --mine\n"))
        let two = try run(Binaries.inboxctl.path, ["status", "a", "b"])
        #expect(two.status == 2)
        #expect(two.stderr == """
            Error: unexpected argument 'b'
            Usage: inboxctl status [FILE|ID] [--cluster] [--json] [--runtime-dir DIR] [agent options]
              See 'inboxctl help status'.

            """)
    }
}
