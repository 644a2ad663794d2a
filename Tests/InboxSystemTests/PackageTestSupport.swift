import Foundation
import Glibc
import InboxCore
@testable import InboxSystem

/// A temporary directory for package trees, removed with the value after whatever was mounted in it is unmounted.
final class PackageSandbox {
    let path: String
    private var mounted: [String] = []

    /// In /tmp; `inMemory` in /dev/shm where there is one (a tree of ten thousand files is made there in a fraction of
    /// the time).
    init(inMemory: Bool = false) throws {
        let base = inMemory && FileSystem.accessError("/dev/shm") == nil ? "/dev/shm" : "/tmp"
        path = try FileSystem.makeTemporaryDirectory(prefix: base + "/inboxd-package-")
    }

    deinit {
        for point in mounted.reversed() { _ = Mounts.run(["/bin/umount", point]) }
        try? FileManager.default.removeItem(atPath: path)
    }

    func at(_ relative: String) -> String { path + "/" + relative }

    func directory(_ relative: String, mode: mode_t = 0o755) throws {
        try FileManager.default.createDirectory(atPath: at(relative), withIntermediateDirectories: true)
        try succeeded(chmod(at(relative), mode), "chmod \(relative)")
    }

    func file(_ relative: String, _ contents: String = "x", mode: mode_t = 0o644) throws {
        try directory((relative as NSString).deletingLastPathComponent)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: at(relative)))
        try succeeded(chmod(at(relative), mode), "chmod \(relative)")
    }

    func symlink(_ relative: String, to target: String) throws {
        try directory((relative as NSString).deletingLastPathComponent)
        try succeeded(Glibc.symlink(target, at(relative)), "symlink \(relative)")
    }

    func contents(_ relative: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: at(relative)))).map { String(decoding: $0, as: UTF8.self) }
    }

    func exists(_ relative: String) -> Bool {
        var st = stat()
        return lstat(at(relative), &st) == 0
    }

    func status(_ relative: String) -> stat? {
        var st = stat()
        return lstat(at(relative), &st) == 0 ? st : nil
    }

    /// Sets an extended attribute of an entry (not following a link).
    func setAttribute(_ relative: String, _ name: String, _ value: String) throws {
        let fd = try FileDescriptor.open(at(relative), .readOnly, options: [.noFollow, .nonBlocking])
        defer { fd.close() }
        if let error = ExtendedAttributes(fd).write(name, Array(value.utf8)) { throw error }
    }

    /// An extended attribute of an entry, as text.
    func attribute(_ relative: String, _ name: String) -> String? {
        guard let fd = try? FileDescriptor.open(at(relative), .readOnly, options: [.noFollow, .nonBlocking]) else { return nil }
        defer { fd.close() }
        if case .value(let bytes) = ExtendedAttributes(fd).read(name, limit: 1024) { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    /// The regular files under `relative` (not following links), with their access times set long before their
    /// modification: a read of any of them then shows in its atime (relatime updates an atime older than the mtime).
    func ageFiles(under relative: String) throws -> [String] {
        guard exists(relative) else { return [] }
        var files: [String] = []
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: at(relative))) ?? [] {
            let path = relative + "/" + name
            guard let st = status(path), st.st_mode & S_IFMT == S_IFREG else { continue }
            var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 2_000_000, tv_nsec: 0)]
            try succeeded(utimensat(AT_FDCWD, at(path), &times, AT_SYMLINK_NOFOLLOW), "utimensat")
            files.append(path)
        }
        return files
    }

    /// Whether a file aged by `ageFiles` was read since.
    func wasRead(_ relative: String) -> Bool { status(relative).map { $0.st_atim.tv_sec != 1_000_000 } ?? true }

    /// Mounts a tmpfs at `relative` (unmounted with the sandbox).
    func mountTemporaryFileSystem(at relative: String) throws {
        try mount(["/bin/mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", at(relative)], at(relative))
    }

    /// Bind-mounts `source` at `relative` (a directory of the same filesystem, or a file onto a file).
    func bind(_ source: String, at relative: String) throws {
        try mount(["/bin/mount", "--bind", at(source), at(relative)], at(relative))
    }

    private func mount(_ command: [String], _ point: String) throws {
        let (status, output) = Mounts.run(command)
        guard status == 0 else { throw MountFailure(output: output) }
        mounted.append(point)
    }

    /// Opens the package at `relative` as the agent does (Directory.openPackage).
    func openPackage(_ relative: String) throws -> FileDescriptor {
        let parent = try Directory(path: (at(relative) as NSString).deletingLastPathComponent)
        switch parent.openPackage(Array((relative as NSString).lastPathComponent.utf8)) {
        case .opened(let opened): return opened.descriptor
        case let other: throw OpenFailure(result: "\(other)")
        }
    }

    /// Checks the package at `relative`.
    func check(_ relative: String, limits: PackageLimits = PackageLimits(),
               resolution: PackageResolution = .detected,
               visited: (PackageEntry) -> Void = { _ in }) throws -> Result<PackageManifest, PackageRefusal> {
        let root = try openPackage(relative)
        defer { root.close() }
        return PackageTree.check(root, limits: limits, resolution: resolution, visited: visited)
    }

    struct MountFailure: Error { let output: String }
    struct OpenFailure: Error { let result: String }
}

/// mount(8) and umount(8), for the trees with a mount point inside.
enum Mounts {
    static func run(_ command: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// Whether this process may mount (root with CAP_SYS_ADMIN): tried once on a tmpfs of its own.
    static let available: Bool = {
        guard let sandbox = try? PackageSandbox(), (try? sandbox.directory("m")) != nil else { return false }
        let (status, _) = run(["/bin/mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", sandbox.at("m")])
        guard status == 0 else { return false }
        _ = run(["/bin/umount", sandbox.at("m")])
        return true
    }()
}

/// Paths of a manifest's entries, in its order.
func paths(_ manifest: PackageManifest) -> [String] { manifest.entries.map { String(decoding: $0.path, as: UTF8.self) } }

extension Result {
    /// (`failure` is SyscallBoundaryTests'.)
    var value: Success? { if case .success(let value) = self { value } else { nil } }
}

/// Throws for a C call's -1, with errno.
func succeeded(_ result: Int32, _ what: String) throws {
    if result != 0 { throw CallFailure(call: what, errno: errno) }
}

struct CallFailure: Error, CustomStringConvertible {
    let call: String
    let errno: Int32
    var description: String { "\(call): \(String(cString: strerror(errno)))" }
}
