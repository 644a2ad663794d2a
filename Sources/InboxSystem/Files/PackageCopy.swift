import Glibc
import InboxCore

// PackageTree.handOver and PackageTree.copy: both follow a checked manifest entry by entry (ManifestCursor), each
// entry pinned beneath its directory's descriptor and compared with the manifest's device and inode before anything
// is done to it or read from it, so another inode put at a path since the check is never acted on.

extension PackageTree {
    static func handOver(_ root: FileDescriptor, manifest: PackageManifest, owner: uid_t?, group: gid_t?,
                         fileMode: mode_t, directoryMode: mode_t, resolution: PackageResolution) -> Errno? {
        let opener: PackageOpener
        do { opener = try PackageOpener.beneath(root, resolution: resolution) } catch { return error }
        guard opener.device == manifest.root.device,
              (try? root.status()).map({ UInt64($0.st_ino) }) == manifest.root.inode else { return .staleEntry }
        func give(_ fd: FileDescriptor, _ kind: EntryKind) -> Errno? {
            if owner != nil || group != nil {
                let (uid, gid) = (owner ?? uid_t.max, group ?? gid_t.max)
                let result = retryingErrno { withCName([]) { sys_fchownat(fd.rawValue, $0, uid, gid, AT_EMPTY_PATH) } }
                if case .failure(let error) = result { return error }
            }
            // chmod(2) through the descriptor's /proc/self/fd link: the very inode pinned (fchmod(2) refuses an O_PATH
            // descriptor; chown first, as it may clear set-id bits).
            let mode = kind == .directory ? directoryMode : fileMode
            let proc = "/proc/self/fd/\(fd.rawValue)"
            if case .failure(let error) = retryingErrno({ sys_chmod(proc, mode) }) { return error }
            return nil
        }
        if let error = give(root, .directory) { return error }
        var cursor = ManifestCursor(root: root, entry: manifest.root, opener: opener)
        defer { cursor.close() }
        for entry in manifest.entries.dropFirst() {
            let fd: FileDescriptor
            switch cursor.pin(entry) {
            case .success(let (pinned, _)): fd = pinned
            case .failure(.gone): return .noSuchFile
            case .failure(.mountPoint): return .crossDevice
            case .failure(.failed(let error)): return error
            }
            if let error = give(fd, entry.kind) {
                fd.close()
                return error
            }
            if entry.kind == .directory { cursor.enter(entry, fd) } else { fd.close() }
        }
        return nil
    }

    /// `copy` with the resolution chosen, and `checked` called between the source's check and the copying (tests
    /// replace an entry there).
    static func copy(_ root: FileDescriptor, into target: Directory, as name: [UInt8], limits: PackageLimits,
                     resolution: PackageResolution,
                     checked: () -> Void = {}) -> Result<PackageManifest, PackageCopyFailure> {
        let manifest: PackageManifest
        switch check(root, limits: limits, resolution: resolution) {
        case .success(let walked): manifest = walked
        case .failure(let refusal): return .failure(.refused(refusal))
        }
        checked()
        let path = target.child(displayName(name))
        let made = retryingErrno { withCName(name) { sys_mkdirat(target.descriptor.rawValue, $0, 0o700) } }
        if case .failure(let error) = made {
            return .failure(.failed(SystemError("mkdirat", path: path, errno: error)))
        }
        let copyRoot: FileDescriptor
        do { copyRoot = try target.openFile(name, .readOnly, options: [.directory, .noFollow]) } catch {
            _ = remove(name, in: target, resolution: resolution)
            return .failure(.failed(SystemError("openat", path: path, errno: error)))
        }
        defer { copyRoot.close() }
        let copier = PackageCopier(path: path, resolution: resolution)
        if let failure = copier.run(from: root, manifest, to: copyRoot) {
            _ = remove(name, in: target, resolution: resolution)
            return .failure(failure)
        }
        switch check(copyRoot, limits: limits, resolution: resolution) {
        case .success(let copied):
            target.syncEntries()
            return .success(copied)
        case .failure(let refusal):
            _ = remove(name, in: target, resolution: resolution)
            return .failure(.failed(SystemError("copy", path: path + ": " + refusal.reason, errno: .ioError)))
        }
    }
}

/// Copies a checked package entry by entry: the source pinned and compared with its manifest entry, the copy's
/// directories made 0700 and given their modes once filled, everything synced.
private struct PackageCopier {
    /// The copy's path, for errors.
    let path: String
    let resolution: PackageResolution

    init(path: String, resolution: PackageResolution) {
        self.path = path
        self.resolution = resolution
    }

    func run(from root: FileDescriptor, _ manifest: PackageManifest,
                      to copyRoot: FileDescriptor) -> PackageCopyFailure? {
        let opener: PackageOpener
        do { opener = try PackageOpener.beneath(root, resolution: resolution) } catch {
            return .refused(.unreadable(path: ".", errno: error))
        }
        do { try copyRoot.chmod(0o700) } catch { return .failed(SystemError("fchmod", path: path, errno: error)) }
        if let failure = copyAttributes(from: root, to: copyRoot) { return failure }
        var source = ManifestCursor(root: root, entry: manifest.root, opener: opener)
        // The copy's directories being filled, in step with the source's (the copy's own first, not closed here).
        var made: [FileDescriptor] = [copyRoot]
        var failure: PackageCopyFailure?
        // A directory copied: the source's must still be as checked (an entry added to it since would be missing from
        // the copy), and the copy's gets its mode and is synced.
        func finish(_ entry: PackageEntry, _ original: FileDescriptor) {
            let directory = made.removeLast()
            defer { directory.close() }
            guard failure == nil else { return }
            guard unchanged(entry, original) else {
                failure = .refused(.changing(path: packageDisplay(entry.path)))
                return
            }
            do throws(Errno) {
                try directory.chmod(copyMode(entry))
                try directory.fsync()
            } catch {
                failure = .failed(SystemError("fsync", path: self.path + "/" + displayName(entry.path), errno: error))
            }
        }
        // Left early (a failure): the copy is removed, its directories need only be closed.
        defer { source.close { _, _ in made.removeLast().close() } }
        for entry in manifest.entries.dropFirst() {
            source.ascend(toParentOf: entry.depth, finish)
            if let failure { return failure }
            let entryPath = displayName(entry.path)
            let pinned: FileDescriptor
            switch source.pin(entry) {
            case .success(let (fd, _)): pinned = fd
            case .failure(.gone), .failure(.failed(.staleEntry)): return .refused(.changing(path: entryPath))
            case .failure(.mountPoint): return .refused(.mountPoint(path: entryPath))
            case .failure(.failed(let error)): return .refused(.unreadable(path: entryPath, errno: error))
            }
            let name = packageName(entry.path), parent = made[made.count - 1]
            if entry.kind == .directory {
                switch makeDirectory(name, in: parent, entryPath) {
                case .success(let directory):
                    made.append(directory)
                    source.enter(entry, pinned)
                case .failure(let error):
                    pinned.close()
                    return error
                }
            } else {
                defer { pinned.close() }
                if let error = copyFile(pinned, entry, name, into: parent) { return error }
            }
        }
        source.close(finish)
        if let failure { return failure }
        guard unchanged(manifest.root, root) else { return .refused(.changing(path: ".")) }
        do { try copyRoot.fsync() } catch { return .failed(SystemError("fsync", path: path, errno: error)) }
        return nil
    }

    /// Whether the open entry's status is still the one its manifest entry recorded.
    private func unchanged(_ entry: PackageEntry, _ descriptor: FileDescriptor) -> Bool {
        guard let st = try? descriptor.status() else { return false }
        return PackageEntry(path: entry.path, kind: entry.kind, depth: entry.depth, status: st) == entry
    }

    private func makeDirectory(_ name: [UInt8], in parent: FileDescriptor,
                               _ entryPath: String) -> Result<FileDescriptor, PackageCopyFailure> {
        let path = self.path + "/" + entryPath
        if case .failure(let error) = retryingErrno({ withCName(name) { sys_mkdirat(parent.rawValue, $0, 0o700) } }) {
            return .failure(.failed(SystemError("mkdirat", path: path, errno: error)))
        }
        switch retryingErrno({
            withCName(name) { sys_openat(parent.rawValue, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        }) {
        case .success(let fd): return .success(FileDescriptor(rawValue: fd))
        case .failure(let error): return .failure(.failed(SystemError("openat", path: path, errno: error)))
        }
    }

    /// Copies a pinned regular file: reopened for reading through /proc/self/fd (the very inode pinned), read up to
    /// its recorded size and one byte more, and compared with its manifest entry after (a file still being written is
    /// `.changing`).
    private func copyFile(_ pinned: FileDescriptor, _ entry: PackageEntry, _ name: [UInt8],
                          into parent: FileDescriptor) -> PackageCopyFailure? {
        let entryPath = displayName(entry.path), path = self.path + "/" + entryPath
        let source: FileDescriptor
        switch retryingErrno({
            sys_open("/proc/self/fd/\(pinned.rawValue)", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        }) {
        case .success(let fd): source = FileDescriptor(rawValue: fd)
        case .failure(let error): return .refused(.unreadable(path: entryPath, errno: error))
        }
        defer { source.close() }
        guard let opened = try? source.status(), UInt64(opened.st_dev) == entry.device,
              UInt64(opened.st_ino) == entry.inode else { return .refused(.changing(path: entryPath)) }
        let copy: FileDescriptor
        switch retryingErrno({
            withCName(name) {
                sys_openat(parent.rawValue, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            }
        }) {
        case .success(let fd): copy = FileDescriptor(rawValue: fd)
        case .failure(let error): return .failed(SystemError("openat", path: path, errno: error))
        }
        defer { copy.close() }
        let copied: Result<Int64, PackageCopyFailure> = withUnsafeTemporaryAllocation(byteCount: 1 << 16,
                                                                                       alignment: 8) { buffer in
            var offset: Int64 = 0
            while offset <= entry.size {
                let want = Int(min(Int64(buffer.count), entry.size + 1 - offset))
                let count: Int
                let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])
                do throws(Errno) { count = try source.read(fully: chunk, at: offset) } catch {
                    return .failure(.refused(.unreadable(path: entryPath, errno: error)))
                }
                if count == 0 { break }
                if let error = copy.write(all: UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                    return .failure(.failed(SystemError("write", path: path, errno: error)))
                }
                offset += Int64(count)
            }
            return .success(offset)
        }
        switch copied {
        case .failure(let failure): return failure
        case .success(let size) where size != entry.size: return .refused(.changing(path: entryPath))
        case .success: break
        }
        guard unchanged(entry, source) else { return .refused(.changing(path: entryPath)) }
        do {
            try copy.chmod(copyMode(entry))
            try copy.fsync()
        } catch { return .failed(SystemError("fsync", path: path, errno: error)) }
        return nil
    }

    /// The package's `user.` attributes (its metadata: what a sender set) go with it, as with a single file's copy.
    private func copyAttributes(from root: FileDescriptor, to copyRoot: FileDescriptor) -> PackageCopyFailure? {
        ExtendedAttributes(root).copyUserAttributes(to: ExtendedAttributes(copyRoot))
            .map { .failed(SystemError("fsetxattr", path: path, errno: $0)) }
    }
}

/// An ordinary copy's mode: the source's permission bits less group and other write and the set-id and sticky bits
/// (0644, 0755); a directory keeps its owner's rwx so the copy can be filled and removed.
private func copyMode(_ entry: PackageEntry) -> mode_t {
    let bits = mode_t(entry.mode) & 0o755
    return entry.kind == .directory ? bits | 0o700 : bits
}
