import Glibc
import InboxCore

/// One entry of a package as it was checked: where it lies inside the package and what the after-exit check
/// compares.
public struct PackageEntry: Sendable, Hashable {
    /// Relative to the package's directory, components joined by "/"; empty for the package's own directory.
    public let path: [UInt8]
    /// `.regular` or `.directory`: nothing else is ever accepted.
    public let kind: EntryKind
    /// Levels below the package's directory (the directory itself 0, its entries 1).
    public let depth: Int
    public let device: UInt64
    public let inode: UInt64
    public let mode: UInt32
    public let owner: UInt32
    public let size: Int64
    /// st_mtim and st_ctim in nanoseconds since the epoch.
    public let modified: Int64
    public let changed: Int64

    public init(path: [UInt8], kind: EntryKind, depth: Int, status st: stat) {
        self.path = path
        self.kind = kind
        self.depth = depth
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        mode = UInt32(st.st_mode)
        owner = UInt32(st.st_uid)
        size = Int64(st.st_size)
        modified = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        changed = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
    }
}

/// A package as checked: every entry, the package's own directory first, then depth first in name order.
public struct PackageManifest: Sendable, Hashable {
    public let entries: [PackageEntry]

    public init(entries: [PackageEntry]) { self.entries = entries }

    /// The package's own directory.
    public var root: PackageEntry { entries[0] }
    /// Bytes of all its regular files; Int64.max when they pass it (sparse files, where no size bound is set).
    public var totalBytes: Int64 {
        entries.reduce(0) { sum, entry in
            guard entry.kind == .regular else { return sum }
            let (total, overflow) = sum.addingReportingOverflow(entry.size)
            return overflow ? .max : total
        }
    }
    /// Entries below the package's directory.
    public var entryCount: Int { entries.count - 1 }
    /// The names directly inside the package, with whether each is a directory: what a format's marker is looked
    /// for in (`TXT.rtf` in an RTFD, `Index/` in an iWork package).
    public var topLevel: [(name: String, isDirectory: Bool)] {
        entries.filter { $0.depth == 1 }.map { (String(decoding: $0.path, as: UTF8.self), $0.kind == .directory) }
    }
}

/// What changed in a package between two checks; nil from `PackageManifest.change(since:)` when nothing did.
public enum PackageChange: Sendable, Hashable {
    /// An entry that was not there before.
    case added(path: String)
    /// The same entry (device and inode) with other content, size, mode, owner or times.
    case changed(path: String)
    /// Another inode at the same path.
    case swapped(path: String)
    /// An entry that is gone (only a change when removal was not allowed).
    case removed(path: String)

    /// The entry that changed.
    public var path: String {
        switch self {
        case .added(let path), .changed(let path), .swapped(let path), .removed(let path): path
        }
    }

    /// "entry Data/x.png was added": for the journal and the failure attribute.
    public var description: String {
        switch self {
        case .added(let path): "entry \(path) was added"
        case .changed(let path): "entry \(path) was changed"
        case .swapped(let path): "entry \(path) was replaced by another file"
        case .removed(let path): "entry \(path) was removed"
        }
    }
}

extension PackageManifest {
    /// The first difference from `earlier`, in `earlier`'s order then this one's: nil when the tree is the same.
    /// `allowingRemoval`: entries that are gone are no change (a handler may remove what it was given).
    /// `ignoringRootChange`: the package directory's own change time is not compared (an attribute the agent wrote).
    public func change(since earlier: PackageManifest, allowingRemoval: Bool,
                       ignoringRootChange: Bool = false) -> PackageChange? {
        var now: [[UInt8]: PackageEntry] = [:]
        for entry in entries { now[entry.path] = entry }
        let before = Set(earlier.entries.map(\.path))
        let added = entries.filter { !before.contains($0.path) }
        let emptied = Set(earlier.entries.filter { now[$0.path] == nil }.map { parentPath($0.path) })
        // A directory's own size and times change with its entries: that is reported as what happened to the entry
        // (added, removed, replaced) when something did, and is no change when only allowed removals did.
        var unexplained: PackageChange?
        for old in earlier.entries {
            let path = packageDisplay(old.path)
            guard let new = now[old.path] else {
                if allowingRemoval { continue }
                return .removed(path: path)
            }
            if new.device != old.device || new.inode != old.inode || new.kind != old.kind {
                return .swapped(path: path)
            }
            if new.mode != old.mode || new.owner != old.owner { return .changed(path: path) }
            let ctimeCounts = !(old.depth == 0 && ignoringRootChange)
            guard new.size != old.size || new.modified != old.modified || (ctimeCounts && new.changed != old.changed)
            else { continue }
            guard old.kind == .directory else { return .changed(path: path) }
            if unexplained == nil && !(allowingRemoval && emptied.contains(old.path)) {
                unexplained = .changed(path: path)
            }
        }
        if let first = added.first { return .added(path: displayName(first.path)) }
        return unexplained
    }
}

/// The directory a package path lies in ("" for an entry of the package's own directory).
private func parentPath(_ path: [UInt8]) -> [UInt8] {
    path.lastIndex(of: 0x2F).map { Array(path[..<$0]) } ?? []
}

/// Why a package is refused. `.changing` passes (checked again after the writer back-off); the others never do.
public enum PackageRefusal: Error, Sendable, Hashable {
    case symlink(path: String)
    case hardLink(path: String)
    /// A FIFO, socket, device or unknown kind.
    case special(path: String, kind: EntryKind)
    /// A mount point, or an entry on another filesystem.
    case mountPoint(path: String)
    case tooDeep(limit: Int)
    case tooManyEntries(limit: Int)
    case tooLarge(limit: Int64)
    /// Its tree changed while it was checked: still being written.
    case changing(path: String)
    /// An entry could not be opened or read.
    case unreadable(path: String, errno: Errno)

    /// True for a package still being written: checked again later, then refused.
    public var passes: Bool { if case .changing = self { true } else { false } }

    /// "contains a symbolic link: Data/link": the failure attribute's and the journal's wording.
    public var reason: String {
        switch self {
        case .symlink(let path): "contains a symbolic link: \(path)"
        case .hardLink(let path): "contains a file with more than one link: \(path)"
        case .special(let path, let kind): "contains a \(kind.rawValue): \(path)"
        case .mountPoint(let path): "contains a mount point: \(path)"
        case .tooDeep(let limit): "is more than \(limit) levels deep (MaxPackageDepth=)"
        case .tooManyEntries(let limit): "has more than \(limit) entries (MaxPackageEntries=)"
        case .tooLarge(let limit): "is larger than \(limit) bytes (MaxPackageSize=)"
        case .changing(let path): "was still being written (\(path) changed while it was checked)"
        case .unreadable(let path, let errno): "cannot be read: \(path): \(errno)"
        }
    }
}

/// Package documents on disk: opened, checked, handed over, copied and removed by descriptor, never following a
/// link and never leaving the package's own filesystem (docs/design.md, Package documents).
public enum PackageTree {
    /// Walks the open package directory `root` by descriptor (openat2 with RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS,
    /// RESOLVE_NO_MAGICLINKS and RESOLVE_NO_XDEV, or the same rules by hand): only directories and regular files
    /// with one link, within `limits`; the tree must not change while it is walked (`.changing`).
    ///
    /// The first entry refused, in manifest order, is the refusal. A package that is itself a mount's root is
    /// `.mountPoint(path: ".")`. Bounds: no directory deeper than `maxDepth` levels below the package's own (its
    /// entries are at depth 1: 32 nested directories pass, with files in the 32nd, and a 33rd does not); no more than
    /// `maxEntries` entries (its own directory not counted); no more than `maxBytes` in its regular files together
    /// (st_size). Reading stops as soon as a bound is passed, and one descriptor per level is held. After the walk
    /// every entry is pinned again and its status compared with the one recorded (an entry added or removed changes
    /// its directory's): any difference is `.changing`.
    public static func check(_ root: FileDescriptor, limits: PackageLimits) -> Result<PackageManifest, PackageRefusal> {
        check(root, limits: limits, resolution: .detected)
    }

    /// Gives every entry of a checked package `owner`/`group` (nil: unchanged) and the modes a handler's copy has:
    /// files `fileMode`, directories `directoryMode`, through descriptors of the very entries of `manifest`.
    ///
    /// In manifest order; each entry is pinned beneath its directory and compared with the manifest's device, inode
    /// and type first: another inode there is ESTALE (`Errno.staleEntry`), a vanished one ENOENT, and nothing is done
    /// to it or after it (entries before it keep what they were given). A changed tree should then be checked again.
    public static func handOver(_ root: FileDescriptor, manifest: PackageManifest, owner: uid_t?, group: gid_t?,
                                fileMode: mode_t, directoryMode: mode_t) -> Errno? {
        handOver(root, manifest: manifest, owner: owner, group: group, fileMode: fileMode,
                 directoryMode: directoryMode, resolution: .detected)
    }

    /// Copies the open package `root` into `target` as `name` (made 0700, filled, fsynced; the caller renames it on),
    /// entry by entry through descriptors, refusing what `check` refuses. Returns the copy's manifest.
    ///
    /// The source is checked first, then copied along that manifest: each entry pinned and compared with it before it
    /// is read (a file is read up to its recorded size, a directory listed by no one), and each file and directory
    /// compared again once copied; a difference is `.refused(.changing)`. Modes as an ordinary copy's: the source's
    /// less group and other write and the set-id and sticky bits (0644, 0755), directories keeping their owner's rwx;
    /// owners are the caller's; the package directory's `user.` attributes (its metadata) are copied. On any failure
    /// the partial copy is removed (a `name` already in `target` is `EEXIST` and left alone).
    public static func copy(_ root: FileDescriptor, into target: Directory, as name: [UInt8],
                            limits: PackageLimits) -> Result<PackageManifest, PackageCopyFailure> {
        copy(root, into: target, as: name, limits: limits, resolution: .detected)
    }

    /// Removes the package `name` in `directory` and everything in it, depth first by descriptor, never following a
    /// link and never crossing a mount; nil when it is gone.
    ///
    /// A symlink (as `name` or inside) is removed as itself, its target untouched. A mount point inside is left with
    /// the directories leading to it, and the removal reports EBUSY; directories deeper than `removalDepth` (the
    /// largest MaxPackageDepth=) levels are left, ELOOP. The first error is returned after every other entry has been removed.
    public static func remove(_ name: [UInt8], in directory: Directory) -> Errno? {
        remove(name, in: directory, resolution: .detected)
    }
}

/// Why a package could not be copied: the source refused, or the copy failed.
public enum PackageCopyFailure: Error, Sendable {
    case refused(PackageRefusal)
    case failed(SystemError)
}

extension Directory {
    /// Opens an entry the agent holds (in failed/, unhandled/, a container) by descriptor, never following it: a
    /// regular file with one link (`openRegular`), or a directory (`openPackage`: a package document held whole, or a
    /// directory moved aside).
    public func openHeld(_ name: [UInt8]) -> SafeOpenResult {
        let result = openRegular(name)
        if case .refused(.directory) = result { return openPackage(name) }
        return result
    }

    /// Opens an entry only if it is a directory: pinned with O_PATH|O_NOFOLLOW, checked with fstat, and reopened
    /// O_RDONLY|O_DIRECTORY through the pinned descriptor's own "." (the very inode checked, without /proc); any other
    /// kind is `.refused(kind)`, never opened.
    public func openPackage(_ name: [UInt8]) -> SafeOpenResult {
        let pinned: FileDescriptor, st: stat
        switch pin(name) {
        case .pinned(let fd, let status): (pinned, st) = (fd, status)
        case .not(let result): return result
        }
        defer { pinned.close() }
        let kind = EntryKind(mode: st.st_mode)
        guard kind == .directory else { return .refused(kind) }
        let reopened: FileDescriptor
        switch retryingErrno({
            withCName(Array(".".utf8)) { sys_openat(pinned.rawValue, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }) {
        case .success(let fd): reopened = FileDescriptor(rawValue: fd)
        case .failure(.noSuchFile): return .gone
        case .failure(let error): return .failed(SystemError("openat", path: child(displayName(name)), errno: error))
        }
        guard let check = try? reopened.status(), check.st_ino == st.st_ino, check.st_dev == st.st_dev else {
            reopened.close()
            return .failed(SystemError("fstat", path: child(displayName(name)), errno: .invalidArgument))
        }
        return .opened(OpenedFile(descriptor: reopened, status: check))
    }
}
