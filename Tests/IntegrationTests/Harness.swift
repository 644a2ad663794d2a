import Foundation
import Glibc
import Synchronization
import Testing

/// A temporary world for one agent: Inbox, state, runtime and handlers.d directories, the
/// recording handler script, and the running `inboxd` process.
final class AgentHarness: @unchecked Sendable {
    // @unchecked: each test owns its harness and uses it from one task at a time.
    let root: URL
    let inbox: URL
    let state: URL
    let runtime: URL
    let handlers: URL
    let output: URL
    let tag: String
    private(set) var process: Process?
    private var stderrPipe = Pipe()

    init(_ name: String = #function) throws {
        tag = String(UUID().uuidString.prefix(8)).lowercased()
        root = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("inboxd-it-\(name.filter { $0.isLetter || $0.isNumber })-\(tag)")
        inbox = root.appendingPathComponent("Inbox")
        state = root.appendingPathComponent("state")
        runtime = root.appendingPathComponent("run")
        handlers = root.appendingPathComponent("handlers.d")
        output = root.appendingPathComponent("output")
        for dir in [inbox, state, runtime, handlers, output] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        // Handlers without User= run under identities of their own (not root): they record here.
        chmod(root.path, 0o755)
        chmod(output.path, 0o1777)
        try Self.recorder.write(to: recorderURL, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: recorderURL.path)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    var recorderURL: URL { root.appendingPathComponent("record-handler") }

    /// Records argv, the INBOX_* environment and stdin to output/<delivery-id>, prints a line, exits with $EXIT_CODE.
    static let recorder = """
        #!/bin/sh
        out="$OUTPUT_DIR/$INBOX_DELIVERY_ID.$INBOX_ATTEMPT"
        {
          printf 'argv:'; for a in "$@"; do printf ' [%s]' "$a"; done; echo
          env | grep '^INBOX_' | sort
          echo 'stdin:'; cat
        } > "$out.tmp" && mv "$out.tmp" "$out"
        [ -n "$SLEEP" ] && sleep "$SLEEP"
        echo "recorded $INBOX_NAME type=$INBOX_CONTENT_TYPE from=${INBOX_SOURCE_APP:-none} attempt=$INBOX_ATTEMPT"
        exit ${EXIT_CODE:-0}

        """

    /// Writes `handlers.d/<id>.handler` running the recorder, plus any extra sections.
    func register(_ identifier: String, contentTypes: String, rank: String = "Default", exit: Int = 0,
                  sleep: String? = nil, extraHandler: String = "", extraSections: String = "") throws {
        var environment = "EXIT_CODE=\(exit)"
        if let sleep { environment += " SLEEP=\(sleep)" }
        let text = registrationText(identifier, exec: "\(recorderURL.path) --file %f --type %t --source %s",
                                    contentTypes: contentTypes, rank: rank, environment: environment,
                                    extraHandler: extraHandler, extraSections: extraSections)
        try write(text, to: handlers.appendingPathComponent("\(identifier).handler"))
    }

    /// Writes a file under a hidden name, then renames it into place (replacing one already there), so that a
    /// watching agent only ever reads it whole.
    func write(_ text: String, to url: URL) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        try text.write(to: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary.path, url.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Starts inboxd on this world's directories; `environment` adds to (or replaces) the test's own variables.
    /// `waitForStatus: false` returns as soon as the process runs (a test that watches start-up itself). `through`
    /// is a command that ends by exec'ing its last arguments (the agent's path and arguments follow it), so the
    /// process's PID is the agent's: a mount namespace of its own, say.
    func start(_ extraArguments: [String] = [], config: String? = nil, environment: [String: String] = [:],
               waitForStatus: Bool = true, through prefix: [String] = []) throws {
        var arguments = ["--inbox", inbox.path, "--handlers", handlers.path, "--state", state.path,
                         "--runtime-dir", runtime.path, "--defaults", root.appendingPathComponent("defaults.conf").path]
        if let config {
            let url = root.appendingPathComponent("inboxd.conf")
            try config.write(to: url, atomically: true, encoding: .utf8)
            arguments += ["--config", url.path]
        }
        let process = Process()
        if let first = prefix.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = prefix.dropFirst() + [Binaries.inboxd.path] + arguments + extraArguments
        } else {
            process.executableURL = Binaries.inboxd
            process.arguments = arguments + extraArguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        // A pipe per run: Foundation closes the write end it gave the previous one.
        stderrPipe = Pipe()
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        // pid_max is 32768 here and a test run starts tens of thousands of processes: an earlier
        // agent may have had this pid. Queries by _PID only look past this point of the journal.
        let cursor = Journal.currentCursor()
        try process.run()
        self.process = process
        Journal.remember(pid: process.processIdentifier, after: cursor)
        guard waitForStatus else { return }
        // The status file appears once every watch is in place.
        try waitUntil("the agent is ready") { FileManager.default.fileExists(atPath: self.runtime.appendingPathComponent("status.json").path) }
    }

    var pid: Int32 { process?.processIdentifier ?? 0 }

    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// Drops a file the way `inboxctl send` does: hidden name, attributes, rename into place.
    @discardableResult
    func drop(_ name: String, contents: [UInt8], attributes: [String: String] = [:]) throws -> URL {
        let hidden = inbox.appendingPathComponent(".\(name).part")
        try Self.writeClosingOnExec(contents, to: hidden)
        for (key, value) in attributes {
            try setAttribute(key, value, on: hidden)
        }
        let target = inbox.appendingPathComponent(name)
        guard rename(hidden.path, target.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return target
    }

    /// Writes a file through a descriptor opened O_CLOEXEC. Foundation's Data.write opens without it, so a process
    /// another test spawns at that moment (a `sleep 60`, a tmux) inherits the write descriptor and keeps it for its
    /// life: the agent then rightly refuses the file as still open for writing by its sender.
    static func writeClosingOnExec(_ contents: [UInt8], to url: URL) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var offset = 0
        while offset < contents.count {
            let written = contents[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            offset += written
        }
    }

    /// The recorder's files, keyed by their name (delivery id and attempt).
    func recordings() -> [String: String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: output.path)) ?? []
        var result: [String: String] = [:]
        for name in names where !name.hasSuffix(".tmp") {
            result[name] = try? String(contentsOf: output.appendingPathComponent(name), encoding: .utf8)
        }
        return result
    }

    /// The type each recorded file was delivered as: `INBOX_CONTENT_TYPE` by `INBOX_NAME`, from the recordings (the
    /// first line of a key counts when it appears twice).
    func recordedContentTypes() -> [String: String] {
        var decided: [String: String] = [:]
        for recording in recordings().values {
            let environment = Dictionary(recording.split(separator: "\n").compactMap { line -> (String, String)? in
                guard let equals = line.firstIndex(of: "=") else { return nil }
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }, uniquingKeysWith: { first, _ in first })
            if let name = environment["INBOX_NAME"] { decided[name] = environment["INBOX_CONTENT_TYPE"] }
        }
        return decided
    }

    func contents(of directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    var failedDirectory: URL { state.appendingPathComponent("failed") }
    var unhandledDirectory: URL { state.appendingPathComponent("unhandled") }
    func containerInbox(_ handler: String) -> URL { state.appendingPathComponent("containers/\(handler)/Inbox") }

    /// What the agent wrote to stderr so far (only when it logs there).
    func agentStderr() -> String {
        String(decoding: stderrPipe.fileHandleForReading.availableData, as: UTF8.self)
    }

    /// This agent's own journal entries (`_PID`), as JSON objects.
    func journal(_ matches: [String] = []) -> [[String: Any]] {
        Journal.entries(["_PID=\(pid)"] + matches)
    }
}

/// Polls `condition` until it holds or the deadline passes; a test waits on what it can observe.
/// Stops a server a test started (by its PID only): SIGTERM, SIGKILL if it still runs after `grace`, then waits for it.
func stopStarted(_ process: Process, grace: TimeInterval) {
    guard process.isRunning else { return }
    process.terminate()
    let deadline = Date().addingTimeInterval(grace)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
}

func waitUntil(_ what: String, timeout: TimeInterval = 30, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return }
        usleep(20_000)
    }
    Issue.record("timed out after \(Int(timeout)) s waiting until \(what)")
    throw WaitTimeout(what: what)
}

struct WaitTimeout: Error { let what: String }

enum Binaries {
    /// The built products sit beside the test bundle.
    static let directory: URL = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("inboxd").path) && dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()
    static var inboxd: URL { directory.appendingPathComponent("inboxd") }
    static var inboxctl: URL { directory.appendingPathComponent("inboxctl") }
}

/// Runs a command; returns its status and output.
@discardableResult
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

enum Journal {
    /// A journald is listening (CI starts one; see scripts/journald).
    static let available: Bool = {
        // The socket file outlives a journald that exited, so only a connect says one listens. (Scanning
        // /proc/net/unix misses entries while other processes open and close sockets: it is read in pieces.)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array("/run/systemd/journal/socket".utf8CString)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.map { UInt8(bitPattern: $0) }.prefix(raw.count))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0 && FileManager.default.fileExists(atPath: "/usr/bin/journalctl")
    }()

    static let unavailableReason = "no journald is running (start one with scripts/journald start)"

    private static let cursors = Mutex<[Int32: String]>([:])

    /// The journal's current end, as a cursor; nil when the journal is empty.
    static func currentCursor() -> String? {
        guard let result = try? run("/usr/bin/journalctl", ["--no-pager", "-n", "1", "-o", "cat", "--show-cursor"]) else {
            return nil
        }
        return result.stdout.split(separator: "\n").last { $0.hasPrefix("-- cursor: ") }
            .map { String($0.dropFirst("-- cursor: ".count)) }
    }

    /// Entries matched by `_PID=pid` must come after `cursor` (see AgentHarness.start).
    static func remember(pid: Int32, after cursor: String?) {
        cursors.withLock { $0[pid] = cursor }
    }

    static func entries(_ matches: [String]) -> [[String: Any]] {
        var arguments = ["--no-pager", "-o", "json"]
        if let pidMatch = matches.first(where: { $0.hasPrefix("_PID=") }), let pid = Int32(pidMatch.dropFirst(5)),
           let cursor = cursors.withLock({ $0[pid] }) {
            // --cursor, not --after-cursor: journalctl 252 with matches skips the first match after the cursor.
            arguments.append("--cursor=\(cursor)")
        }
        guard let result = try? run("/usr/bin/journalctl", arguments + matches) else { return [] }
        return result.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// Waits until entries matching all `matches` exist; returns them.
    static func wait(for matches: [String], count: Int = 1, timeout: TimeInterval = 30) throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        try waitUntil("journal has \(count) entr\(count == 1 ? "y" : "ies") for \(matches.joined(separator: " "))", timeout: timeout) {
            found = entries(matches)
            return found.count >= count
        }
        return found
    }
}

/// A minimal valid PNG of the given size (signature + IHDR + IEND; enough for type and dimensions).
func pngBytes(width: UInt32, height: UInt32) -> [UInt8] {
    func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    bytes += be(13) + Array("IHDR".utf8) + be(width) + be(height) + [8, 6, 0, 0, 0] + be(0)
    bytes += be(0) + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
    return bytes
}

/// setfattr(1), as a user would; fails the test if it fails.
func setAttribute(_ name: String, _ value: String, on url: URL) throws {
    let result = try run("/usr/bin/setfattr", ["-n", name, "-v", value, url.path])
    guard result.status == 0 else { throw POSIXError(.EIO) }
}

/// getfattr(1): the attribute's value, or nil when absent.
func attribute(_ name: String, of url: URL) -> String? {
    guard let result = try? run("/usr/bin/getfattr", ["--only-values", "-n", name, url.path]), result.status == 0 else {
        return nil
    }
    return result.stdout
}

/// getfattr(1): the user.* attribute names a file carries.
func attributeNames(_ path: String) -> [String] {
    guard let result = try? run("/usr/bin/getfattr", ["--absolute-names", "-d", "-m", "^user\\.", path]), result.status == 0 else {
        return []
    }
    return result.stdout.split(separator: "\n").filter { $0.hasPrefix("user.") }.map { String($0.prefix { $0 != "=" }) }
}
