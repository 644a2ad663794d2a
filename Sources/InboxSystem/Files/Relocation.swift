import Glibc

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
    public func relocate(_ name: [UInt8], file: OpenedFile, to target: Directory, preferred: String,
                         via staging: Directory, rejectsTo failed: Directory?,
                         prepare: (FileDescriptor) -> Void) -> Relocation {
        let stagingName = "\(file.status.st_dev)-\(file.status.st_ino)"
        let staged: String
        var copy: FileDescriptor?
        if self === staging {
            staged = displayName(name)
        } else {
            switch transfer(name, file: file, to: staging, preferred: stagingName) {
            case .success(let (newName, copied)):
                staged = newName
                copy = copied
            case .failure(let error):
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
                return .swapped(found: found.map { EntryKind(mode: $0.st_mode) }, keptAs: kept.map { failed!.child($0) })
            }
        }
        prepare(copy ?? file.descriptor)
        switch staging.moveUnique(Array(staged.utf8), to: target, preferred: preferred) {
        case .success(let newName):
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
