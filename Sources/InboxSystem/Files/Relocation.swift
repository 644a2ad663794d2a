import Glibc
import InboxCore

/// How a move of a checked file into one of the agent's directories ended (`Directory.relocate`).
public enum Relocation {
    /// In the target as `name`; `copy` is the agent's copy, open, when the move had to copy (EXDEV).
    case moved(name: String, copy: FileDescriptor?)
    /// The name no longer led to the inode that was checked: its sender swapped it (for a link, another file...)
    /// after the check. What the name led to, never opened, was kept in failed/ as `keptAs` (nil: it could not be).
    case swapped(found: EntryKind?, keptAs: String?)
    /// Nothing was moved or changed: the file is still where it was.
    case failed(SystemError)
    /// The file is the agent's already, prepared, in the staging directory as `name`, but could not go on.
    case staged(name: String, SystemError)
    /// A package's tree was not the one checked once the agent had it (`reason`: what changed): its sender was still
    /// writing it. In the staging directory as `stagedAs`, unprepared; nil when nothing was moved (across
    /// filesystems the copy is removed and the original is where it was).
    case changed(reason: String, stagedAs: String?)
    /// A package's file (`entry`) was still open for writing once the package was the agent's, handed over, in the
    /// staging directory as `stagedAs`: its sender kept a descriptor it opened before the rename
    /// (`PackageTree.openWriter`). Nothing went on.
    case writer(entry: String, stagedAs: String)
}

/// A package document to move (`Directory.relocate`): its tree as checked where it was dropped, and the bounds its
/// check and a copy keep to.
public struct PackageMove {
    public let manifest: PackageManifest
    public let limits: PackageLimits

    public init(manifest: PackageManifest, limits: PackageLimits) {
        self.manifest = manifest
        self.limits = limits
    }
}

extension Directory {
    /// Moves a checked file into `target` under a free name, delivering only the inode that was checked
    /// (docs/design.md, Security model: the move by inode). The name is first renamed into `staging`, which only the
    /// agent can write; there fstatat(AT_SYMLINK_NOFOLLOW) must show the checked file's device and inode, or what
    /// arrived is moved on to `failed` as evidence and nothing reaches `target`. Only then is the file `prepare`d
    /// (the agent's attributes, owner and mode: never while its sender still has it) and renamed on. Across
    /// filesystems (EXDEV) the open file is copied into `staging` instead, and the original removed only if its name
    /// still leads to it.
    ///
    /// `sidecar` is the metadata that came in the sender's sidecar, as read and checked: the agent writes it as its
    /// own sidecar beside the name the file takes in `staging`, before the file goes there, and moves it on with the
    /// file, so a file kept in `staging` (a failed move on, a crash) keeps its metadata. The sender's sidecar is never
    /// moved, only removed once the file is in `staging`. A sidecar already beside a file taken from `staging`
    /// goes on with it.
    ///
    /// A package document (`package`; `file` is its directory) moves the same way, by one rename of its directory.
    /// In `staging` its tree is checked again and must be the one checked where it was dropped (entries removed
    /// count too; the directory's own change time is the rename's), else nothing goes on (`.changed`); `prepare` is
    /// given the tree as checked there, to hand every entry over (its failure keeps the package in `staging`). Across
    /// filesystems it is copied entry by entry (`PackageTree.copy`), the original checked again after the copy, and
    /// removed only if its name still leads to the directory that was checked.
    public func relocate(_ name: [UInt8], file: OpenedFile, to target: Directory, preferred: String,
                         via staging: Directory, rejectsTo failed: Directory?, sidecar: [UInt8]? = nil,
                         package: PackageMove? = nil,
                         prepare: (FileDescriptor, PackageManifest?) -> Errno?) -> Relocation {
        let stagingName = "\(file.status.st_dev)-\(file.status.st_ino)"
        let staged: String
        var copy: FileDescriptor?
        var tree = package?.manifest
        if self === staging {
            staged = displayName(name)
        } else {
            if let sidecar {
                // One a crash left at this name is stale: the file's own is the one just read.
                staging.removeSidecar(of: Array(stagingName.utf8))
                if let error = staging.createSidecar(sidecar, for: stagingName) {
                    return .failed(SystemError("open", path: staging.child(".\(stagingName)\(Sidecar.suffix)"), errno: error))
                }
            }
            let moved = package.map { transferPackage(name, file: file, package: $0, to: staging, preferred: stagingName) }
                ?? transfer(name, file: file, to: staging, preferred: stagingName).map { ($0.name, $0.copy, nil) }
                    .mapError { TransferFailure.failed($0) }
            switch moved {
            case .success(let (newName, copied, copiedTree)):
                staged = newName
                copy = copied
                if let copiedTree { tree = copiedTree }
                if sidecar != nil && newName != stagingName {
                    staging.moveSidecar(of: Array(stagingName.utf8), to: staging, as: newName)
                }
            case .failure(let error):
                if sidecar != nil { staging.removeSidecar(of: Array(stagingName.utf8)) }
                switch error {
                case .failed(let error): return .failed(error)
                case .packageChanged(let reason): return .changed(reason: reason, stagedAs: nil)
                }
            }
        }
        if copy == nil {
            let found = (try? staging.status(of: Array(staged.utf8))) ?? nil
            guard let found, found.st_dev == file.status.st_dev, found.st_ino == file.status.st_ino else {
                let kept = failed.flatMap { failed in
                    try? staging.moveUnique(Array(staged.utf8), to: failed, preferred: "rejected-" + preferred).get()
                }
                if kept == nil { staging.remove(Array(staged.utf8)) }
                staging.removeSidecar(of: Array(staged.utf8))
                return .swapped(found: found.map { EntryKind(mode: $0.st_mode) }, keptAs: kept.map { failed!.child($0) })
            }
            // Out of its sender's reach now: the tree the handler gets is the one checked, or nothing goes on.
            if let package {
                if sidecar != nil && self !== staging { removeSidecar(of: name) }
                switch PackageTree.check(file.descriptor, limits: package.limits) {
                case .success(let fresh):
                    if let change = fresh.change(since: package.manifest, allowingRemoval: false,
                                                 ignoringRootChange: true) {
                        return .changed(reason: change.description, stagedAs: staged)
                    }
                    tree = fresh
                case .failure(let refusal):
                    return .changed(reason: refusal.reason, stagedAs: staged)
                }
            }
        }
        // The file is the agent's, its metadata in the agent's sidecar: the sender's has served.
        if sidecar != nil && self !== staging { removeSidecar(of: name) }
        // A package not handed over whole (an entry's owner or mode could not be set) stays here, the agent's.
        if let error = prepare(copy ?? file.descriptor, tree) {
            copy?.close()
            return .staged(name: staged, SystemError("handOver", path: staging.child(staged), errno: error))
        }
        // Handed over, no new open for writing is possible; one its sender made before the rename still works, and
        // only a lease asked of each file sees it (a copy is the agent's own: no one else ever had it open).
        if package != nil, copy == nil, let tree,
           case .writer(let entry) = PackageTree.openWriter(file.descriptor, manifest: tree) {
            return .writer(entry: entry, stagedAs: staged)
        }
        switch staging.moveUnique(Array(staged.utf8), to: target, preferred: preferred) {
        case .success(let newName):
            // Only after the file: a crash in between leaves the sidecar in staging, where the file's is looked for.
            if sidecar != nil || self === staging { staging.moveSidecar(of: Array(staged.utf8), to: target, as: newName) }
            return .moved(name: newName, copy: copy)
        case .failure(let error):
            copy?.close()
            return .staged(name: staged, SystemError("renameat2", path: target.child(preferred), errno: error))
        }
    }
}

extension Directory {
    /// Moves an entry into `target` under a free name, without replacing anything there. Across filesystems (EXDEV)
    /// it copies the open file instead, removes the original only if its name still leads to the copied inode, and
    /// returns the copy, open. On its own it is for the agent's own directories (no one else can write them, so a
    /// name cannot be swapped); a sender's file goes through `relocate`, which uses it to reach `staging`.
    public func transfer(_ name: [UInt8], file: OpenedFile, to target: Directory,
                         preferred: String) -> Result<(name: String, copy: FileDescriptor?), SystemError> {
        switch moveUnique(name, to: target, preferred: preferred) {
        case .success(let newName):
            return .success((newName, nil))
        case .failure(.crossDevice):
            switch copyIn(file, to: target, preferred: preferred) {
            case .success(let (newName, copy)):
                // Only the very file that was copied is removed. (A drop Inbox is sticky, so only its sender could
                // swap another in between this check and the unlink.)
                if let st = try? status(of: name), st.st_ino == file.status.st_ino, st.st_dev == file.status.st_dev {
                    remove(name)
                }
                return .success((newName, copy))
            case .failure(let error):
                return .failure(error)
            }
        case .failure(let error):
            return .failure(SystemError("renameat2", path: target.child(preferred), errno: error))
        }
    }
}

/// Why a move into staging did not happen: the system said no, or (a package copied across filesystems) the
/// original's tree changed while it was copied.
private enum TransferFailure: Error {
    case failed(SystemError)
    case packageChanged(String)
}

extension Directory {
    /// `transfer` for a package document: one rename of its directory, or across filesystems (EXDEV) a copy of its
    /// tree (`PackageTree.copy`, which carries the directory's `user.` attributes) that is kept only if the original, checked
    /// again, is still the tree that was checked; then the original is removed if its name still leads to the
    /// directory copied. Returns the copy open, and its tree.
    fileprivate func transferPackage(_ name: [UInt8], file: OpenedFile, package: PackageMove, to target: Directory,
                                     preferred: String)
        -> Result<(String, FileDescriptor?, PackageManifest?), TransferFailure> {
        switch moveUnique(name, to: target, preferred: preferred) {
        case .success(let newName):
            return .success((newName, nil, nil))
        case .failure(.crossDevice):
            break
        case .failure(let error):
            return .failure(.failed(SystemError("renameat2", path: target.child(preferred), errno: error)))
        }
        let temporary = ".inboxd-copy-\(CurrentProcess.id)-\(file.status.st_ino)"
        let copied: PackageManifest
        switch PackageTree.copy(file.descriptor, into: target, as: Array(temporary.utf8), limits: package.limits) {
        case .success(let manifest):
            copied = manifest
        case .failure(.refused(let refusal)):
            _ = PackageTree.remove(Array(temporary.utf8), in: target)
            return .failure(.packageChanged(refusal.reason))
        case .failure(.failed(let error)):
            _ = PackageTree.remove(Array(temporary.utf8), in: target)
            return .failure(.failed(error))
        }
        func discard() { _ = PackageTree.remove(Array(temporary.utf8), in: target) }
        // The original is still its sender's: what was copied counts only if it is still the tree that was checked.
        switch PackageTree.check(file.descriptor, limits: package.limits) {
        case .success(let again):
            if let change = again.change(since: package.manifest, allowingRemoval: false) {
                discard()
                return .failure(.packageChanged(change.description))
            }
        case .failure(let refusal):
            discard()
            return .failure(.packageChanged(refusal.reason))
        }
        let copy: OpenedFile
        switch target.openPackage(Array(temporary.utf8)) {
        case .opened(let opened): copy = opened
        case .failed(let error):
            discard()
            return .failure(.failed(error))
        case .gone, .refused:
            discard()
            return .failure(.failed(SystemError("openat", path: target.child(temporary), errno: .noSuchFile)))
        }
        switch target.moveUnique(Array(temporary.utf8), to: target, preferred: preferred) {
        case .success(let newName):
            target.syncEntries()
            if let st = try? status(of: name), st.st_ino == file.status.st_ino, st.st_dev == file.status.st_dev {
                _ = PackageTree.remove(name, in: self)
            }
            return .success((newName, copy.descriptor, copied))
        case .failure(let error):
            copy.descriptor.close()
            discard()
            return .failure(.failed(SystemError("renameat2", path: target.child(preferred), errno: error)))
        }
    }
}
