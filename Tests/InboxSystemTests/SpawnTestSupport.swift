import Glibc
import InboxSystem

/// A private temporary directory for one test's files.
struct ScratchDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/inbox-spawn-test-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw SystemError("mkdtemp", errno: .current) }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func path(_ name: String) -> String { "\(path)/\(name)" }

    /// Creates (or truncates) a file, read-write and close-on-exec.
    func create(_ name: String) throws -> FileDescriptor {
        let fd = open(path(name), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("open", path: path(name), errno: .current) }
        return FileDescriptor(rawValue: fd)
    }

    func read(_ name: String) throws -> [UInt8] {
        let fd = open(path(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: path(name), errno: .current) }
        defer { close(fd) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return contents }
            guard count > 0 else { throw SystemError("read", path: path(name), errno: .current) }
            contents += chunk[..<count]
        }
    }

    /// Removes the files in the directory (no subdirectories) and the directory itself.
    func remove() {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { unlink(path(name)) }
            }
            closedir(directory)
        }
        rmdir(path)
    }
}

/// What a finished child left behind.
struct Outcome {
    var status: ExitStatus
    var stdout: [UInt8]
    var stderr: [UInt8]
    var pid: pid_t

    var output: String { String(decoding: stdout, as: UTF8.self) }
    var errorOutput: String { String(decoding: stderr, as: UTF8.self) }
}

/// Spawns `arguments[0]` with `arguments` as argv, stdout and stderr into files, stdin from a memory file
/// holding `input` (or /dev/null), waits for it, and returns what it wrote.
func run(
    _ arguments: [String],
    environment: [String] = [],
    input: [UInt8]? = nil,
    _ configure: (inout SpawnRequest) -> Void = { _ in }
) throws -> Outcome {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = try scratch.create("stdout")
    defer { output.close() }
    let errors = try scratch.create("stderr")
    defer { errors.close() }
    let stdin = try input.map { try makeMemoryFile(name: "stdin", contents: $0) } ?? openNullDevice()
    defer { stdin.close() }

    var request = SpawnRequest(
        executablePath: arguments[0], arguments: arguments, environment: environment,
        standardInput: stdin, standardOutput: output, standardError: errors)
    configure(&request)
    let process = try spawn(request)
    defer { process.pidfd.close() }
    let status = waitForExit(process)
    return Outcome(status: status, stdout: try scratch.read("stdout"), stderr: try scratch.read("stderr"), pid: process.pid)
}

/// A request for `/bin/true` with /dev/null stdio, for tests that only look at how spawning fails.
func withTrivialRequest<R>(_ body: (inout SpawnRequest) throws -> R) throws -> R {
    let null = try openNullDevice()
    defer { null.close() }
    var request = SpawnRequest(
        executablePath: "/bin/true", arguments: ["true"],
        standardInput: null, standardOutput: null, standardError: null)
    return try body(&request)
}

/// Bytes NUL-separated and NUL-terminated, like /proc/PID/cmdline and /proc/PID/environ.
func nulTerminated(_ strings: [String]) -> [UInt8] {
    strings.flatMap { Array($0.utf8) + [0] }
}

let runningAsRoot = geteuid() == 0
