import Glibc
import InboxCore

// PackageTree.check: two passes over the tree. The first lists each directory (in byte order of names, bounded by
// what is left of MaxPackageEntries=) and pins each entry by the rules of PackageOpener, stopping at the first entry
// refused or the first bound passed, so a tree of a million entries costs no more than the bounds. The second follows
// the manifest again and compares each entry's status with the one recorded: a directory whose entries changed has
// another mtime, a file written to another size or mtime, a replaced entry another inode. Any difference is
// `.changing`: the tree is still being written.

extension PackageTree {
    /// `check` with the resolution chosen (tests try both) and `visited` called after each entry the first pass
    /// records (tests change the tree there, at a known point of the walk).
    static func check(_ root: FileDescriptor, limits: PackageLimits, resolution: PackageResolution,
                      visited: (PackageEntry) -> Void = { _ in }) -> Result<PackageManifest, PackageRefusal> {
        let opener: PackageOpener, status: stat
        switch PackageOpener.forRoot(root, resolution: resolution) {
        case .success(let pair): (opener, status) = pair
        case .failure(.mountPoint): return .failure(.mountPoint(path: "."))
        case .failure(.gone): return .failure(.changing(path: "."))
        case .failure(.failed(let error)): return .failure(.unreadable(path: ".", errno: error))
        }
        guard EntryKind(mode: status.st_mode) == .directory else {
            return .failure(.unreadable(path: ".", errno: .notDirectory))
        }
        let rootEntry = PackageEntry(path: [], kind: .directory, depth: 0, status: status)
        var walk = PackageWalk(opener: opener, limits: limits)
        let entries: [PackageEntry]
        switch walk.run(root, rootEntry, visited) {
        case .success(let all): entries = all
        case .failure(let refusal): return .failure(refusal)
        }
        if let path = firstDifference(root, entries, opener) { return .failure(.changing(path: path)) }
        return .success(PackageManifest(entries: entries))
    }

    /// The second pass: the first entry (in manifest order, the package's own directory last) whose status is not the
    /// one recorded, or that is gone or replaced.
    private static func firstDifference(_ root: FileDescriptor, _ entries: [PackageEntry],
                                        _ opener: PackageOpener) -> String? {
        var cursor = ManifestCursor(root: root, entry: entries[0], opener: opener)
        defer { cursor.close() }
        for entry in entries.dropFirst() {
            guard case .success(let (fd, st)) = cursor.pin(entry),
                  PackageEntry(path: entry.path, kind: entry.kind, depth: entry.depth, status: st) == entry else {
                return packageDisplay(entry.path)
            }
            if entry.kind == .directory { cursor.enter(entry, fd) } else { fd.close() }
        }
        guard let st = try? root.status(), PackageEntry(path: [], kind: .directory, depth: 0, status: st) == entries[0]
        else { return "." }
        return nil
    }
}

/// The first pass: depth first, a directory's entries in byte order of their names, one descriptor per level held.
private struct PackageWalk {
    let opener: PackageOpener
    let limits: PackageLimits
    /// Names listed so far, each an entry once visited: what MaxPackageEntries= bounds.
    private var listed = 0
    private var bytes: Int64 = 0
    private var entries: [PackageEntry] = []

    init(opener: PackageOpener, limits: PackageLimits) {
        self.opener = opener
        self.limits = limits
    }

    /// A directory being visited: its descriptor (O_PATH, the package's own as given), its names, the next one.
    private struct Frame {
        let path: [UInt8]
        let depth: Int
        let descriptor: FileDescriptor
        let owned: Bool
        let names: [[UInt8]]
        var next = 0
    }

    mutating func run(_ root: FileDescriptor, _ rootEntry: PackageEntry,
                      _ visited: (PackageEntry) -> Void) -> Result<[PackageEntry], PackageRefusal> {
        entries = [rootEntry]
        var frames: [Frame] = []
        defer { for frame in frames where frame.owned { frame.descriptor.close() } }
        switch list(root, path: [], depth: 0) {
        case .success(let names): frames.append(Frame(path: [], depth: 0, descriptor: root, owned: false, names: names))
        case .failure(let refusal): return .failure(refusal)
        }
        while let frame = frames.last {
            guard frame.next < frame.names.count else {
                if frame.owned { frame.descriptor.close() }
                frames.removeLast()
                continue
            }
            frames[frames.count - 1].next += 1
            let name = frame.names[frame.next], path = packagePath(frame.path, name), depth = frame.depth + 1
            let (fd, st): (FileDescriptor, stat)
            switch opener.pin(name, in: frame.descriptor) {
            case .success(let pinned): (fd, st) = pinned
            case .failure(.gone): return .failure(.changing(path: displayName(path)))
            case .failure(.mountPoint): return .failure(.mountPoint(path: displayName(path)))
            case .failure(.failed(.tooManyLinks)): return .failure(.symlink(path: displayName(path)))
            case .failure(.failed(let error)): return .failure(.unreadable(path: displayName(path), errno: error))
            }
            let kind = EntryKind(mode: st.st_mode)
            if kind != .directory { fd.close() }
            switch kind {
            case .directory:
                guard depth <= limits.maxDepth else {
                    fd.close()
                    return .failure(.tooDeep(limit: limits.maxDepth))
                }
            case .regular:
                guard st.st_nlink == 1 else { return .failure(.hardLink(path: displayName(path))) }
                let (sum, overflow) = bytes.addingReportingOverflow(Int64(st.st_size))
                bytes = overflow ? .max : sum
                if let limit = limits.maxBytes, bytes > limit { return .failure(.tooLarge(limit: limit)) }
            case .symlink: return .failure(.symlink(path: displayName(path)))
            default: return .failure(.special(path: displayName(path), kind: kind))
            }
            let entry = PackageEntry(path: path, kind: kind, depth: depth, status: st)
            entries.append(entry)
            visited(entry)
            if kind == .directory {
                switch list(fd, path: path, depth: depth) {
                case .success(let names):
                    frames.append(Frame(path: path, depth: depth, descriptor: fd, owned: true, names: names))
                case .failure(let refusal):
                    fd.close()
                    return .failure(refusal)
                }
            }
        }
        return .success(entries)
    }

    /// The names in a directory, sorted by their bytes, no more than MaxPackageEntries= leaves room for (reading stops
    /// one past it).
    private mutating func list(_ directory: FileDescriptor, path: [UInt8],
                               depth: Int) -> Result<[[UInt8]], PackageRefusal> {
        let read: Result<(names: [[UInt8]], complete: Bool), Errno>
        do { read = try DirectoryStream(listing: directory).names(upTo: max(0, limits.maxEntries - listed)) } catch {
            return .failure(.unreadable(path: packageDisplay(path), errno: error))
        }
        switch read {
        case .failure(let error): return .failure(.unreadable(path: packageDisplay(path), errno: error))
        case .success((_, false)): return .failure(.tooManyEntries(limit: limits.maxEntries))
        case .success(let (names, true)):
            listed += names.count
            return .success(names.sorted { $0.lexicographicallyPrecedes($1) })
        }
    }
}
