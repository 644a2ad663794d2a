import Foundation
import Testing

/// Resident handlers (Activation=resident) through the real agent: a Python test handler whose behaviour each file's
/// first word chooses (ok, slow, write, retry, fail, hang, crash, malformed, daemonize; STUBBORN=1 in its environment
/// ignores end of file and SIGTERM), the shipped Python example and the
/// Swift example built with InboxHandlerKit.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct ResidentTests {
    /// Logs `start <pid> <LISTEN_PID> <LISTEN_FDNAMES>`, `got <pid> <id> <name> <attempt> <mode> <note>` and
    /// `eof <pid>` to OUTPUT_DIR/log, and answers as the file's first word says.
    static let handler = """
        #!/usr/bin/python3
        import json, os, signal, socket, subprocess, sys, time
        log = os.open(os.path.join(os.environ["OUTPUT_DIR"], "log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        def note(text): os.write(log, (text + "\\n").encode())
        # STUBBORN=1 (Environment=): SIGTERM is ignored and end of file does not end it.
        stubborn = os.environ.get("STUBBORN") == "1"
        if stubborn:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        note(f"start {os.getpid()} {os.environ.get('LISTEN_PID')} {os.environ.get('LISTEN_FDNAMES')}")
        sock = socket.socket(fileno=3)
        while True:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 18, 4)
            if not message:
                note(f"eof {os.getpid()}")
                while stubborn:
                    time.sleep(60)
                break
            d = json.loads(message)
            fd = fds[0]
            words = os.read(fd, 4096).decode(errors="replace").split()
            mode = words[0] if words else "ok"
            extra = "-"
            if mode == "write":
                try:
                    os.write(fd, b"x")
                    extra = "write-succeeded"
                except OSError as error:
                    extra = f"write-failed-{error.errno}"
            os.close(fd)
            note(f"got {os.getpid()} {d['deliveryID']} {d['name']} {d['attempt']} {mode} {extra}")
            def answer(result):
                sock.send(json.dumps({"deliveryID": d["deliveryID"], "result": result, "reason": mode}).encode())
            if mode == "slow":
                time.sleep(0.02)
            if mode == "hang":
                continue
            if mode == "crash":
                os._exit(3)
            if mode == "daemonize":
                # A process of a session of its own, out of the instance's group, that would outlive it.
                daemon = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
                note(f"daemon {daemon.pid}")
            if mode == "malformed":
                sock.send(b"this is not json")
                sock.send(json.dumps({"deliveryID": "0" * 32, "result": "done"}).encode())
                answer("done")
                answer("done")
                continue
            answer({"retry": "retry", "fail": "failed"}.get(mode, "done"))

        """

    /// Registers the test handler for plain text.
    static func register(_ world: AgentHarness, _ extra: String = "") throws -> String {
        let script = world.root.appendingPathComponent("resident-test")
        try handler.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        let identifier = "test.resident.\(world.tag)"
        try world.register(identifier, exec: script.path, contentTypes: "public.plain-text",
                           extraHandler: "Activation=resident\n" + extra)
        return identifier
    }

    static func log(_ world: AgentHarness) -> [[Substring]] {
        let text = (try? String(contentsOf: world.output.appendingPathComponent("log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { $0.split(separator: " ") }
    }

    static func got(_ world: AgentHarness) -> [[Substring]] { log(world).filter { $0.first == "got" } }

    /// Creates `count` files named f<i>.txt holding `contents` in a staging directory, then renames them all into the
    /// Inbox at once: a burst.
    static func burst(_ world: AgentHarness, count: Int, contents: (Int) -> String = { "ok \($0)" }) throws {
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        for i in 0..<count {
            // open(2) and write(2): Foundation's writes are several times slower on a loaded machine.
            let fd = open(staging.appendingPathComponent("f\(i).txt").path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
            guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            var text = contents(i)
            let written = text.withUTF8 { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            guard written == text.utf8.count else { throw POSIXError(.EIO) }
        }
        for i in 0..<count {
            rename(staging.appendingPathComponent("f\(i).txt").path, world.inbox.appendingPathComponent("f\(i).txt").path)
        }
    }

    static func waitIdle(_ world: AgentHarness) throws {
        try waitUntil("the queue is empty", timeout: 120) {
            let status = (try? String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)) ?? ""
            return status.contains("\"queued\":0,\"inFlight\":[]")
        }
    }

    /// A 20,000-file burst to a resident checksum handler (one of the two examples): each file answered once, by at
    /// most Instances=2 processes, each line of checksums.tsv right.
    private func checksumBurst(program source: URL) throws {
        let world = try AgentHarness()
        let identifier = "test.checksum.\(world.tag)"
        // Copied where a handler's own identity can run it.
        let program = world.root.appendingPathComponent("checksum")
        try FileManager.default.copyItem(at: source, to: program)
        chmod(program.path, 0o755)
        try world.register(identifier, exec: program.path, contentTypes: "public.plain-text",
                           extraHandler: "Activation=resident\nInstances=2\nMaxInFlight=32\nTimeoutSec=120")
        try world.start()
        let count = 20_000
        try Self.burst(world, count: count)
        let documents = world.state.appendingPathComponent("containers/\(identifier)/Documents/checksums.tsv")
        func lines() -> [[Substring]] {
            ((try? String(contentsOf: documents, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.split(separator: "\t") }
        }
        try waitUntil("\(count) files are checksummed", timeout: 900) { lines().count >= count }
        try Self.waitIdle(world)
        let rows = lines()
        #expect(rows.count == count)
        #expect(Set(rows.map { $0[1] }).count == count)
        #expect(Set(rows.map { $0[0] }).count == count)
        // "ok 0" is 4 bytes; CRC-32 as zlib has it.
        #expect(rows.first { $0[1] == "f0.txt" }.map { Array($0[2...]) } == ["4", "b5de0886"])
        let started = world.journal(["MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c61"])
        #expect(started.count >= 1 && started.count <= 2)
        #expect(Set(started.compactMap { $0["INBOX_PID"] as? String }).count == started.count)
        #expect(world.events("finished", ["INBOX_HANDLER=\(identifier)"]).count == count)
        #expect(world.contents(of: world.containerInbox(identifier)).isEmpty)
        #expect(world.contents(of: world.failedDirectory).isEmpty)
    }

    @Test func twentyThousandFilesReachThePythonExampleExactlyOnce() throws {
        try checksumBurst(program: ExampleHandlersTests.repository.appendingPathComponent("handlers.d/bin/text-checksum"))
    }

    @Test func twentyThousandFilesReachTheSwiftKitExampleExactlyOnce() throws {
        try checksumBurst(program: Binaries.directory.appendingPathComponent("inboxd-example-checksum"))
    }

    @Test func theDescriptorIsReadOnlyAndTheCopyIsRemovedAfterDone() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world)
        try world.start()
        try world.drop("w.txt", contents: Array("write".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let got = Self.got(world)
        #expect(got.count == 1)
        #expect(got.first?[6] == "write-failed-9")  // EBADF: not open for writing
        let start = Self.log(world).first { $0.first == "start" }
        #expect(start?[1] == start?[2])  // LISTEN_PID is the instance's own pid
        #expect(start?[3] == "inbox")
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
    }

    @Test func retryAndFailedAnswersFollowTheRetryPolicy() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world)
        try world.start(config: "[Agent]\nMaxAttempts=2\nRetryDelaySec=200ms\n")
        try world.drop("again.txt", contents: Array("retry".utf8))
        try world.drop("bad.txt", contents: Array("fail".utf8))
        try waitUntil("both are in failed/") { world.contents(of: world.failedDirectory).count == 2 }
        let got = Self.got(world)
        #expect(got.filter { $0[3] == "again.txt" }.map { $0[4] } == ["1", "2"])
        #expect(got.filter { $0[3] == "bad.txt" }.map { $0[4] } == ["1", "2"])
        #expect(world.events("retry", ["INBOX_HANDLER=\(handler)"]).count == 2)
        #expect(attribute("user.inboxd.failure", of: world.failedDirectory.appendingPathComponent("bad.txt"))
                == "answered failed (fail) after 2 attempts")
    }

    @Test func killingAnInstanceMidBurstLosesNothing() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, "MaxInFlight=8\nTimeoutSec=120")
        try world.start(config: "[Agent]\nMaxAttempts=5\nRetryDelaySec=100ms\n")
        let count = 2000
        try Self.burst(world, count: count) { "slow \($0)" }
        try waitUntil("some files are answered") { Self.got(world).count >= 50 }
        let victim = Self.log(world).first { $0.first == "start" }.flatMap { Int32($0[1]) }
        #expect(victim != nil)
        if let victim { kill(victim, SIGKILL) }
        try waitUntil("every file is answered", timeout: 600) { Set(Self.got(world).map { $0[3] }).count >= count }
        try Self.waitIdle(world)
        #expect(Set(Self.got(world).map { $0[3] }).count == count)
        #expect(Self.log(world).filter { $0.first == "start" }.count >= 2)
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        let crashed = try Journal.wait(for: ["_PID=\(world.pid)", "MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c63"])
        #expect(crashed.first?["INBOX_PID"] as? String == victim.map { String($0) })
    }

    @Test func aHungDeliveryIsTimedOutAndTheInstanceReplaced() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, "TimeoutSec=2")
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        try world.drop("stuck.txt", contents: Array("hang".utf8))
        try waitUntil("the hung file is in failed/") { world.contents(of: world.failedDirectory) == ["stuck.txt"] }
        #expect(attribute("user.inboxd.failure", of: world.failedDirectory.appendingPathComponent("stuck.txt"))
                == "timed out after 1 attempt")
        let stopped = try Journal.wait(for: ["_PID=\(world.pid)", "MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c62"])
        #expect((stopped.first?["MESSAGE"] as? String)?.contains("no answer in time") == true)
        try world.drop("fine.txt", contents: Array("ok".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let pids = Set(Self.got(world).map { $0[1] })
        #expect(pids.count == 2)
    }

    /// What an instance starts outside its process group (a daemon in a session of its own) does not outlive it:
    /// when the instance ends (here it crashes), the agent kills what is left of its identity, as for a launched
    /// handler; with a named `User=`, the orphans it inherited that run as that user.
    @Test(.enabled(if: getuid() == 0, "identities need the agent to run as root"), arguments: ["", "User=nobody"])
    func aDaemonAnInstanceStartedDoesNotOutliveIt(user: String) throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, user)
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        try world.drop("spawn.txt", contents: Array("daemonize".utf8))
        try waitUntil("the daemon started") { Self.log(world).contains { $0.first == "daemon" } }
        let daemon = try #require(Self.log(world).first { $0.first == "daemon" }.flatMap { Int32($0[1]) })
        #expect(kill(daemon, 0) == 0, "running while its instance runs")
        try world.drop("crash.txt", contents: Array("crash".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c63"])
        // Gone, or a zombie waiting for whoever inherited it.
        try waitUntil("the daemon is gone") {
            guard let stat = try? String(contentsOfFile: "/proc/\(daemon)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        #expect(!world.journal(["INBOX_HANDLER=\(handler)", "PRIORITY=5"]).isEmpty, "the kill is logged")
    }

    @Test func anIdleInstanceExitsAndTheNextFileStartsAnother() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, "IdleExitSec=1")
        try world.start()
        try world.drop("one.txt", contents: Array("ok".utf8))
        try waitUntil("the instance saw end of file") { Self.log(world).contains { $0.first == "eof" } }
        let first = Self.log(world).first { $0.first == "start" }?[1]
        try waitUntil("status shows no instance") {
            let status = (try? String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)) ?? ""
            return status.contains("\"instances\":[]")
        }
        try world.drop("two.txt", contents: Array("ok".utf8))
        try waitUntil("the second file is answered") { Self.got(world).count == 2 }
        let starts = Self.log(world).filter { $0.first == "start" }.map { $0[1] }
        #expect(starts.count == 2)
        #expect(starts.first == first && starts.last != first)
        let stopped = world.journal(["MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c62", "INBOX_HANDLER=\(handler)"])
        #expect((stopped.first?["MESSAGE"] as? String)?.contains("idle") == true)
    }

    @Test func aReloadWhileBusyFinishesOnTheOldInstanceAndStartsANewOne() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, "MaxInFlight=4\nTimeoutSec=120")
        try world.start()
        let count = 400
        try Self.burst(world, count: count) { "slow \($0)" }
        try waitUntil("some files are answered") { Self.got(world).count >= 20 }
        // A changed registration (another environment): the running instance is replaced.
        _ = try Self.register(world, "MaxInFlight=4\nTimeoutSec=120\nEnvironment=CHANGED=1")
        try waitUntil("every file is answered", timeout: 300) { Set(Self.got(world).map { $0[3] }).count >= count }
        try Self.waitIdle(world)
        let got = Self.got(world)
        #expect(got.count == count)
        #expect(Set(got.map { $0[1] }).count == 2)
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
        #expect(world.contents(of: world.failedDirectory).isEmpty)
    }

    @Test func agentSIGTERMWhileBusyWaitsForAnswersAndLosesNothing() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, "TimeoutSec=120")
        try world.start()
        let count = 300
        try Self.burst(world, count: count) { "slow \($0)" }
        try waitUntil("some files are answered") { Self.got(world).count >= 10 }
        world.stop()
        #expect(world.process?.terminationStatus == 0)
        let answeredBefore = Set(Self.got(world).map { $0[3] })
        let left = Set(world.contents(of: world.containerInbox(handler)).filter { !$0.hasPrefix(".") })
        // Each file was either answered (and removed) or is still in the container for the next start.
        #expect(answeredBefore.isDisjoint(with: left.map { Substring($0) }))
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        try world.start()
        try waitUntil("every file is answered", timeout: 300) { Set(Self.got(world).map { $0[3] }).count >= count }
        try Self.waitIdle(world)
        #expect(Self.got(world).count == count)
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
    }

    /// The agent's stop ends an idle instance itself, before it exits: end of file on its socket (which the instance
    /// sees and exits 0 on), the instance reaped and its stop logged by the agent; a stubborn one (end of file and
    /// SIGTERM ignored) is killed within the stop sequence's bound. Nothing is left for a service manager to kill.
    @Test(arguments: [false, true])
    func agentSIGTERMEndsAnIdleInstanceBeforeItExits(stubborn: Bool) throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, stubborn ? "Environment=STUBBORN=1\nIdleExitSec=infinity" : "IdleExitSec=infinity")
        try world.start()
        try world.drop("one.txt", contents: Array("ok".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let instance = try #require(Self.log(world).first { $0.first == "start" }.flatMap { pid_t($0[1]) })
        #expect(kill(instance, 0) == 0, "the instance runs, idle")
        let agent = world.pid
        let stopping = Date()
        world.stop()
        let took = Date().timeIntervalSince(stopping)
        #expect(world.process?.terminationStatus == 0)
        // Gone the moment the agent is: not a zombie for someone else to reap, nor a process left running.
        #expect(kill(instance, 0) == -1 && errno == ESRCH, "pid \(instance) is still there after the agent exited")
        #expect(Self.log(world).contains { $0 == ["eof", Substring(String(instance))] }, "the instance saw end of file")
        // The agent reaped it and said so before it exited.
        let stopped = try Journal.wait(for: ["_PID=\(agent)", "MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c62",
                                             "INBOX_PID=\(instance)"])
        let message = stopped.first?["MESSAGE"] as? String ?? ""
        #expect(message.contains("the agent is stopping"), "\(message)")
        if stubborn {
            #expect(message.hasSuffix("it killed by signal 9"), "\(message)")
            // End of file, SIGTERM 1 s later, SIGKILL 1 s after that: well within the 10 s stop timeout.
            #expect(took < 8, "the stop took \(took) s")
        } else {
            #expect(message.hasSuffix("it exited with status 0"), "\(message)")
            #expect(took < 5, "the stop took \(took) s")
        }
    }

    /// A busy instance that ignores SIGTERM (its delivery hangs): at the stop timeout (10 s) it gets SIGTERM, 3 s later
    /// SIGKILL, and it is reaped before the agent exits; its delivery stays in the container for the next start.
    @Test func agentSIGTERMKillsAStubbornBusyInstanceWithinTheBound() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, "Environment=STUBBORN=1\nTimeoutSec=120")
        try world.start()
        try world.drop("stuck.txt", contents: Array("hang".utf8))
        try waitUntil("the instance holds the delivery") { !Self.got(world).isEmpty }
        let instance = try #require(Self.log(world).first { $0.first == "start" }.flatMap { pid_t($0[1]) })
        let agent = world.pid
        let stopping = Date()
        world.stop()
        let took = Date().timeIntervalSince(stopping)
        #expect(world.process?.terminationStatus == 0)
        #expect(took >= 10 && took < 17, "the stop took \(took) s")
        #expect(kill(instance, 0) == -1 && errno == ESRCH, "pid \(instance) is still there after the agent exited")
        let stopped = try Journal.wait(for: ["_PID=\(agent)", "MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c62",
                                             "INBOX_PID=\(instance)"])
        #expect(stopped.first?["MESSAGE"] as? String == "Stopped \(handler) (pid \(instance)): the agent is stopping; "
                + "it killed by signal 9")
        #expect(world.contents(of: world.containerInbox(handler)).filter { !$0.hasPrefix(".") } == ["stuck.txt"])
        #expect(world.contents(of: world.failedDirectory).isEmpty)
    }

    /// What an idle instance left running (a daemon in a session of its own) is killed and reaped by the agent's stop
    /// before it exits, as the instance is.
    @Test(.enabled(if: getuid() == 0, "identities need the agent to run as root"), arguments: ["", "User=nobody"])
    func agentSIGTERMEndsWhatAnInstanceLeftRunning(user: String) throws {
        let world = try AgentHarness()
        let handler = try Self.register(world, user + "\nIdleExitSec=infinity")
        try world.start()
        try world.drop("spawn.txt", contents: Array("daemonize".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let daemon = try #require(Self.log(world).first { $0.first == "daemon" }.flatMap { pid_t($0[1]) })
        #expect(kill(daemon, 0) == 0, "running while its instance runs")
        world.stop()
        #expect(world.process?.terminationStatus == 0)
        #expect(kill(daemon, 0) == -1 && errno == ESRCH, "pid \(daemon) is still there after the agent exited")
    }

    @Test func malformedAndSecondAnswersAreLoggedAndIgnored() throws {
        let world = try AgentHarness()
        let handler = try Self.register(world)
        try world.start()
        try world.drop("odd.txt", contents: Array("malformed".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let warnings = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_HANDLER=\(handler)", "PRIORITY=4"], count: 3)
        let messages = warnings.compactMap { $0["MESSAGE"] as? String }
        #expect(messages.contains { $0.contains("a malformed answer") })
        #expect(messages.filter { $0.contains("which it does not hold") }.count == 2)
        #expect(Self.got(world).count == 1)
        #expect(world.events("finished", ["INBOX_HANDLER=\(handler)"]).count == 1)
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
    }

    /// A stop while files wait for their batch (BatchWindowSec=): no batch is started any more, the agent exits at
    /// once, and the files stay in the container for the next start, which delivers them.
    @Test func agentSIGTERMStartsNoBatchAndKeepsWaitingFiles() throws {
        let world = try AgentHarness()
        let log = world.output.appendingPathComponent("batches")
        let script = try world.script("batch", "echo \"$# $*\" >> \(log.path)")
        let handler = "test.batch.\(world.tag)"
        try world.register(handler, exec: "\(script.path) %F", contentTypes: "public.plain-text",
                           extraHandler: "BatchSize=16\nBatchWindowSec=5s")
        try world.start()
        try Self.burst(world, count: 3)
        try waitUntil("the files wait in the container") {
            world.contents(of: world.containerInbox(handler)).filter { !$0.hasPrefix(".") }.count == 3
        }
        let stopping = Date()
        world.stop()
        let took = Date().timeIntervalSince(stopping)
        #expect(world.process?.terminationStatus == 0)
        #expect(took < 4, "the stop took \(took) s: it waited for the batch window")
        #expect(!FileManager.default.fileExists(atPath: log.path), "a batch was started while stopping")
        #expect(world.contents(of: world.containerInbox(handler)).filter { !$0.hasPrefix(".") }.sorted()
                == ["f0.txt", "f1.txt", "f2.txt"])
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        try world.start()
        try waitUntil("the files are delivered after the restart") {
            world.events("finished", ["INBOX_HANDLER=\(handler)"]).count == 3
        }
    }

    @Test func aBatchWithOneBadFileFailsOnlyThatFile() throws {
        let world = try AgentHarness()
        let log = world.output.appendingPathComponent("batches")
        // Records its arguments, and fails when one of its files says "bad".
        let script = try world.script("batch", """
            echo "$# $*" >> \(log.path)
            for f in "$@"; do grep -q bad "$f" && exit 1; done
            exit 0
            """)
        let handler = "test.batch.\(world.tag)"
        try world.register(handler, exec: "\(script.path) %F", contentTypes: "public.plain-text",
                           extraHandler: "BatchSize=16\nBatchWindowSec=500ms")
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        try Self.burst(world, count: 10) { $0 == 4 ? "bad" : "good" }
        try waitUntil("the bad file is in failed/") { world.contents(of: world.failedDirectory) == ["f4.txt"] }
        try Self.waitIdle(world)
        let runs = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
        // At least one run took several files; then each went again alone.
        #expect(runs.contains { (Int($0.split(separator: " ")[0]) ?? 0) > 1 })
        #expect(runs.filter { $0.hasPrefix("1 ") }.count >= 1)
        #expect(world.events("finished", ["INBOX_HANDLER=\(handler)"]).count == 9)
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
    }
}
