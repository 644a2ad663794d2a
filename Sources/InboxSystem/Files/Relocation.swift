extension Directory {
    /// Moves an entry into `target` under a free name. Across filesystems (EXDEV) it copies the open file instead,
    /// then removes the original, and returns the copy, open.
    public func relocate(_ name: [UInt8], file: OpenedFile, to target: Directory,
                         preferred: String) -> Result<(name: String, copy: FileDescriptor?), SystemError> {
        switch moveUnique(name, to: target, preferred: preferred) {
        case .success(let newName):
            return .success((newName, nil))
        case .failure(.crossDevice):
            switch copyIn(file, to: target, preferred: preferred) {
            case .success(let (newName, copy)):
                // Only the very file that was copied is removed. (The Inbox is sticky, so only its sender could swap
                // another in between this check and the unlink.)
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
