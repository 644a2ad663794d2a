import Glibc

/// An owned file descriptor, closed exactly once when its owner says so.
/// A plain value: whoever holds it must call `close()`; `Sendable` because an fd number is.
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// Closes the descriptor. Never retried: Linux frees the number even when close reports EINTR (close(2)).
    public func close() {
        _ = Glibc.close(rawValue)
    }

    /// Writes all of `bytes`, through short writes and EINTR; nil on success, else the error that stopped it.
    @discardableResult
    public func write(all bytes: UnsafeRawBufferPointer) -> Errno? {
        var written = 0
        while written < bytes.count {
            let n = Glibc.write(rawValue, bytes.baseAddress! + written, bytes.count - written)
            if n > 0 {
                written += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return n < 0 ? .current : .noSpace
            }
        }
        return nil
    }
}
