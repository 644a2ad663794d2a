import Glibc

extension Directory {
    /// Why a copy was not made.
    public enum CopyFailure: Error, Sendable, CustomStringConvertible {
        /// An entry of that name is already here: nothing was replaced.
        case exists(String)
        case failed(SystemError)

        public var description: String {
            switch self {
            case .exists(let path): "\(path) already exists; nothing was replaced"
            case .failed(let error): "\(error)"
            }
        }
    }

    /// A copy of the open file `source` here as `name`, with `mode` (less the umask): its bytes read with pread from
    /// the start (the descriptor's offset does not matter, and no name is opened again), written under a hidden name
    /// (`O_EXCL`, no link followed), synced, then renamed to `name` only if nothing has that name (renameat2
    /// `RENAME_NOREPLACE`). So an existing entry is never replaced and a half copy is never seen as `name`; on any
    /// failure the hidden file is removed.
    public func copyFile(from source: FileDescriptor, as name: String, mode: mode_t) -> Result<Void, CopyFailure> {
        let inode = (try? source.status().st_ino).map { "-\($0)" } ?? ""
        let temporary = ".inboxctl-copy-\(CurrentProcess.id)\(inode)"
        let copy: FileDescriptor
        do { copy = try openFile(temporary, .writeOnly, options: [.create, .exclusive, .noFollow], permissions: mode) } catch {
            return .failure(.failed(SystemError("openat", path: child(temporary), errno: error)))
        }
        func fail(_ operation: String, _ error: Errno, _ path: String) -> Result<Void, CopyFailure> {
            copy.close()
            remove(temporary)
            return .failure(.failed(SystemError(operation, path: path, errno: error)))
        }
        if let error = copyContents(from: source, to: copy) { return fail("copy", error, child(temporary)) }
        do { try copy.fsync() } catch { return fail("fsync", error, child(temporary)) }
        copy.close()
        switch move(Array(temporary.utf8), to: self, as: Array(name.utf8)) {
        case nil:
            _ = syncEntries()
            return .success(())
        case .fileExists?:
            remove(temporary)
            return .failure(.exists(child(name)))
        case let error?:
            remove(temporary)
            return .failure(.failed(SystemError("renameat2", path: child(name), errno: error)))
        }
    }
}
