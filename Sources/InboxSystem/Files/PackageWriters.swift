import Glibc
import InboxCore

/// What probing a package's files for a process that still has one open for writing found
/// (`PackageTree.openWriter`).
public enum PackageWriterProbe: Sendable, Equatable {
    /// Every regular file was probed: none is open for writing.
    case none
    /// Someone has the entry at `path` open for writing (its read lease could not be had: EAGAIN), or holds a lease
    /// on it that an open would have to break first (EWOULDBLOCK on the open).
    case writer(path: String)
    /// No file is seen open for writing, but the entry at `path` (the first such) could not be asked: not the
    /// agent's and without CAP_LEASE (EACCES), or a filesystem without leases (EINVAL). Its content is then only as
    /// stable as its sender leaves it, as a single file's is.
    case unavailable(path: String, Errno)
    /// The entry at `path` is not the one the manifest has (gone, replaced, a mount), or could not be opened.
    case unreadable(path: String, Errno)
}

extension PackageTree {
    /// Probes every regular file of `manifest` (the package open as `root`, already out of its sender's reach) for an
    /// open writer: each is opened by the walk's rules (openat2 beneath its directory, O_RDONLY|O_NONBLOCK|O_NOFOLLOW,
    /// never following a link or crossing a mount), checked to be the manifest's device and inode, asked for a read
    /// lease (F_SETLEASE F_RDLCK, which the kernel refuses while any descriptor for writing is open), the lease given up
    /// at once (F_UNLCK), and closed. A directory takes no lease and is only pinned to reach its entries.
    ///
    /// The first writer found, in manifest order, ends the probe. A file that cannot be asked does not: the others
    /// still are, and `.unavailable` names the first such only when no writer is found.
    public static func openWriter(_ root: FileDescriptor, manifest: PackageManifest) -> PackageWriterProbe {
        openWriter(root, manifest: manifest, resolution: .detected)
    }

    static func openWriter(_ root: FileDescriptor, manifest: PackageManifest,
                           resolution: PackageResolution) -> PackageWriterProbe {
        let opener: PackageOpener
        switch PackageOpener.forRoot(root, resolution: resolution) {
        case .success(let (found, _)): opener = found
        case .failure(.mountPoint): return .unreadable(path: ".", .crossDevice)
        case .failure(.gone): return .unreadable(path: ".", .noSuchFile)
        case .failure(.failed(let error)): return .unreadable(path: ".", error)
        }
        var cursor = ManifestCursor(root: root, entry: manifest.root, opener: opener)
        defer { cursor.close() }
        var unavailable: PackageWriterProbe?
        for entry in manifest.entries.dropFirst() {
            let path = packageDisplay(entry.path)
            let flags = entry.kind == .directory ? O_PATH | O_NOFOLLOW : O_RDONLY | O_NONBLOCK | O_NOFOLLOW
            let fd: FileDescriptor
            switch cursor.pin(entry, flags: flags) {
            case .success(let (pinned, _)): fd = pinned
            // A lease another process holds: the open would have to break it (O_NONBLOCK: EWOULDBLOCK).
            case .failure(.failed(.wouldBlock)): return .writer(path: path)
            case .failure(.gone): return .unreadable(path: path, .noSuchFile)
            case .failure(.mountPoint): return .unreadable(path: path, .crossDevice)
            case .failure(.failed(let error)): return .unreadable(path: path, error)
            }
            if entry.kind == .directory {
                cursor.enter(entry, fd)
                continue
            }
            defer { fd.close() }
            switch fd.takeReadLease() {
            case .held: fd.releaseLease()
            case .busy: return .writer(path: path)
            case .unavailable(let error): if unavailable == nil { unavailable = .unavailable(path: path, error) }
            }
        }
        return unavailable ?? .none
    }
}
