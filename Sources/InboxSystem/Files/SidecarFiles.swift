import Glibc
import InboxCore

/// What looking for a file's sidecar found.
public enum SidecarRead: Equatable {
    case absent
    case read([UInt8])
    /// There is one, but it is not read: why.
    case refused(String)
}

extension Directory {
    /// Reads the sidecar of `name` with the care given to the file itself (docs/design.md, Sidecar): never followed, a regular file
    /// with one link, opened without blocking, at most `Sidecar.maximumBytes`, and owned by `owner` (the file's owner)
    /// or by this process's user, so nobody can attach metadata to another user's file.
    public func readSidecar(of name: [UInt8], owner: uid_t) -> SidecarRead {
        let sidecar = Sidecar.name(for: name)
        guard sidecar.count <= 255 else { return .absent }
        let file: OpenedFile
        switch openRegular(sidecar) {
        case .gone: return .absent
        case .refused(let kind): return .refused("it is a \(kind.rawValue)")
        case .failed(let error): return .refused("\(error)")
        case .opened(let opened): file = opened
        }
        defer { file.descriptor.close() }
        guard file.status.st_uid == owner || file.status.st_uid == CurrentProcess.effectiveUserID else {
            return .refused("it belongs to uid \(file.status.st_uid), not to the file's owner \(owner)")
        }
        guard file.status.st_size <= Sidecar.maximumBytes else {
            return .refused("it is \(file.status.st_size) bytes, over the limit of \(Sidecar.maximumBytes)")
        }
        // One byte more than its size, so one that grew since fstat is noticed.
        var bytes = [UInt8](repeating: 0, count: Int(file.status.st_size) + 1)
        let count: Int
        switch bytes.withUnsafeMutableBytes({ buffer in Result { () throws(Errno) in try file.descriptor.read(fully: buffer) } }) {
        case .success(let read): count = read
        case .failure(let error): return .refused("cannot read it: \(error)")
        }
        guard count <= Sidecar.maximumBytes else { return .refused("it grew past \(Sidecar.maximumBytes) bytes") }
        return .read(Array(bytes.prefix(count)))
    }

    /// Writes a new sidecar for `name` (never replacing an entry), synced. nil on success.
    public func createSidecar(_ bytes: [UInt8], for name: String) -> Errno? {
        let sidecar = Sidecar.name(for: Array(name.utf8))
        let file: FileDescriptor
        do { file = try openFile(sidecar, .writeOnly, options: [.create, .exclusive, .noFollow], permissions: 0o600) } catch {
            return error
        }
        defer { file.close() }
        var failure = file.write(all: bytes)
        if failure == nil {
            do { try file.fsync() } catch { failure = error }
        }
        if failure != nil { remove(sidecar) }
        return failure
    }

    /// Makes the sidecar of `name` here the sidecar of `newName` in `target`, replacing a stale one there (and removing
    /// it when `name` has none); across filesystems it is copied, then removed here.
    @discardableResult
    public func moveSidecar(of name: [UInt8], to target: Directory, as newName: String) -> Errno? {
        let old = Sidecar.name(for: name)
        let new = Sidecar.name(for: Array(newName.utf8))
        if target === self && old == new { return nil }
        let result = withCName(old) { from in
            withCName(new) { to in sys_renameat2(descriptor.rawValue, from, target.descriptor.rawValue, to, 0) }
        }
        if result == 0 {
            // The agent's directories hold the agent's files: a sender's sidecar becomes root's, like its file.
            if CurrentProcess.effectiveUserID == 0 {
                _ = withCName(new) { sys_fchownat(target.descriptor.rawValue, $0, 0, 0, AT_SYMLINK_NOFOLLOW) }
            }
            return nil
        }
        if errno == ENOENT {
            // No sidecar came with the file: one left at the new name from an earlier file must not be taken for its.
            target.remove(new)
            return nil
        }
        guard errno == EXDEV else { return .current }
        guard case .read(let bytes) = readSidecar(of: name, owner: CurrentProcess.effectiveUserID) else { return .invalidArgument }
        target.remove(new)
        if let error = target.createSidecar(bytes, for: newName) { return error }
        remove(old)
        return nil
    }

    /// Removes the sidecars among `names` (this directory's entries) whose file is not there: what a crash between
    /// moving or removing a file and its sidecar leaves, which must not be taken for a later file's of that name.
    public func removeOrphanSidecars(among names: [[UInt8]]) {
        let present = Set(names)
        for name in names {
            if let file = Sidecar.fileName(ofSidecar: name), !present.contains(file) { remove(name) }
        }
    }

    /// Removes the sidecar of `name`, if there is one.
    public func removeSidecar(of name: [UInt8]) {
        remove(Sidecar.name(for: name))
    }

    /// Renames the hidden entry `hidden` into place under a free name (`preferred`, `NAME-2.EXT`...), as `moveUnique`
    /// does; with `sidecar`, that text is first written as the sidecar of the name about to be taken, so the file
    /// never appears without it. A name whose sidecar is already there is skipped.
    public func publish(_ hidden: [UInt8], preferred: String, sidecar: [UInt8]?) -> Result<String, Errno> {
        guard let sidecar else { return moveUnique(hidden, to: self, preferred: preferred) }
        for attempt in 1...1000 {
            let candidate = attempt == 1 ? preferred : FileNames.numbered(preferred, attempt)
            switch createSidecar(sidecar, for: candidate) {
            case nil: break
            case .fileExists?: continue
            case let error?: return .failure(error)
            }
            switch move(hidden, to: self, as: Array(candidate.utf8)) {
            case nil: return .success(candidate)
            case .fileExists?: removeSidecar(of: Array(candidate.utf8))
            case let error?:
                removeSidecar(of: Array(candidate.utf8))
                return .failure(error)
            }
        }
        return .failure(.fileExists)
    }
}
