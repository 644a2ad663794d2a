import Glibc

/// What a directory entry is, from its stat(2) mode: an Inbox entry looked at without following or opening it, or a
/// file someone named.
public enum EntryKind: String, Sendable {
    case regular = "regular file"
    case symlink = "symbolic link"
    case fifo = "FIFO"
    case socket = "socket"
    case characterDevice = "character device"
    case blockDevice = "block device"
    case directory = "directory"
    case hardLink = "hard link"
    case unknown = "unknown file type"

    /// The kind `st_mode`'s file type bits name (never `.hardLink`: that is a link count, not a type).
    public init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFLNK: self = .symlink
        case S_IFIFO: self = .fifo
        case S_IFSOCK: self = .socket
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFDIR: self = .directory
        default: self = .unknown
        }
    }
}

/// A regular file opened for reading from an untrusted directory.
public struct OpenedFile {
    public let descriptor: FileDescriptor
    public let status: stat
}

public enum SafeOpenResult {
    case opened(OpenedFile)
    case gone
    case refused(EntryKind)
    case failed(SystemError)
}

extension Directory {
    /// Opens an entry only if it is a regular file with a single link. Nothing else is ever opened
    /// for reading: the entry is first pinned with O_PATH|O_NOFOLLOW (which neither follows a link nor
    /// opens a FIFO or device), checked with fstat, and only then reopened for reading through
    /// /proc/self/fd, which reaches the very inode that was checked (open(2), O_PATH).
    public func openRegular(_ name: [UInt8]) -> SafeOpenResult {
        let pinned: CInt, st: stat
        switch pin(name) {
        case .pinned(let fd, let status): (pinned, st) = (fd.rawValue, status)
        case .not(let result): return result
        }
        defer { FileDescriptor(rawValue: pinned).close() }
        let kind = EntryKind(mode: st.st_mode)
        guard kind == .regular else { return .refused(kind) }
        guard st.st_nlink == 1 else { return .refused(.hardLink) }

        let reopened: CInt
        switch retryingErrno({ sys_open("/proc/self/fd/\(pinned)", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }) {
        case .success(let fd): reopened = fd
        case .failure(.noSuchFile): return .gone
        case .failure(let error): return .failed(SystemError("open", path: child(displayName(name)), errno: error))
        }
        let file = FileDescriptor(rawValue: reopened)
        guard let check = try? file.status(), check.st_ino == st.st_ino, check.st_dev == st.st_dev else {
            file.close()
            return .failed(SystemError("fstat", path: child(displayName(name)), errno: .invalidArgument))
        }
        return .opened(OpenedFile(descriptor: file, status: check))
    }
}

/// An entry pinned without following or opening it (`Directory.pin`), or what opening it comes to instead.
enum PinnedEntry {
    /// O_PATH|O_NOFOLLOW, with its fstat(2); the caller's to close.
    case pinned(FileDescriptor, stat)
    /// `.gone` or `.failed`.
    case not(SafeOpenResult)
}

extension Directory {
    /// Pins an entry with O_PATH|O_NOFOLLOW, which neither follows a link nor opens a FIFO or a device, and takes its
    /// fstat(2): what `openRegular` and `openPackage` check before they open anything.
    func pin(_ name: [UInt8]) -> PinnedEntry {
        let pinned: FileDescriptor
        switch retryingErrno({
            withCName(name) { sys_openat(descriptor.rawValue, $0, O_PATH | O_NOFOLLOW | O_CLOEXEC) }
        }) {
        case .success(let fd): pinned = FileDescriptor(rawValue: fd)
        case .failure(.noSuchFile): return .not(.gone)
        case .failure(let error): return .not(.failed(SystemError("openat", path: child(displayName(name)), errno: error)))
        }
        do { return .pinned(pinned, try pinned.status()) } catch {
            pinned.close()
            return .not(.failed(SystemError("fstat", path: child(displayName(name)), errno: error)))
        }
    }
}

extension FileDescriptor {
    /// A new open file description of the very file this descriptor has open, read-only (through /proc/self/fd, as
    /// `Directory.openRegular` reopens): nothing is looked up by name, so it is the file that was checked. What a
    /// resident handler gets: its own description, which it can neither write through nor use to end the agent's
    /// lease on this one. `directory`: a package's, opened O_DIRECTORY as well (ENOTDIR if it is not one).
    public func reopenedReadOnly(directory: Bool = false) throws(Errno) -> FileDescriptor {
        try FileDescriptor(rawValue: retryingErrno({
            sys_open("/proc/self/fd/\(rawValue)",
                     O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (directory ? O_DIRECTORY : 0))
        }).get())
    }
}
