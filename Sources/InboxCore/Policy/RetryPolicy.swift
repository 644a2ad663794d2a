/// Decides between done, retry and give up after each launch.
public struct RetryPolicy: Sendable, Hashable {
    /// EX_TEMPFAIL from sysexits.h: the handler asks to be retried later.
    public static let temporaryFailureStatus: Int32 = 75

    /// Launches per file, including the first; values below 1 count as 1.
    public var maxAttempts: Int
    /// The wait before the next launch.
    public var retryDelay: Duration

    /// Creates a policy: 3 attempts, 10 seconds apart, by default.
    public init(maxAttempts: Int = 3, retryDelay: Duration = .seconds(10)) {
        self.maxAttempts = maxAttempts
        self.retryDelay = retryDelay
    }

    /// attempt is 1-based (the attempt that just ended). Exit 0 completes; `.deferred` is always retried. Any other exit (75 included), a signal,
    /// a timeout or a failed spawn is retried while attempt < maxAttempts, then fails. A failed spawn is retried
    /// like any failure, because the binary may appear (a package being installed) before the next attempt.
    public func decide(_ outcome: DeliveryOutcome, attempt: Int) -> DeliveryDecision {
        if outcome == .exited(0) { return .complete }
        // Not the file's failure nor its handler's: it waits as long as it must (the lifecycle does not count it).
        if case .deferred = outcome { return .retry(after: retryDelay) }
        if attempt < max(maxAttempts, 1) { return .retry(after: retryDelay) }
        let attempts = attempt == 1 ? "1 attempt" : "\(attempt) attempts"
        switch outcome {
        case .exited(let status): return .fail(reason: "exit status \(status) after \(attempts)")
        case .signaled(let signal): return .fail(reason: "killed by signal \(signal) after \(attempts)")
        case .timedOut: return .fail(reason: "timed out after \(attempts)")
        case .spawnFailed(let why): return .fail(reason: "could not start (\(why)) after \(attempts)")
        case .failedAnswer(let why): return .fail(reason: "answered failed\(why.isEmpty ? "" : " (\(why))") after \(attempts)")
        case .unanswered(let why): return .fail(reason: "no answer (\(why)) after \(attempts)")
        case .batchFailed(let outcome): return decide(outcome, attempt: attempt)
        case .deferred: return .retry(after: retryDelay)
        case .printFailed(let why): return .fail(reason: "could not print it (\(why)) after \(attempts)")
        }
    }
}
