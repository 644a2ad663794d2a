import Glibc
import InboxCore

/// An open directory; every entry operation goes through its descriptor (openat(2) and friends),
/// so a renamed or replaced path component can never redirect it.
public final class Directory {
    public let descriptor: FileDescriptor
    public let path: String

    /// Opens `path` as a directory without following a final symlink.
    public init(path: String) throws(SystemError) {
        let fd = try retrying("open", path: path) {
            sys_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        }
        descriptor = FileDescriptor(rawValue: fd)
        self.path = path
    }

    /// Opens `path` as a directory to work in, not to list (O_PATH): enough for openat, renameat2, unlinkat and fstatat
    /// relative to it, and all a user has in a drop Inbox with write and search but no read permission (1733).
    public init(searchOnly path: String) throws(SystemError) {
        let fd = try retrying("open", path: path) {
            sys_open(path, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        }
        descriptor = FileDescriptor(rawValue: fd)
        self.path = path
    }

    /// Whether anything is at `path`, following links (stat(2)); an error other than ENOENT or ENOTDIR is thrown.
    public static func exists(_ path: String) throws(SystemError) -> Bool {
        var st = stat()
        if sys_stat(path, &st) == 0 { return true }
        if errno == ENOENT || errno == ENOTDIR { return false }
        throw SystemError("stat", path: path, errno: .current)
    }

    /// stat(2) of a path, following links; nil when nothing is there.
    public static func status(atPath path: String) throws(SystemError) -> stat? {
        var st = stat()
        if sys_stat(path, &st) == 0 { return st }
        if errno == ENOENT || errno == ENOTDIR { return nil }
        throw SystemError("stat", path: path, errno: .current)
    }

    /// Syncs the directory's entries (fsync(2)). A directory opened `searchOnly` cannot be synced through its own
    /// descriptor (EBADF); it is reopened for reading, which works only for whoever may list it. False when it could not be.
    @discardableResult
    public func syncEntries() -> Bool {
        if (try? descriptor.fsync()) != nil { return true }
        guard let readable = try? openFile(".", .readOnly, options: .directory) else { return false }
        defer { readable.close() }
        return (try? readable.fsync()) != nil
    }

    /// Creates the directory and its missing parents (like `mkdir -p`), then opens it.
    public static func create(path: String, mode: mode_t = 0o755) throws(SystemError) -> Directory {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            switch retryingErrno({ sys_mkdir(prefix, mode) }) {
            case .success, .failure(.fileExists): break
            case .failure(let error): throw SystemError("mkdir", path: prefix, errno: error)
            }
        }
        return try Directory(path: path)
    }

    deinit { descriptor.close() }

    /// Opens a subdirectory, creating it first when missing.
    public func subdirectory(_ name: String, create: Bool = true, mode: mode_t = 0o755) throws(SystemError) -> Directory {
        if create {
            let result = name.withCString { sys_mkdirat(descriptor.rawValue, $0, mode) }
            if result != 0 && errno != EEXIST { throw SystemError("mkdirat", path: child(name), errno: .current) }
        }
        let fd = try retrying("openat", path: child(name)) {
            name.withCString { sys_openat(descriptor.rawValue, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) }
        }
        return Directory(adopting: FileDescriptor(rawValue: fd), path: child(name))
    }

    fileprivate init(adopting descriptor: FileDescriptor, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    public func child(_ name: String) -> String { path.hasSuffix("/") ? path + name : path + "/" + name }

    /// The entry names, raw bytes, without "." and "..". Reads through a fresh descriptor so the
    /// directory's own offset is never disturbed.
    public func entries() throws(SystemError) -> [[UInt8]] {
        let fd = try retrying("openat", path: path) {
            sys_openat(descriptor.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard let stream = sys_fdopendir(fd) else {
            let error = Errno.current
            FileDescriptor(rawValue: fd).close()
            throw SystemError("fdopendir", path: path, errno: error)
        }
        defer { _ = sys_closedir(stream) }  // closes fd too
        var names: [[UInt8]] = []
        while let entry = sys_readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix(while: { $0 != 0 }))
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
        return names
    }

    /// lstat of an entry; nil when it does not exist.
    public func status(of name: [UInt8]) throws(SystemError) -> stat? {
        var st = stat()
        let result = withCName(name) { sys_fstatat(descriptor.rawValue, $0, &st, AT_SYMLINK_NOFOLLOW) }
        if result == 0 { return st }
        if errno == ENOENT { return nil }
        throw SystemError("fstatat", path: child(displayName(name)), errno: .current)
    }

    /// Sets an extended attribute of an entry by its path (lsetxattr(2)), without opening it or following a link: one
    /// system call, for files in the agent's own directories.
    @discardableResult
    public func setAttribute(_ key: String, _ value: String, of name: String) -> Errno? {
        let result = Array(value.utf8).withUnsafeBytes { sys_lsetxattr(child(name), key, $0) }
        return result == 0 ? nil : .current
    }

    /// Moves an entry into another directory without replacing anything there (renameat2(2)).
    /// The entry itself is never opened or followed, whatever it is.
    public func move(_ name: [UInt8], to target: Directory, as newName: [UInt8]) -> Errno? {
        let result = withCName(name) { old in
            withCName(newName) { new in
                sys_renameat2(descriptor.rawValue, old, target.descriptor.rawValue, new, RENAME_NOREPLACE)
            }
        }
        return result == 0 ? nil : .current
    }

    /// Moves an entry, picking `name`, `name-2.ext`, `name-3.ext`... until one is free. Returns the name used.
    public func moveUnique(_ name: [UInt8], to target: Directory, preferred: String) -> Result<String, Errno> {
        for attempt in 1...1000 {
            let candidate = attempt == 1 ? preferred : FileNames.numbered(preferred, attempt)
            switch move(name, to: target, as: Array(candidate.utf8)) {
            case nil: return .success(candidate)
            case .fileExists?: continue
            case let error?: return .failure(error)
            }
        }
        return .failure(.fileExists)
    }

    /// Removes a file entry; ENOENT is not an error.
    @discardableResult
    public func remove(_ name: [UInt8]) -> Errno? {
        let result = withCName(name) { sys_unlinkat(descriptor.rawValue, $0, 0) }
        if result == 0 || errno == ENOENT { return nil }
        return .current
    }

    /// The same, for a name the program chose (`"status.json"`).
    @discardableResult
    public func remove(_ name: String) -> Errno? { remove(Array(name.utf8)) }

    /// Gives an open file that has no name (O_TMPFILE) the name `name` here, never replacing an entry (linkat(2)
    /// through /proc/self/fd, which needs no capability, as AT_EMPTY_PATH would).
    public func link(_ file: FileDescriptor, as name: String) -> Errno? {
        let result = withCName(Array(name.utf8)) { target in
            sys_linkat(AT_FDCWD, "/proc/self/fd/\(file.rawValue)", descriptor.rawValue, target, AT_SYMLINK_FOLLOW)
        }
        return result == 0 ? nil : Errno.current
    }
    /// Replaces (or creates) `name` with a file holding `bytes` with exactly `mode`, atomically: a reader sees the
    /// old file or the new one, never a part. The bytes go to a hidden temporary here (never through a link), which
    /// rename(2) puts over `name`; on failure it is removed and `name` is untouched. Not synced: after a crash the
    /// old contents are as likely as the new. With `owner`, the file is that uid's (and its group's) before it is put
    /// in place.
    public func writeFile(_ name: String, bytes: [UInt8], mode: mode_t, owner: uid_t? = nil) throws(SystemError) {
        let temporary = ".\(name).\(CurrentProcess.id).tmp"
        let file: FileDescriptor
        do {
            file = try openFile(temporary, .writeOnly, options: [.create, .truncate, .noFollow], permissions: mode)
        } catch {
            throw SystemError("openat", path: child(temporary), errno: error)
        }
        func fail(_ operation: String, _ error: Errno) -> SystemError {
            file.close()
            remove(temporary)
            return SystemError(operation, path: child(temporary), errno: error)
        }
        // Exactly `mode`: the umask took bits from it, and a temporary left by a crash kept its own.
        do { try file.chmod(mode) } catch { throw fail("fchmod", error) }
        if let owner {
            do { try file.chown(uid: owner, gid: owner) } catch { throw fail("fchown", error) }
        }
        if let error = file.write(all: bytes) { throw fail("write", error) }
        file.close()
        let renamed = withCName(Array(temporary.utf8)) { old in
            withCName(Array(name.utf8)) { new in sys_renameat2(descriptor.rawValue, old, descriptor.rawValue, new, 0) }
        }
        guard renamed == 0 else {
            let error = Errno.current
            remove(temporary)
            throw SystemError("renameat", path: child(name), errno: error)
        }
    }
}

/// Calls `body` with a NUL-terminated copy of raw name bytes.
func withCName<R>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
    var bytes = name
    bytes.append(0)
    return bytes.withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { body($0) }
    }
}

/// A name as text for logs: invalid UTF-8 is replaced, never passed through.
public func displayName(_ name: [UInt8]) -> String { String(decoding: name, as: UTF8.self) }

extension Directory {
    /// Removes an entry and, for a directory, everything beneath it, through descriptors and never following a link
    /// or entering a mount (like `rm -rf --one-file-system`, for a tree someone else may have filled): the one way a
    /// tree is removed, a package's (`PackageTree.remove`) or the agent's own.
    public func removeTree(_ name: [UInt8]) {
        _ = PackageTree.remove(name, in: self)
    }
}
