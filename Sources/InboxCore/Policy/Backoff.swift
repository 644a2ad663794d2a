/// Waits that double between tries, up to a limit: how long to wait before try `n` of something that failed for a
/// reason that passes (a full disk, a writer that still has the file open).
public struct Backoff: Sendable, Hashable {
    /// The wait before the first retry.
    public var first: Duration
    /// No wait is longer.
    public var limit: Duration
    /// Retries before giving up; nil: never give up.
    public var maxRetries: Int?

    public init(first: Duration, limit: Duration, maxRetries: Int? = nil) {
        self.first = first
        self.limit = limit
        self.maxRetries = maxRetries
    }

    /// A move that failed for want of space, descriptors or a working disk: 1 s doubling to a minute, for ever (the
    /// file waits in its Inbox, where it is safe).
    public static let transient = Backoff(first: .seconds(1), limit: .seconds(60))
    /// A file its sender still has open for writing: 0.1 s doubling, 5 retries (about 3 s in all).
    public static let writer = Backoff(first: .milliseconds(100), limit: .seconds(2), maxRetries: 5)

    /// The wait before retry `retry` (1-based); nil when there are no retries left.
    public func delay(before retry: Int) -> Duration? {
        if let maxRetries, retry > maxRetries { return nil }
        var wait = first
        for _ in 1..<max(retry, 1) {
            wait = wait * 2
            if wait >= limit { return limit }
        }
        return min(wait, limit)
    }
}
