import Glibc
import InboxCore

/// The renderer's private directory: `inboxctl-preview-XXXXXX` in the caller's TMPDIR (or /tmp), removed whole with
/// the renderer whatever a generator left in it.
///
/// ```
/// inboxctl-preview-XXXXXX/   0750 root:<generator group> (the caller's own, 0700, as a user)
///   home/  tmp/              the generators' HOME and TMPDIR, theirs to write
///   in/                      copies of documents and text pages for them to read (0440, never theirs to change)
///   run-N/                   one generator run's output directory, theirs to write
///   pages/  log/             ours only: what the runs made, moved out of their reach; their output and error logs
/// ```
///
/// As root the generators run as another identity, which owns `home/`, `tmp/` and `run-N/` and nothing else: what a
/// run made is moved into `pages/` (renameat2, never following it) and checked there as a regular file with one link,
/// so that nothing it left behind (a link to /etc/shadow, a file it keeps changing) is what the caller reads.
final class PreviewScratch {
    let root: Directory
    let home: String
    let tmp: String
    let inputs: Directory
    let pages: Directory
    let logs: Directory
    /// Who the generators run as; nil is the caller.
    let identity: Identity?
    private var runs = 0
    private var removed = false

    init(identity: Identity?) throws(SystemError) {
        root = try Self.makeRoot(identity: identity)
        let path = root.path
        self.identity = identity
        do {
            home = try Self.owned(root, "home", by: identity).path
            tmp = try Self.owned(root, "tmp", by: identity).path
            inputs = try root.subdirectory("in", mode: 0o700)
            if let identity {
                try? inputs.descriptor.chown(uid: 0, gid: identity.gid)
                try? inputs.descriptor.chmod(0o750)
            }
            pages = try root.subdirectory("pages", mode: 0o700)
            logs = try root.subdirectory("log", mode: 0o700)
        } catch {
            Self.remove(path)
            throw error
        }
    }

    deinit { remove() }

    /// Removes the whole directory; later calls do nothing.
    func remove() {
        guard !removed else { return }
        removed = true
        Self.remove(root.path)
    }

    /// A new `inboxctl-preview-XXXXXX` in the caller's TMPDIR (or /tmp): the caller's own, or, for another
    /// identity, `0750 root:<its group>`. A registered viewer's preview (PreviewSession) makes its directory here too.
    static func makeRoot(identity: Identity?) throws(SystemError) -> Directory {
        let base = CurrentProcess.environment("TMPDIR").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        let path: String
        do { path = try FileSystem.makeTemporaryDirectory(prefix: base + "/inboxctl-preview-") } catch {
            throw SystemError("mkdtemp", path: base, errno: error)
        }
        let root = try Directory(path: path)
        if let identity {
            try? root.descriptor.chown(uid: 0, gid: identity.gid)
            try? root.descriptor.chmod(0o750)
        }
        return root
    }

    /// Removes a directory made by `makeRoot`, whatever is in it.
    static func remove(_ path: String) {
        guard let parent = try? Directory(path: parentPath(path)) else { return }
        parent.removeTree(Array(lastPathComponent(path).utf8))
    }

    /// A subdirectory the generators' identity owns (mode 0700).
    private static func owned(_ root: Directory, _ name: String, by identity: Identity?) throws(SystemError) -> Directory {
        let directory = try root.subdirectory(name, mode: 0o700)
        if let identity {
            do { try directory.descriptor.chown(uid: identity.uid, gid: identity.gid) } catch {
                throw SystemError("fchown", path: directory.path, errno: error)
            }
        }
        return directory
    }

    /// A fresh output directory for one run, the generator's to write.
    func makeRunDirectory() throws(SystemError) -> (directory: Directory, index: Int) {
        runs += 1
        return (try Self.owned(root, "run-\(runs)", by: identity), runs)
    }

    /// A fresh log file for one run's stdout and stderr, ours (the generator writes through the descriptor it is
    /// given), and its path.
    func makeLog(_ name: String) throws(SystemError) -> FileDescriptor {
        runs += 1
        let fileName = "\(runs)-\(name)"
        do { return try logs.openFile(fileName, .readWrite, options: [.create, .exclusive, .noFollow]) } catch {
            throw SystemError("openat", path: logs.child(fileName), errno: error)
        }
    }

    /// Copies an open regular file into `in/` as `name` (a sanitized name, the extension kept), readable by the
    /// generators and by nobody else, changeable by none of them; its path.
    func copyIn(_ file: FileDescriptor, name: String) throws(SystemError) -> String {
        let status: stat
        do { status = try file.status() } catch { throw SystemError("fstat", path: name, errno: error) }
        switch root.copyIn(OpenedFile(descriptor: file, status: status), to: inputs, preferred: name) {
        case .success(let (placed, copy)):
            defer { copy.close() }
            if let identity { try? copy.chown(uid: 0, gid: identity.gid) }
            try? copy.chmod(identity == nil ? 0o400 : 0o440)
            return inputs.child(placed)
        case .failure(let error):
            throw error
        }
    }

    /// Writes `bytes` into `in/` as a new file for the generators to read; its path.
    func writeInput(_ name: String, bytes: [UInt8]) throws(SystemError) -> String {
        let file: FileDescriptor
        do { file = try inputs.openFile(name, .writeOnly, options: [.create, .exclusive, .noFollow]) } catch {
            throw SystemError("openat", path: inputs.child(name), errno: error)
        }
        defer { file.close() }
        if let error = file.write(all: bytes) { throw SystemError("write", path: inputs.child(name), errno: error) }
        if let identity { try? file.chown(uid: 0, gid: identity.gid) }
        try? file.chmod(identity == nil ? 0o400 : 0o440)
        return inputs.child(name)
    }

    /// Takes `name` out of a run's directory into `pages/` as `as`, where no generator can reach it, and checks it
    /// there: a regular file with one link. Its path, or nil when it is missing or anything else.
    func collect(_ name: [UInt8], from run: Directory, as newName: String) -> String? {
        guard run.move(name, to: pages, as: Array(newName.utf8)) == nil else { return nil }
        switch pages.openRegular(Array(newName.utf8)) {
        case .opened(let file):
            // Ours now: the generator's identity can no longer change its mode or write it by name.
            if identity != nil { try? file.descriptor.chown(uid: 0, gid: 0) }
            try? file.descriptor.chmod(0o600)
            file.descriptor.close()
            return pages.child(newName)
        case .refused, .gone, .failed:
            pages.removeTree(Array(newName.utf8))
            return nil
        }
    }

    /// Opens a collected file for reading.
    func openCollected(_ path: String) -> FileDescriptor? {
        guard case .opened(let file) = pages.openRegular(Array(lastPathComponent(path).utf8)) else { return nil }
        return file.descriptor
    }
}
