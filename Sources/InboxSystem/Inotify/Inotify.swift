import Glibc

/// A non-blocking, close-on-exec inotify instance (inotify(7)).
public final class Inotify {
    public let descriptor: FileDescriptor
    private var buffer: UnsafeMutableRawBufferPointer

    public init() throws(SystemError) {
        let fd: CInt
        do { fd = try retrying("inotify_init1") { sys_inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC)) } } catch {
            throw Self.withLimitHint(error)
        }
        descriptor = FileDescriptor(rawValue: fd)
        // Room for many records per read; one record is at most 16 + NAME_MAX + 1 bytes.
        buffer = .allocate(byteCount: 64 * 1024, alignment: 8)
    }

    deinit {
        buffer.deallocate()
        descriptor.close()
    }

    /// Adds (or updates) a watch on a directory; returns the watch descriptor.
    public func addWatch(_ path: String, mask: InotifyEvent.Mask) throws(SystemError) -> CInt {
        let flags = mask.union([.onlyDirectory, .dontFollow])
        do {
            return try retrying("inotify_add_watch", path: path) {
                sys_inotify_add_watch(descriptor.rawValue, path, flags.rawValue)
            }
        } catch {
            throw Self.withLimitHint(error)
        }
    }

    /// Which kernel limit a failure of `inotify_init1` or `inotify_add_watch` ran into, as advice to raise it
    /// (inotify(7), /proc interfaces); nil when the failure is not about a limit.
    public static func limitHint(operation: String, errno: Errno) -> String? {
        switch (operation, errno) {
        case ("inotify_add_watch", .noSpace):
            return "the user's inotify watches are used up: raise the sysctl fs.inotify.max_user_watches"
        case ("inotify_init1", .tooManyOpenFiles):
            return "the user's inotify instances are used up: raise the sysctl fs.inotify.max_user_instances "
                + "(or the process has too many open files: raise its RLIMIT_NOFILE, LimitNOFILE=)"
        case ("inotify_init1", .tooManyOpenFilesInSystem):
            return "the system's open files are used up: raise the sysctl fs.file-max"
        default:
            return nil
        }
    }

    private static func withLimitHint(_ error: SystemError) -> SystemError {
        guard let hint = limitHint(operation: error.operation, errno: error.errno) else { return error }
        return SystemError(error.operation, path: error.path, errno: error.errno, hint: hint)
    }

    public func removeWatch(_ watch: CInt) {
        _ = sys_inotify_rm_watch(descriptor.rawValue, watch)
    }

    /// Reads what is queued now; an empty array means nothing yet (EAGAIN).
    public func read() throws(SystemError) -> [InotifyEvent] {
        let count: Int
        do {
            count = try descriptor.read(into: buffer)
        } catch .wouldBlock {
            return []
        } catch {
            throw SystemError("read", path: "inotify", errno: error)
        }
        return InotifyEvent.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }
}
