import Glibc

extension Directory {
    /// For a move that rename(2) cannot do (EXDEV: the drop Inbox and the state directory are on
    /// different filesystems): copies the open file and its `user.` attributes to a hidden name in
    /// `target`, syncs it, and renames it into place as `preferred` (or `preferred-2`...). Returns
    /// the name used and the copy, open for reading. The source entry is left for the caller.
    public func copyIn(_ source: OpenedFile, to target: Directory, preferred: String) -> Result<(String, FileDescriptor), SystemError> {
        let temporary = ".inboxd-copy-\(CurrentProcess.id)-\(source.status.st_ino)"
        let path = target.child(temporary)
        let copy: FileDescriptor
        do { copy = try target.openFile(temporary, .readWrite, options: [.create, .exclusive, .noFollow], permissions: 0o600) } catch {
            return .failure(SystemError("openat", path: path, errno: error))
        }
        func fail(_ operation: String, _ error: Errno) -> Result<(String, FileDescriptor), SystemError> {
            copy.close()
            target.remove(temporary)
            return .failure(SystemError(operation, path: path, errno: error))
        }
        if let error = copyContents(from: source.descriptor, to: copy) { return fail("copy", error) }
        if let error = ExtendedAttributes(source.descriptor).copyUserAttributes(to: ExtendedAttributes(copy)) {
            return fail("fsetxattr", error)
        }
        do { try copy.fsync() } catch { return fail("fsync", error) }
        switch target.moveUnique(Array(temporary.utf8), to: target, preferred: preferred) {
        case .success(let name):
            try? target.descriptor.fsync()
            return .success((name, copy))
        case .failure(let error):
            return fail("renameat2", error)
        }
    }
}

/// Copies a whole file with pread/write, so the source's offset does not matter; up to the end it has when read.
func copyContents(from source: FileDescriptor, to target: FileDescriptor) -> Errno? {
    withUnsafeTemporaryAllocation(byteCount: 1 << 16, alignment: 8) { buffer in
        var offset: Int64 = 0
        while true {
            let count: Int
            do throws(Errno) { count = try source.read(fully: buffer, at: offset) } catch { return error }
            if count == 0 { return nil }
            if let error = target.write(all: UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { return error }
            offset += Int64(count)
        }
    }
}
