import Glibc
import InboxCore

// The rules every walk of a package follows (check, hand-over, copy, removal): each entry is reached from its own
// directory's descriptor by its one name, never through a link and never across a mount, with openat2(2)'s
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV, or, where the kernel has no openat2, by
// the same rules by hand (O_NOFOLLOW, then the device and the mount compared with the package's own).

/// How entries are reached: openat2(2) where the kernel has it (Linux 5.6), else the same rules by hand.
enum PackageResolution: Sendable {
    case openat2
    case byHand

    /// What this kernel can do, asked once.
    static let detected: PackageResolution = {
        let (fd, error) = withCName(Array(".".utf8)) {
            (sys_openat2(AT_FDCWD, $0, O_PATH | O_CLOEXEC, PackageOpener.resolve), errno)
        }
        if fd >= 0 {
            FileDescriptor(rawValue: fd).close()
            return .openat2
        }
        // EINVAL: an openat2 that does not know these RESOLVE_ flags; EPERM: a seccomp filter that does not know the
        // call (an O_PATH open of "." is refused for no other reason).
        return error == ENOSYS || error == EINVAL || error == EPERM ? .byHand : .openat2
    }()
}

/// Why an entry could not be pinned.
enum PinFailure: Error {
    case gone
    /// A mount point (or an entry on another filesystem).
    case mountPoint
    case failed(Errno)
}

/// Opens one entry beneath a directory of the package by the rules, O_PATH|O_NOFOLLOW: a symlink is pinned as itself
/// (never followed), a FIFO or device is not opened, a mount point is refused.
struct PackageOpener {
    static let resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV

    let resolution: PackageResolution
    /// The package directory's st_dev and mount id (0 where the kernel cannot say).
    let device: UInt64
    let mountID: UInt64

    init(root: stat, mountID: UInt64, resolution: PackageResolution) {
        self.resolution = resolution
        device = UInt64(root.st_dev)
        self.mountID = mountID
    }

    /// The package's own directory: its status and its mount (a mount's root is no package: `.mountPoint`).
    static func forRoot(_ root: FileDescriptor,
                        resolution: PackageResolution) -> Result<(PackageOpener, stat), PinFailure> {
        let st: stat
        do { st = try root.status() } catch { return .failure(.failed(error)) }
        var id: UInt64 = 0
        var isRoot: Bool?
        if sys_mount_status(root.rawValue, &id, &isRoot) != 0 { id = 0; isRoot = nil }
        if isRoot == true { return .failure(.mountPoint) }
        return .success((PackageOpener(root: st, mountID: id, resolution: resolution), st))
    }

    /// For entries beneath a directory that may itself be a mount's root (an Inbox the package lies in).
    static func beneath(_ directory: FileDescriptor, resolution: PackageResolution) throws(Errno) -> PackageOpener {
        let st = try directory.status()
        var id: UInt64 = 0
        var isRoot: Bool?
        if sys_mount_status(directory.rawValue, &id, &isRoot) != 0 { id = 0 }
        return PackageOpener(root: st, mountID: id, resolution: resolution)
    }

    /// Pins `name` in the directory `parent` with `flags` (O_PATH|O_NOFOLLOW, or O_RDONLY|O_DIRECTORY|O_NOFOLLOW to
    /// list or empty a directory) and fstats it. The caller closes the descriptor.
    func pin(_ name: [UInt8], in parent: FileDescriptor,
             flags: CInt = O_PATH | O_NOFOLLOW) -> Result<(FileDescriptor, stat), PinFailure> {
        let opened: Result<CInt, Errno>
        switch resolution {
        case .openat2:
            opened = retryingErrno {
                withCName(name) { sys_openat2(parent.rawValue, $0, flags | O_CLOEXEC, PackageOpener.resolve) }
            }
        case .byHand:
            opened = retryingErrno { withCName(name) { sys_openat(parent.rawValue, $0, flags | O_CLOEXEC) } }
        }
        let fd: FileDescriptor
        switch opened {
        case .success(let raw): fd = FileDescriptor(rawValue: raw)
        case .failure(.noSuchFile): return .failure(.gone)
        // RESOLVE_NO_XDEV: the name is a mount point (a bind mount of this filesystem too).
        case .failure(.crossDevice): return .failure(.mountPoint)
        case .failure(let error): return .failure(.failed(error))
        }
        let st: stat
        do { st = try fd.status() } catch {
            fd.close()
            return .failure(.failed(error))
        }
        if (st.st_mode & S_IFMT) == S_IFLNK { return .success((fd, st)) }
        if UInt64(st.st_dev) != device || (resolution == .byHand && isMount(fd)) {
            fd.close()
            return .failure(.mountPoint)
        }
        return .success((fd, st))
    }

    /// By hand: the root of a mount, or reached through another mount than the package (a bind mount of the same
    /// filesystem has the same st_dev): statx(2) STATX_ATTR_MOUNT_ROOT and STATX_MNT_ID.
    private func isMount(_ fd: FileDescriptor) -> Bool {
        var id: UInt64 = 0
        var isRoot: Bool?
        guard sys_mount_status(fd.rawValue, &id, &isRoot) == 0 else { return false }
        return isRoot == true || (id != 0 && mountID != 0 && id != mountID)
    }
}

/// The names in an open directory, read with readdir(3) (getdents64) through a descriptor of its own, "." and ".."
/// left out. Closing it closes that descriptor.
final class DirectoryStream {
    private let stream: OpaquePointer
    /// The descriptor the stream reads: also what entries are opened and removed relative to.
    let descriptor: FileDescriptor

    /// Takes `fd` (an O_RDONLY|O_DIRECTORY descriptor): it is closed with the stream.
    init(adopting fd: FileDescriptor) throws(Errno) {
        guard let stream = sys_fdopendir(fd.rawValue) else {
            let error = Errno.current
            fd.close()
            throw error
        }
        self.stream = stream
        descriptor = fd
    }

    /// A new stream over the directory `directory` has open (its own offset: `directory`'s is never disturbed).
    convenience init(listing directory: FileDescriptor) throws(Errno) {
        let fd = try retryingErrno {
            withCName(Array(".".utf8)) { sys_openat(directory.rawValue, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }.get()
        try self.init(adopting: FileDescriptor(rawValue: fd))
    }

    deinit { _ = sys_closedir(stream) }

    /// The next name; nil at the end (or when the directory cannot be read further: errno says which).
    func next() -> [UInt8]? {
        while true {
            errno = 0
            guard let entry = sys_readdir(stream) else { return nil }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            return name
        }
    }

    /// Up to `limit` names, and whether the stream ended (false: there were more); an error that stopped the reading.
    func names(upTo limit: Int) -> Result<(names: [[UInt8]], complete: Bool), Errno> {
        var names: [[UInt8]] = []
        while names.count < limit, let name = next() { names.append(name) }
        if errno != 0 { return .failure(.current) }
        if names.count < limit { return .success((names, true)) }
        // At the limit: one more tells whether there is more.
        if next() != nil { return .success((names, false)) }
        if errno != 0 { return .failure(.current) }
        return .success((names, true))
    }
}

/// "a/b" for the entry `name` in the directory at `parent` ("" for the package itself).
func packagePath(_ parent: [UInt8], _ name: [UInt8]) -> [UInt8] { parent.isEmpty ? name : parent + [0x2F] + name }

/// The last component of a package path: the entry's name in its directory.
func packageName(_ path: [UInt8]) -> [UInt8] {
    if let slash = path.lastIndex(of: 0x2F) { return Array(path[(slash + 1)...]) }
    return path
}

/// A package path as text for refusals, "." for the package itself.
func packageDisplay(_ path: [UInt8]) -> String { path.isEmpty ? "." : displayName(path) }

/// Follows a manifest entry by entry, each pinned beneath its directory's descriptor, which is held while its entries
/// are visited (at most one descriptor per level).
struct ManifestCursor {
    let opener: PackageOpener
    /// The directories being visited, the package's own first (not ours to close).
    private(set) var directories: [(entry: PackageEntry, descriptor: FileDescriptor)]

    init(root: FileDescriptor, entry: PackageEntry, opener: PackageOpener) {
        self.opener = opener
        directories = [(entry, root)]
    }

    /// Leaves the directories below `depth - 1` (the parent of an entry at `depth`), deepest first, each given to
    /// `leaving` before its descriptor is closed.
    mutating func ascend(toParentOf depth: Int, _ leaving: (PackageEntry, FileDescriptor) -> Void = { _, _ in }) {
        while directories.count > max(depth, 1) {
            let (entry, descriptor) = directories.removeLast()
            leaving(entry, descriptor)
            descriptor.close()
        }
    }

    /// Pins `entry` beneath its directory and checks it is the very inode the manifest has (device, inode, type):
    /// `.failed(.staleEntry)` when another is there.
    mutating func pin(_ entry: PackageEntry) -> Result<(FileDescriptor, stat), PinFailure> {
        ascend(toParentOf: entry.depth)
        guard directories.count == entry.depth else { return .failure(.failed(.invalidArgument)) }
        let pinned = opener.pin(packageName(entry.path), in: directories[directories.count - 1].descriptor)
        guard case .success(let (fd, st)) = pinned else { return pinned }
        guard UInt64(st.st_dev) == entry.device, UInt64(st.st_ino) == entry.inode,
              EntryKind(mode: st.st_mode) == entry.kind else {
            fd.close()
            return .failure(.failed(.staleEntry))
        }
        return .success((fd, st))
    }

    /// Makes a pinned directory the one the next entries are pinned beneath (closed by `ascend` or `close`).
    mutating func enter(_ entry: PackageEntry, _ descriptor: FileDescriptor) { directories.append((entry, descriptor)) }

    /// Closes every directory still held (not the package's own).
    mutating func close(_ leaving: (PackageEntry, FileDescriptor) -> Void = { _, _ in }) {
        ascend(toParentOf: 1, leaving)
    }
}

extension Errno {
    /// ESTALE: the entry at a path is not the inode a manifest recorded there.
    public static let staleEntry = Errno(rawValue: ESTALE)
}
