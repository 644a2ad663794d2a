/// What a file held over a restart says about its attempts (docs/design.md, Reliability): `user.inboxd.attempts`, the
/// attempts that ended in failure, and `user.inboxd.started`, the attempt last launched ("<n>", or "<n> stopped" when
/// the agent's own shutdown stopped it). An attempt started and not among the failed ones never ended as far as the
/// agent knows: a crash cut it short. It counts, and the next attempt is a redelivery. One the shutdown stopped does
/// not count, but the handler is told all the same. Anything malformed is read as absent.
public struct RecordedAttempts: Sendable, Hashable {
    /// Attempts made so far: the next one is `count + 1`.
    public var count: Int
    /// The last attempt was cut short: the next is `INBOX_REDELIVERED=1`.
    public var redelivered: Bool

    public init(count: Int, redelivered: Bool) {
        self.count = count
        self.redelivered = redelivered
    }

    /// From the two attributes' text, nil where one is absent.
    public init(failed: String?, started: String?) {
        let failed = failed.flatMap { Int($0) }.map { max(0, $0) } ?? 0
        self.init(count: failed, redelivered: false)
        guard let parts = started?.split(separator: " ", omittingEmptySubsequences: false),
              let attempt = Int(parts[0]), attempt > failed,
              parts.count == 1 || (parts.count == 2 && parts[1] == "stopped") else { return }
        redelivered = true
        if parts.count == 1 { count = attempt }
    }
}
