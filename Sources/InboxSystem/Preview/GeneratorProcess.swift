import Glibc

/// A program a built-in generator runs, found by name, and the Debian package that provides it.
struct GeneratorTool: Sendable, Hashable {
    let name: String
    let package: String

    static let pdfinfo = GeneratorTool(name: "pdfinfo", package: "poppler-utils")
    static let pdftoppm = GeneratorTool(name: "pdftoppm", package: "poppler-utils")
    static let ghostscript = GeneratorTool(name: "gs", package: "ghostscript")
    static let pixbuf = GeneratorTool(name: "gdk-pixbuf-thumbnailer", package: "libgdk-pixbuf2.0-bin")
    static let unzip = GeneratorTool(name: "unzip", package: "unzip")
    static let pango = GeneratorTool(name: "pango-view", package: "pango1.0-tools")
    static let chafa = GeneratorTool(name: "chafa", package: "chafa")
    static func office(_ package: String) -> GeneratorTool { GeneratorTool(name: "soffice", package: package) }

    /// Its executable, or `.unsupported` naming the package to install.
    func locate() -> Result<String, PreviewError> {
        if let path = Self.locate(name) { return .success(path) }
        return .failure(.unsupported("\(name) is not installed; install \(package)"))
    }

    /// An executable regular file named `name` in /usr/bin, /bin, then the absolute directories of the caller's
    /// PATH, in that order: the distribution's tools first, before whatever /usr/local/bin holds under the same name.
    /// An absolute `name` is taken as it is, if it is executable.
    static func locate(_ name: String) -> String? {
        if name.hasPrefix("/") { return isExecutable(name) ? name : nil }
        guard !name.isEmpty, !name.contains("/") else { return nil }
        let path = CurrentProcess.environment("PATH") ?? ""
        let directories = ["/usr/bin", "/bin"] + path.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        for directory in directories {
            let candidate = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            if isExecutable(candidate) { return candidate }
        }
        return nil
    }

    private static func isExecutable(_ path: String) -> Bool {
        guard let st = try? FileSystem.status(path) else { return false }
        return (st.st_mode & S_IFMT) == S_IFREG && st.st_mode & 0o111 != 0
    }
}

/// One run of a generator's program: what it runs, what it reads and where its output goes.
struct GeneratorProcess {
    /// What the person reads in a failure: "pdftoppm".
    var name: String
    var executable: String
    /// argv, `argv[0]` included.
    var arguments: [String]
    /// Its stdin (a document's descriptor, read as /dev/stdin); nil is /dev/null. The caller keeps it.
    var input: FileDescriptor?
    /// Its stdout; nil is the log (with stderr). The caller keeps it.
    var output: FileDescriptor?
    /// Directories beneath which it may write besides HOME and TMPDIR (Landlock).
    var writable: [String] = []
    var addressSpace: UInt64
    var fileSize: UInt64
    /// `KEY=value` added to the minimal environment.
    var environment: [String] = []
    /// Where it starts; nil is HOME.
    var workingDirectory: String?
    /// Directories where it may make a Unix socket, and nothing else (LibreOffice's single-instance pipe in /tmp).
    var sockets: [String] = []

    init(_ name: String, executable: String, arguments: [String], addressSpace: UInt64, fileSize: UInt64) {
        self.name = name
        self.executable = executable
        self.arguments = [name] + arguments
        self.addressSpace = addressSpace
        self.fileSize = fileSize
    }
}

/// Runs generator processes as viewers run (PreviewSession): as `identity` (nil: the caller), in a session and process
/// group of their own killed whole at the end, with no_new_privs, SIGKILL when the spawning thread goes, Landlock
/// reading and executing everywhere and writing only in HOME, TMPDIR and the run's own directories, and bounded in
/// time, address space and file size, with no core dumps.
struct GeneratorSandbox {
    let scratch: PreviewScratch
    let identity: Identity?
    let landlockABI: Int
    let timeout: Duration

    /// How many bytes of its output are kept for a failure's message.
    static let logTail = 4096

    /// Runs `process` to its end: success when it exited with status 0, with the last of what it wrote to its log.
    func run(_ process: GeneratorProcess) -> Result<String, PreviewError> {
        let log: FileDescriptor
        do { log = try scratch.makeLog(process.name) } catch { return .failure(.system(error)) }
        defer { log.close() }
        let null: FileDescriptor
        do { null = try openNullDevice() } catch { return .failure(.system(error)) }
        defer { null.close() }

        var ruleset: LandlockRuleset?
        if landlockABI > 0 {
            do throws(SystemError) {
                let sandbox = try LandlockRuleset(abi: landlockABI)
                try sandbox.allow(.readExecute, beneath: "/")
                try sandbox.allow([.readFile, .writeFile], beneath: "/dev/null")
                for directory in [scratch.home, scratch.tmp] + process.writable {
                    try sandbox.allow(LandlockAccess.all(abi: landlockABI), beneath: directory)
                }
                for directory in process.sockets { try sandbox.allow(.makeSock, beneath: directory) }
                ruleset = sandbox
            } catch {
                return .failure(.system(error))
            }
        }
        defer { ruleset?.descriptor.close() }

        var request = SpawnRequest(
            executablePath: process.executable, arguments: process.arguments,
            environment: ["PATH=/usr/bin:/bin", "HOME=\(scratch.home)", "TMPDIR=\(scratch.tmp)", "LANG=C.UTF-8"]
                + process.environment,
            standardInput: process.input ?? null, standardOutput: process.output ?? log, standardError: log)
        if let identity {
            request.uid = identity.uid
            request.gid = identity.gid
            request.supplementaryGroups = identity.groups
        }
        request.workingDirectory = process.workingDirectory ?? scratch.home
        request.landlockRuleset = ruleset?.descriptor
        request.parentDeathSignal = SIGKILL
        request.resourceLimits = [
            ResourceLimit(.addressSpace, process.addressSpace),
            ResourceLimit(.fileSize, process.fileSize),
            ResourceLimit(.coreSize, 0),
        ]
        let child: SpawnedProcess
        do { child = try spawn(request) } catch {
            return .failure(.system(SystemError(error.step, path: error.path, errno: error.errno)))
        }
        defer { child.pidfd.close() }
        switch wait(for: child) {
        case .timedOut:
            return .failure(.timedOut(timeout))
        case .ended(.exited(0)):
            return .success(Self.tail(of: log))
        case .ended(let status):
            return .failure(.failed(Self.explain(status, of: process, output: Self.tail(of: log))))
        }
    }

    private enum Ending {
        case ended(ExitStatus)
        case timedOut
    }

    /// Waits for the process, stopping its process group at the time bound: SIGTERM, then SIGKILL two seconds later.
    /// Whatever is left in its group once it has ended is killed too.
    private func wait(for process: SpawnedProcess) -> Ending {
        let started = ContinuousClock.now
        var stopping: ContinuousClock.Instant?
        while true {
            if let ready = try? process.pidfd.poll(CShort(POLLIN), timeout: .milliseconds(100)), ready != 0 {
                // Ended, not yet reaped: its pid, and so its process group's id, cannot be anyone else's yet.
                Signals.send(.kill, toGroup: process.pid)
                if let status = reap(process) { return stopping == nil ? .ended(status) : .timedOut }
            }
            let now = ContinuousClock.now
            if let since = stopping {
                if now - since > .seconds(2) { Signals.send(.kill, toGroup: process.pid) }
            } else if now - started > timeout {
                stopping = now
                Signals.send(.terminate, toGroup: process.pid)
            }
        }
    }

    /// The sentence for a failed run: how it ended and the last line it wrote.
    static func explain(_ status: ExitStatus, of process: GeneratorProcess, output: String) -> String {
        let last = lastLine(output)
        let said = last.isEmpty ? "" : ": " + last
        if ranOutOfMemory(output) {
            return "\(process.name) ran out of its \(byteCount(process.addressSpace)) of memory\(said)"
        }
        switch status {
        // A shell reports a child SIGXFSZ ended as its own status 128 + 25.
        case .signaled(SIGXFSZ), .exited(128 + SIGXFSZ):
            return "\(process.name) was stopped: it wrote more than \(byteCount(process.fileSize))"
        case .exited(let code):
            return "\(process.name) exited with status \(code)\(said)"
        case .signaled(SIGKILL):
            // Not ours (the time bound is reported as such): the kernel's OOM killer, or someone else.
            return "\(process.name) was killed (SIGKILL; the system may have run out of memory)\(said)"
        case .signaled(let signal):
            return "\(process.name) crashed (signal \(signal)\(signalName(signal).map { ", " + $0 } ?? ""))\(said)"
        }
    }

    /// What programs print when an allocation fails (glib, C++, Python, Ghostscript's VMerror, libc's strerror).
    private static func ranOutOfMemory(_ output: String) -> Bool {
        let text = output.lowercased()
        return ["out of memory", "cannot allocate memory", "memoryerror", "bad_alloc", "failed to allocate",
                "allocation failed", "not enough memory", "vmerror"].contains { text.contains($0) }
    }

    private static func signalName(_ signal: CInt) -> String? {
        switch signal {
        case SIGSEGV: "SIGSEGV"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGILL: "SIGILL"
        case SIGFPE: "SIGFPE"
        case SIGTRAP: "SIGTRAP"
        case SIGTERM: "SIGTERM"
        case SIGXCPU: "SIGXCPU"
        default: nil
        }
    }

    /// The last non-empty line, control characters dropped, at most 200 characters.
    static func lastLine(_ output: String) -> String {
        let line = output.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .last(where: { !$0.allSatisfy { $0 == " " || $0 == "\t" } }) ?? ""
        let visible = String(String.UnicodeScalarView(line.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F
                && !(0x80...0x9F).contains($0.value) }))
        let trimmed = visible.trimmingCharacters(in: " \t")
        return trimmed.count > 200 ? String(trimmed.prefix(200)) + "…" : trimmed
    }

    /// The log's last bytes, as text.
    static func tail(of log: FileDescriptor) -> String {
        guard let size = try? log.status().st_size, size > 0 else { return "" }
        let start = max(0, Int64(size) - Int64(logTail))
        var bytes = [UInt8](repeating: 0, count: Int(Int64(size) - start))
        let count = (try? bytes.withUnsafeMutableBytes { buffer throws(Errno) in try log.read(fully: buffer, at: start) }) ?? 0
        return String(decoding: bytes.prefix(count), as: UTF8.self)
    }
}

/// "2 GiB", "16 MiB", "1500 bytes": a bound as a person reads it.
func byteCount(_ bytes: UInt64) -> String {
    for (unit, shift) in [("GiB", UInt64(30)), ("MiB", 20), ("KiB", 10)] where bytes >= 1 << shift {
        let whole = bytes >> shift
        if whole << shift == bytes { return "\(whole) \(unit)" }
        let tenths = (bytes * 10 + (1 << shift) / 2) >> shift
        return "\(tenths / 10).\(tenths % 10) \(unit)"
    }
    return "\(bytes) bytes"
}

private extension String {
    func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, set.contains(last) { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
