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
    public func relocate(_ name: [UInt8], file: OpenedFile, to target: Directory, preferred: String,
                         via staging: Directory, rejectsTo failed: Directory?, sidecar: [UInt8]? = nil,
                         prepare: (FileDescriptor) -> Void) -> Relocation {
        let stagingName = "\(file.status.st_dev)-\(file.status.st_ino)"
        let staged: String
        var copy: FileDescriptor?
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
            switch transfer(name, file: file, to: staging, preferred: stagingName) {
            case .success(let (newName, copied)):
                staged = newName
                copy = copied
                if sidecar != nil && newName != stagingName {
                    staging.moveSidecar(of: Array(stagingName.utf8), to: staging, as: newName)
                }
            case .failure(let error):
                if sidecar != nil { staging.removeSidecar(of: Array(stagingName.utf8)) }
                return .failed(error)
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
        }
        // The file is the agent's, its metadata in the agent's sidecar: the sender's has served.
        if sidecar != nil && self !== staging { removeSidecar(of: name) }
        prepare(copy ?? file.descriptor)
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
