import Glibc

/// A non-blocking, close-on-exec inotify instance (inotify(7)).
public final class Inotify {
    public let descriptor: FileDescriptor
    private var buffer: UnsafeMutableRawBufferPointer

    public init() throws(SystemError) {
        let fd = try retrying("inotify_init1") { sys_inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC)) }
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
        return try retrying("inotify_add_watch", path: path) {
            sys_inotify_add_watch(descriptor.rawValue, path, flags.rawValue)
        }
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
