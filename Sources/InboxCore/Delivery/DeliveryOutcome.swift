/// How one launch of a handler ended.
public enum DeliveryOutcome: Sendable, Hashable {
    /// The handler exited with this status.
    case exited(Int32)
    /// The handler was killed by this signal.
    case signaled(Int32)
    /// The handler ran past its timeout and was killed.
    case timedOut
    /// The handler could not be started; the text says why.
    case spawnFailed(String)
}

/// What to do with a file after a launch ended.
public enum DeliveryDecision: Sendable, Hashable {
    /// Handled: clean up.
    case complete
    /// Launch again after the delay.
    case retry(after: Duration)
    /// Give up: move the file to failed/ with this reason.
    case fail(reason: String)
}
