/// The life of one delivery as a state machine: each event the system layer observes (a free slot, an exit, a timer)
/// is a transition that returns the action it must carry out. The machine does no work itself, so every path —
/// retries, exhaustion, timeouts, a reload while it runs, a drain — is tested without a process.
///
///     queued ──start──▶ running ──exited──▶ handled | failed | violated | withdrawn
///       ▲ │                │ └──exited (retry)──▶ retryWaiting ──retryDue──▶ queued
///       │ │                └──exited while draining──▶ released (runs again at the next start)
///       │ └── tampered (queued) ──▶ withdrawn (another process wrote it before its handler started)
///       ├── handlerRemoved (queued) ──▶ released (routed again)
///       ├── exited (batch failed) ◀── running: queued again to run alone, the attempt not counted
///       └── exited (deferred) ── running ──▶ retryWaiting, the attempt not counted
public struct DeliveryLifecycle: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// Waiting for a free slot (global and per-handler limits).
        case queued
        /// Its handler runs; `timedOut` once TimeoutSec= passed and it was told to stop.
        case running(timedOut: Bool)
        /// A failed attempt, waiting for its retry timer.
        case retryWaiting
        /// Over: the file is no longer this delivery's.
        case ended(End)
    }

    public enum End: Sendable, Hashable {
        /// Handled: the Inbox copy was removed.
        case handled
        /// Given up on: the file is in failed/.
        case failed
        /// Its handler changed the copy it may only read and delete: kept in failed/ as evidence.
        case violated
        /// Another process than its handler (its sender, or root) opened the copy for writing: kept in failed/, and
        /// never blamed on the handler.
        case withdrawn
        /// Left where it lies for someone else: routed again, gone, or kept for the next start.
        case released
    }

    /// How a running handler is told to stop.
    public enum StopSignal: Sendable, Hashable {
        /// SIGTERM (or its equivalent): finish up.
        case terminate
        /// SIGKILL: now.
        case kill
    }

    public enum Action: Sendable, Hashable {
        /// Start the handler; `attempt` is 1-based.
        case launch(attempt: Int)
        /// Handled: remove the Inbox copy and its sidecar; one `finished` entry.
        case complete(DeliveryOutcome)
        /// A failed attempt: record it on the file, one `retry` entry, and queue it again after `delay`; no timer when
        /// `delay` is nil (the agent is stopping, and the file waits for the next start).
        case retry(after: Duration?, DeliveryOutcome)
        /// Give up: move the file to failed/ with the reason; `outcome` is nil when the handler never ran.
        case fail(reason: String, DeliveryOutcome?)
        /// The copy changed while its handler ran: move it to failed/ as evidence; one `violation` entry.
        case reportViolation(change: String, DeliveryOutcome)
        /// Another process than its handler opened the copy for writing: move it to failed/ with the reason; one
        /// `rejected` entry that names its sender. `outcome` is nil when the handler never ran.
        case withdraw(reason: String, DeliveryOutcome?)
        /// Stopped by the agent's own shutdown, not the handler's failure: nothing is recorded, the file stays.
        case keepForNextStart
        /// Its handler is gone: route the file again from its container.
        case reroute
        /// Signal the running handler.
        case signal(StopSignal)
        /// Queue it again (its retry is due).
        case enqueue
        /// The batch it ran in failed: queue it again at once, to run alone; `outcome` is the batch's, for the journal.
        case requeueAlone(DeliveryOutcome)
        /// Cancel the retry timer: the agent is stopping and the file waits for the next start.
        case cancelRetry
        /// Nothing applies in this state (a late timer, a second exit report).
        case none
    }

    public private(set) var state: State = .queued
    /// Attempts started so far, including the one running.
    public private(set) var attempts: Int
    /// Set by `drain()`: no new attempts, no retry timers.
    public private(set) var draining = false
    public let policy: RetryPolicy

    /// A new lifecycle for a queued delivery; `attempts` are those already made (recorded on a file kept over a restart).
    public init(policy: RetryPolicy, attempts: Int = 0) {
        self.policy = policy
        self.attempts = max(0, attempts)
    }

    /// The attempt `start()` launches next.
    public var nextAttempt: Int { attempts + 1 }
    public var isRunning: Bool { if case .running = state { true } else { false } }
    public var hasEnded: Bool { if case .ended = state { true } else { false } }

    /// A slot is free: start the next attempt.
    public mutating func start() -> Action {
        guard state == .queued, !draining else { return .none }
        attempts += 1
        state = .running(timedOut: false)
        return .launch(attempt: attempts)
    }

    /// The handler could not be started; a failure like any other, retried under the same policy.
    public mutating func startFailed(_ reason: String) -> Action {
        exited(.spawnFailed(reason), violation: nil)
    }

    /// The handler may not run at all (e.g. it requires Landlock, which is missing): no retry can help.
    public mutating func refused(_ reason: String) -> Action {
        guard isRunning || state == .queued else { return .none }
        state = .ended(.failed)
        return .fail(reason: reason, nil)
    }

    /// Before its handler started, another process opened the Inbox copy for writing or changed it (`reason`).
    public mutating func tampered(_ reason: String) -> Action {
        guard state == .queued else { return .none }
        state = .ended(.withdrawn)
        return .withdraw(reason: reason, nil)
    }

    /// The handler ended. `violation` says how the Inbox copy changed meanwhile, if it did; `interference`, that
    /// another process than the handler opened it for writing meanwhile (a broken read lease: the handler, which may
    /// only read and delete it, cannot). A change is then that process's, never the handler's; an unchanged copy
    /// still completes (the handler read what was checked), but is not tried again, since the writer may change it
    /// before the next attempt.
    public mutating func exited(_ outcome: DeliveryOutcome, violation: String?, interference: String? = nil) -> Action {
        guard case .running(let timedOut) = state else { return .none }
        // A failed batch (a timed-out one too) says nothing about this file: it goes again on its own (a batch of
        // one), and the attempt it shared is not counted, so that one bad file cannot use up the others' attempts.
        if case .batchFailed = outcome, violation == nil, interference == nil, !draining {
            attempts -= 1
            state = .queued
            return .requeueAlone(timedOut ? .batchFailed(.timedOut) : outcome)
        }
        // A handler stopped at its timeout dies of the signal it was sent; its outcome is the timeout.
        let outcome = timedOut ? .timedOut : outcome
        if let interference {
            if let violation {
                state = .ended(.withdrawn)
                return .withdraw(reason: "\(interference) while its handler ran, and changed it: \(violation)", outcome)
            }
            if case .complete = policy.decide(outcome, attempt: max(attempts, 1)) {
                state = .ended(.handled)
                return .complete(outcome)
            }
            state = .ended(.withdrawn)
            return .withdraw(reason: "\(interference) while its handler ran; not tried again", outcome)
        }
        if let violation {
            state = .ended(.violated)
            return .reportViolation(change: violation, outcome)
        }
        // The destination could not take it now: tried again later, the attempt not counted.
        if case .deferred = outcome {
            attempts -= 1
            if draining {
                state = .ended(.released)
                return .retry(after: nil, outcome)
            }
            state = .retryWaiting
            return .retry(after: policy.retryDelay, outcome)
        }
        if draining, case .signaled = outcome {
            state = .ended(.released)
            return .keepForNextStart
        }
        switch policy.decide(outcome, attempt: max(attempts, 1)) {
        case .complete:
            state = .ended(.handled)
            return .complete(outcome)
        case .retry(let delay):
            if draining {
                state = .ended(.released)
                return .retry(after: nil, outcome)
            }
            state = .retryWaiting
            return .retry(after: delay, outcome)
        case .fail(let reason):
            state = .ended(.failed)
            return .fail(reason: reason, outcome)
        }
    }

    /// TimeoutSec= passed while it runs: tell it to stop; its exit then counts as a timeout.
    public mutating func timeoutPassed() -> Action {
        guard case .running(false) = state else { return .none }
        state = .running(timedOut: true)
        return .signal(.terminate)
    }

    /// The grace after a stop request passed and it still runs.
    public mutating func graceExpired() -> Action {
        isRunning ? .signal(.kill) : .none
    }

    /// Its retry timer fired.
    public mutating func retryDue() -> Action {
        guard state == .retryWaiting, !draining else { return .none }
        state = .queued
        return .enqueue
    }

    /// A reload removed its handler. A queued file is routed again now; a running one finishes, and a waiting one is
    /// looked at again when its retry is due.
    public mutating func handlerRemoved() -> Action {
        guard state == .queued else { return .none }
        state = .ended(.released)
        return .reroute
    }

    /// The file vanished from the container before its handler started.
    public mutating func fileGone() -> Action {
        guard state == .queued else { return .none }
        state = .ended(.released)
        return .none
    }

    /// The agent stops taking work. Queued files stay in their containers for the next start; a waiting retry's timer
    /// is cancelled (the attempt is already recorded on the file); a running handler is waited for.
    public mutating func drain() -> Action {
        draining = true
        guard state == .retryWaiting else { return .none }
        state = .ended(.released)
        return .cancelRetry
    }

    /// The stop timeout passed while it still runs: `.terminate` first, `.kill` after the grace.
    public mutating func stopRequested(_ signal: StopSignal) -> Action {
        guard isRunning, draining else { return .none }
        return .signal(signal)
    }
}
