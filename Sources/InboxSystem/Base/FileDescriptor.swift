import Glibc

/// An owned file descriptor, closed exactly once when its owner says so.
/// A plain value: whoever holds it must call `close()`; `Sendable` because an fd number is.
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// fd 0, 1 and 2; never closed by us.
    public static let standardInput = FileDescriptor(rawValue: 0)
    public static let standardOutput = FileDescriptor(rawValue: 1)
    public static let standardError = FileDescriptor(rawValue: 2)

    /// Closes the descriptor. Never retried: Linux frees the number even when close reports EINTR (close(2)).
    public func close() {
        _ = sys_close(rawValue)
    }

    /// One read(2) at the file offset; 0 is end-of-file (non-blocking, EAGAIN is thrown). EINTR is retried while
    /// `retryingInterrupted` says so, else thrown: a command stopping on SIGINT passes `{ caught == 0 }`.
    public func read(into buffer: UnsafeMutableRawBufferPointer,
                     retryingInterrupted: () -> Bool = { true }) throws(Errno) -> Int {
        try retryingErrno(retryingInterrupted: retryingInterrupted) { sys_read(rawValue, buffer) }.get()
    }

    /// Fills `buffer` from `offset` with pread(2), through short reads and EINTR, stopping at end-of-file; returns
    /// how many bytes it holds, fewer than its size only at end-of-file. The file offset is untouched.
    public func read(fully buffer: UnsafeMutableRawBufferPointer, at offset: Int64 = 0) throws(Errno) -> Int {
        var count = 0
        while count < buffer.count {
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[count...])
            let n = try retryingErrno { sys_pread(rawValue, rest, off_t(offset) + off_t(count)) }.get()
            if n == 0 { break }
            count += n
        }
        return count
    }

    /// Writes all of `bytes` at the file offset, through short writes and EINTR; nil on success, else the error
    /// that stopped it (ENOSPC for a write that wrote nothing).
    /// EINTR is retried while `retryingInterrupted` says so, else returned, as for `read(into:)`.
    @discardableResult
    public func write(all bytes: UnsafeRawBufferPointer, retryingInterrupted: () -> Bool = { true }) -> Errno? {
        writeAll(bytes, retryingInterrupted) { rest, _ in sys_write(rawValue, rest) }
    }

    /// The same for an array of bytes.
    @discardableResult
    public func write(all bytes: [UInt8]) -> Errno? {
        bytes.withUnsafeBytes { write(all: $0) }
    }

    /// The same for text, as UTF-8: `FileDescriptor.standardError.write(all: "inboxctl: ...\n")`.
    @discardableResult
    public func write(all text: String) -> Errno? {
        var text = text
        return text.withUTF8 { write(all: UnsafeRawBufferPointer($0)) }
    }

    /// Writes all of `bytes` at `offset` with pwrite(2), leaving the file offset where it was.
    @discardableResult
    public func write(all bytes: UnsafeRawBufferPointer, at offset: Int64) -> Errno? {
        writeAll(bytes, { true }) { rest, done in sys_pwrite(rawValue, rest, off_t(offset) + off_t(done)) }
    }

    /// The loop behind the writes: `call` writes some of the `rest`, `done` bytes in.
    private func writeAll(_ bytes: UnsafeRawBufferPointer, _ retryingInterrupted: () -> Bool,
                          _ call: (_ rest: UnsafeRawBufferPointer, _ done: Int) -> Int) -> Errno? {
        var done = 0
        while done < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
            switch retryingErrno(retryingInterrupted: retryingInterrupted, { call(rest, done) }) {
            case .success(let n) where n > 0: done += n
            case .success: return .noSpace
            case .failure(let error): return error
            }
        }
        return nil
    }

    /// fsync(2): the file's data and metadata reach the disk.
    public func fsync() throws(Errno) {
        _ = try retryingErrno { sys_fsync(rawValue) }.get()
    }

    /// fchown(2); `gid_t.max` ((gid_t)-1) keeps the group, `uid_t.max` the owner.
    public func chown(uid: uid_t, gid: gid_t) throws(Errno) {
        _ = try retryingErrno { sys_fchown(rawValue, uid, gid) }.get()
    }

    /// fchmod(2): exactly `mode`, whatever the umask.
    public func chmod(_ mode: mode_t) throws(Errno) {
        _ = try retryingErrno { sys_fchmod(rawValue, mode) }.get()
    }

    /// fstat(2).
    public func status() throws(Errno) -> stat {
        var st = stat()
        _ = try retryingErrno { sys_fstat(rawValue, &st) }.get()
        return st
    }

    /// Sets FD_CLOEXEC, for a descriptor a library handed us without it.
    public func setCloseOnExec() throws(Errno) {
        _ = try retryingErrno { sys_fcntl(rawValue, F_SETFD, FD_CLOEXEC) }.get()
    }

    /// Sets O_NONBLOCK with one fcntl(2) F_SETFL, clearing the other flags F_SETFL sets (O_APPEND, O_ASYNC,
    /// O_DIRECT, O_NOATIME): for a pipe or socket made without them.
    public func setNonBlocking() throws(Errno) {
        _ = try retryingErrno { sys_fcntl(rawValue, F_SETFL, O_NONBLOCK) }.get()
    }

    /// A second descriptor for the same open file (fcntl(2) F_DUPFD_CLOEXEC), closed separately.
    public func duplicate() throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingErrno { sys_fcntl(rawValue, F_DUPFD_CLOEXEC, 0) }.get())
    }

    /// lseek(2) to `offset` from the start: where the next read or write of this open file begins.
    public func seek(to offset: Int64) throws(Errno) {
        _ = try retryingErrno { sys_lseek(rawValue, offset, SEEK_SET) }.get()
    }

    /// One write(2), retried on EINTR: how many bytes it took, at least one (EAGAIN is thrown).
    public func write(some bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryingErrno { sys_write(rawValue, bytes) }.get()
    }

    /// poll(2) on this descriptor alone: the events that are ready (`revents`), 0 when `timeout` passed first.
    /// nil waits for ever. An EINTR starts the wait again with the whole timeout.
    public func poll(_ events: CShort, timeout: Duration?) throws(Errno) -> CShort {
        var poller = pollfd(fd: rawValue, events: events, revents: 0)
        let milliseconds: CInt = timeout.map { bound in
            let (seconds, attoseconds) = bound.components
            return CInt(clamping: max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        } ?? -1
        let ready = try retryingErrno { sys_poll(&poller, milliseconds) }.get()
        return ready > 0 ? poller.revents : 0
    }
}
