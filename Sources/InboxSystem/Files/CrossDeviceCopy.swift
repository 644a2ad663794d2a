import Glibc

extension Directory {
    /// For a move that rename(2) cannot do (EXDEV: the drop Inbox and the state directory are on
    /// different filesystems): copies the open file and its `user.` attributes to a hidden name in
    /// `target`, syncs it, and renames it into place as `preferred` (or `preferred-2`...). Returns
    /// the name used and the copy, open for reading. The source entry is left for the caller.
    public func copyIn(_ source: OpenedFile, to target: Directory, preferred: String) -> Result<(String, FileDescriptor), SystemError> {
        let temporary = ".inboxd-copy-\(getpid())-\(source.status.st_ino)"
        let path = target.child(temporary)
        let fd: CInt
        switch retryingErrno({
            temporary.withCString { sys_openat(target.descriptor.rawValue, $0, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        }) {
        case .success(let opened): fd = opened
        case .failure(let error): return .failure(SystemError("openat", path: path, errno: error))
        }
        let copy = FileDescriptor(rawValue: fd)
        func fail(_ operation: String, _ error: Errno) -> Result<(String, FileDescriptor), SystemError> {
            copy.close()
            _ = temporary.withCString { sys_unlinkat(target.descriptor.rawValue, $0, 0) }
            return .failure(SystemError(operation, path: path, errno: error))
        }
        if let error = copyContents(from: source.descriptor.rawValue, to: fd) { return fail("copy", error) }
        let from = ExtendedAttributes(source.descriptor)
        for name in from.names() where name.hasPrefix("user.") {
            if case .value(let bytes) = from.read(name, limit: 65536) {
                let result = bytes.withUnsafeBytes { sys_fsetxattr(fd, name, $0) }
                if result != 0 { return fail("fsetxattr", .current) }
            }
        }
        if fsync(fd) != 0 { return fail("fsync", .current) }
        switch target.moveUnique(Array(temporary.utf8), to: target, preferred: preferred) {
        case .success(let name):
            _ = fsync(target.descriptor.rawValue)
            return .success((name, copy))
        case .failure(let error):
            return fail("renameat2", error)
        }
    }
}

/// Copies a whole file with pread/write, so the source's offset does not matter.
private func copyContents(from source: CInt, to target: CInt) -> Errno? {
    withUnsafeTemporaryAllocation(byteCount: 1 << 16, alignment: 8) { buffer in
        var offset: off_t = 0
        while true {
            let count = pread(source, buffer.baseAddress, buffer.count, offset)
            if count < 0 {
                if errno == EINTR { continue }
                return .current
            }
            if count == 0 { return nil }
            if let error = FileDescriptor(rawValue: target).write(all: UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                return error
            }
            offset += off_t(count)
        }
    }
}
