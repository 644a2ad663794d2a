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
}
