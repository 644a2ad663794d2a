import Foundation
import Glibc
import Synchronization
import Testing

/// What a person starting the agent sees: where its entries go (`--log-target auto`), the line saying it is ready,
/// a fatal error on stderr, a journal that stops answering, a binary the sniffer cannot reach, and the status file
/// in place by the time READY=1 is sent.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct StartupTests {
    /// Everything a process writes to a pipe, collected as it comes (never a blocking read in the test).
    final class Collected: @unchecked Sendable {
        // @unchecked: the text is behind a Mutex; the pipe is only read by its readability handler.
        let pipe = Pipe()
        private let text = Mutex("")

        init() {
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                self?.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }

        var value: String { text.withLock { $0 } }

        deinit { pipe.fileHandleForReading.readabilityHandler = nil }
    }

    /// The agent's arguments for `world`, as AgentHarness.start gives them.
    static func arguments(_ world: AgentHarness) -> [String] {
        ["--inbox", world.inbox.path, "--handlers", world.handlers.path, "--state", world.state.path,
         "--runtime-dir", world.runtime.path, "--defaults", world.root.appendingPathComponent("defaults.conf").path]
    }

    static func launch(_ executable: String, _ arguments: [String], stderr: Collected,
                       environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardError = stderr.pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    static func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    // MARK: Where entries go

    @Test func withoutATerminalEntriesGoToTheJournalAndStderrHearsOnlyThatItIsReady() throws {
        let world = try AgentHarness()
        let stderr = Collected()
        let process = try Self.launch(Binaries.inboxd.path, Self.arguments(world), stderr: stderr)
        defer { Self.stop(process) }
        Journal.remember(pid: process.processIdentifier, after: nil)
        try waitUntil("the ready line is on stderr") { stderr.value.contains("\n") }
        _ = try Journal.wait(for: ["_PID=\(process.processIdentifier)", "MESSAGE=Watching 1 inbox"])
        Self.stop(process)
        #expect(stderr.value == "inboxd: Ready: watching \(world.inbox.path), 0 registration(s); logging to the journal "
                + "(journalctl -f -t inboxd)\n")
    }

    @Test func aStderrThatIsTheJournalStreamGetsNoReadyLine() throws {
        let world = try AgentHarness()
        let stderr = Collected()
        // JOURNAL_STREAM names the stream systemd connected stderr to, as DEVICE:INODE: here, the pipe itself.
        var st = stat()
        #expect(fstat(stderr.pipe.fileHandleForWriting.fileDescriptor, &st) == 0)
        let process = try Self.launch(Binaries.inboxd.path, Self.arguments(world), stderr: stderr,
                                      environment: ["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino)"])
        defer { Self.stop(process) }
        Journal.remember(pid: process.processIdentifier, after: nil)
        try waitUntil("the agent is ready") {
            FileManager.default.fileExists(atPath: world.runtime.appendingPathComponent("status.json").path)
        }
        _ = try Journal.wait(for: ["_PID=\(process.processIdentifier)", "MESSAGE=Watching 1 inbox"])
        Self.stop(process)
        #expect(stderr.value == "", "stderr is the journal: nothing is said there twice")
    }

    @Test func onATerminalEntriesAreLinesThere() throws {
        let world = try AgentHarness()
        let log = world.root.appendingPathComponent("terminal.log")
        let command = ([Binaries.inboxd.path] + Self.arguments(world)).map { "'\($0)'" }.joined(separator: " ")
        // script(1) gives the agent a pseudo-terminal as stdin, stdout and stderr, and copies what it shows.
        let stderr = Collected()
        let script = try Self.launch("/usr/bin/script", ["-qfec", command, log.path], stderr: stderr)
        defer { Self.stop(script) }
        var shown = ""
        try waitUntil("the agent says it is ready on the terminal") {
            shown = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return shown.contains("logging here")
        }
        #expect(shown.contains("inboxd: Watching 1 inbox"), "the entries are on the terminal: \(shown)")
        #expect(shown.contains("inboxd: Ready: watching \(world.inbox.path), 0 registration(s); logging here"))
        // Stop the agent itself (its pid is in the status file), then script ends with it.
        let statusFile = world.runtime.appendingPathComponent("status.json").path
        try waitUntil("the status file is there") { FileManager.default.fileExists(atPath: statusFile) }
        let status = try String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)
        let pid = try #require(status.firstMatch(of: /"pid":(\d+)/).flatMap { Int32($0.1) })
        kill(pid, SIGTERM)
        script.waitUntilExit()
    }

    @Test func aFatalStartUpErrorReachesStderrToo() throws {
        let world = try AgentHarness()
        let stderr = Collected()
        // /proc refuses a new directory: the state directory cannot be made, and the agent cannot run.
        var arguments = Self.arguments(world)
        arguments[arguments.firstIndex(of: "--state")! + 1] = "/proc/inboxd-state-\(world.tag)"
        let process = try Self.launch(Binaries.inboxd.path, arguments + ["--log-target", "journal"], stderr: stderr)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        try waitUntil("the error is on stderr") { stderr.value.contains("\n") }
        #expect(stderr.value.hasPrefix("inboxd: inboxd failed: "), "stderr: \(stderr.value)")
        #expect(stderr.value.contains("/proc/inboxd-state-\(world.tag)"))
    }

    // MARK: A journal that does not answer

    @Test(.enabled(if: getuid() == 0 && FileManager.default.fileExists(atPath: "/run/systemd/journal"),
                   "needs root (a mount namespace) and /run/systemd/journal"))
    func aJournalThatDoesNotAnswerIsSaidOnceAndEntriesGoToStderrUntilItIsBack() throws {
        let world = try AgentHarness()
        let handler = "test.journal-down.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        // In a mount namespace of its own, the agent finds this directory at /run/systemd/journal: a socket file
        // nobody listens on, as journald leaves it when it stops.
        let journal = world.root.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        let socket = journal.appendingPathComponent("socket").path
        let stale = try run("/usr/bin/python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])", socket])
        #expect(stale.status == 0, "\(stale.stderr)")
        let stderr = Collected()
        let process = try Self.launch("/usr/bin/unshare", [
            "--mount", "--propagation", "private", "/bin/sh", "-c",
            "mount --bind \"$0\" /run/systemd/journal && exec \"$@\"", journal.path, Binaries.inboxd.path,
        ] + Self.arguments(world) + ["--log-target", "journal"], stderr: stderr)
        defer { Self.stop(process) }
        try waitUntil("the agent is ready") { stderr.value.contains("Ready:") }
        let said = "inboxd: the journal does not answer (Connection refused); logging to stderr until it is back\n"
        #expect(stderr.value.hasPrefix(said), "stderr: \(stderr.value)")
        #expect(stderr.value.contains("inboxd: Watching 1 inbox ["), "the entries are on stderr, fields and all")
        try world.drop("while-down.txt", contents: Array("a".utf8))
        try waitUntil("the delivery is logged on stderr") { stderr.value.contains("while-down.txt") && stderr.value.contains("INBOX_EVENT=finished") }
        #expect(Self.occurrences(of: "does not answer", in: stderr.value) == 1, "said once: \(stderr.value)")

        // The journal is back: entries go to it again, and stderr hears that once.
        unlink(socket)
        let journald = try NotifySocket(path: socket)
        try world.drop("once-back.txt", contents: Array("b".utf8))
        var entry: [String: String] = [:]
        while entry["INBOX_EVENT"] != "finished" {
            entry = try #require(journald.receive(), "no entry reached the journal socket")
        }
        #expect(entry["SYSLOG_IDENTIFIER"] == "inboxd")
        #expect(entry["INBOX_FILE"]?.hasSuffix("once-back.txt") == true)
        // Said right after the first entry the journal took: wait for the pipe to bring it.
        let back = "inboxd: the journal answers again; logging there\n"
        try waitUntil("stderr hears that the journal is back") { stderr.value.contains(back) }
        #expect(Self.occurrences(of: back, in: stderr.value) == 1)
        // (The handler's own output has no journal stream here, which needs journald's stdout socket: it is on stderr.)
        let agentLines = stderr.value.split(separator: "\n").filter { $0.hasPrefix("inboxd: ") }
        #expect(!agentLines.contains { $0.contains("once-back.txt") }, "no entry of it on stderr once the journal answers")
    }

    // MARK: The sniffer's binary

    @Test(.enabled(if: getuid() == 0, "the sniffer runs under an identity of its own only when the agent is root"))
    func aBinaryTheSnifferCannotReachIsDiagnosedWithTheDirectoryInTheWay() throws {
        let world = try AgentHarness()
        // A checkout under /root: the binary sits in a directory only root may enter. A hard link on the same
        // filesystem stands for it.
        let private_ = Binaries.directory.appendingPathComponent("private-\(world.tag)")
        try FileManager.default.createDirectory(at: private_, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: private_) }
        #expect(chmod(private_.path, 0o700) == 0)
        let binary = private_.appendingPathComponent("inboxd")
        #expect(link(Binaries.inboxd.path, binary.path) == 0)
        let stderr = Collected()
        let process = try Self.launch(binary.path, Self.arguments(world) + ["--log-target", "journal"], stderr: stderr)
        defer { Self.stop(process) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        try waitUntil("the reason is on stderr") { stderr.value.contains("\n") }
        let text = stderr.value
        #expect(text.contains("cannot reach \(binary.path): \(private_.path) is mode 0700, owner uid 0"), "\(text)")
        #expect(text.contains("or set ContentSniffing=no"))
        #expect(!text.contains("libmagic-mgc"), "libmagic is not to blame: \(text)")
    }

    // MARK: READY=1

    @Test func theStatusFileIsThereWhenReadyIsSent() throws {
        let world = try AgentHarness()
        let socket = try NotifySocket(path: world.root.appendingPathComponent("notify").path)
        try world.start(environment: ["NOTIFY_SOCKET": socket.path], waitForStatus: false)
        #expect(try socket.next(ignoringStatusOnly: true)["READY"] == "1")
        // Asked the moment READY=1 arrives, as `systemctl start inboxd && inboxctl status` would.
        let status = try run(Binaries.inboxctl.path, ["status", "--runtime-dir", world.runtime.path])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.hasPrefix("inboxd (pid \(world.pid)) running"))
    }
}
