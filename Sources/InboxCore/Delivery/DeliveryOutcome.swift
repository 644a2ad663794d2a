/// How one launch of a handler ended, or how a resident handler answered (docs/handler-protocol.md): `done` is
/// `.exited(0)`, `retry` is `.exited(75)`, `failed` is `.failedAnswer`, so that one policy decides for both.
public indirect enum DeliveryOutcome: Sendable, Hashable {
    /// The handler exited with this status.
    case exited(Int32)
    /// The handler was killed by this signal.
    case signaled(Int32)
    /// The handler ran past its timeout and was killed.
    case timedOut
    /// The handler could not be started; the text says why.
    case spawnFailed(String)
    /// A resident handler answered `failed`, with its reason (empty when it gave none).
    case failedAnswer(String)
    /// A resident handler's instance ended (the text says how) before it answered.
    case unanswered(String)
    /// Nothing could be done this time, through no fault of the file or its handler (a print hot folder's destination
    /// is stopped, holds the job, or no CUPS server answers; the text says which): tried again after RetryDelaySec=
    /// without using one of its MaxAttempts=.
    case deferred(String)
    /// A print hot folder's job failed (the document cannot be printed there, or its job was canceled or aborted):
    /// the reason, with the job's IPP state and reasons.
    case printFailed(String)
    /// The process of a batch (%F, %U) ended so: which file is to blame is not known, and each goes again alone.
    case batchFailed(DeliveryOutcome)
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
