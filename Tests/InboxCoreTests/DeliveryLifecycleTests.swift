import Testing
@testable import InboxCore

@Suite("The delivery lifecycle state machine")
struct DeliveryLifecycleTests {
    typealias Lifecycle = DeliveryLifecycle
    typealias Action = DeliveryLifecycle.Action

    /// One event fed to the machine.
    enum Event: Sendable, CustomStringConvertible {
        case start, startFailed(String), refused(String), exited(DeliveryOutcome), violated(DeliveryOutcome, String)
        case tampered(String), interfered(DeliveryOutcome, change: String?)
        case timeout, grace, retryDue, handlerRemoved, fileGone, drain, stop(DeliveryLifecycle.StopSignal)

        var description: String {
            switch self {
            case .start: "start"
            case .startFailed: "startFailed"
            case .refused: "refused"
            case .exited(let outcome): "exited(\(outcome))"
            case .violated: "violated"
            case .tampered: "tampered"
            case .interfered(let outcome, let change): "interfered(\(outcome), \(change ?? "unchanged"))"
            case .timeout: "timeout"
            case .grace: "grace"
            case .retryDue: "retryDue"
            case .handlerRemoved: "handlerRemoved"
            case .fileGone: "fileGone"
            case .drain: "drain"
            case .stop(let signal): "stop(\(signal))"
            }
        }

        func apply(to lifecycle: inout Lifecycle) -> Action {
            switch self {
            case .start: lifecycle.start()
            case .startFailed(let reason): lifecycle.startFailed(reason)
            case .refused(let reason): lifecycle.refused(reason)
            case .exited(let outcome): lifecycle.exited(outcome, violation: nil)
            case .violated(let outcome, let change): lifecycle.exited(outcome, violation: change)
            case .tampered(let reason): lifecycle.tampered(reason)
            case .interfered(let outcome, let change): lifecycle.exited(outcome, violation: change, interference: "W")
            case .timeout: lifecycle.timeoutPassed()
            case .grace: lifecycle.graceExpired()
            case .retryDue: lifecycle.retryDue()
            case .handlerRemoved: lifecycle.handlerRemoved()
            case .fileGone: lifecycle.fileGone()
            case .drain: lifecycle.drain()
            case .stop(let signal): lifecycle.stopRequested(signal)
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var attempts = 0
        var maxAttempts = 3
        /// Each event and the action it must return.
        let steps: [(Event, Action)]
        let end: Lifecycle.State
        var testDescription: String { name }
    }

    static let delay = Duration.seconds(10)

    static let cases: [Case] = [
        Case(name: "handled at the first attempt",
             steps: [(.start, .launch(attempt: 1)), (.exited(.exited(0)), .complete(.exited(0)))],
             end: .ended(.handled)),
        Case(name: "a failure is retried, then handled",
             steps: [(.start, .launch(attempt: 1)), (.exited(.exited(1)), .retry(after: delay, .exited(1))),
                     (.retryDue, .enqueue), (.start, .launch(attempt: 2)), (.exited(.exited(0)), .complete(.exited(0)))],
             end: .ended(.handled)),
        Case(name: "exit 75 asks for a retry like any failure",
             steps: [(.start, .launch(attempt: 1)), (.exited(.exited(75)), .retry(after: delay, .exited(75)))],
             end: .retryWaiting),
        Case(name: "retries exhausted",
             steps: [(.start, .launch(attempt: 1)), (.exited(.exited(2)), .retry(after: delay, .exited(2))),
                     (.retryDue, .enqueue), (.start, .launch(attempt: 2)), (.exited(.signaled(9)), .retry(after: delay, .signaled(9))),
                     (.retryDue, .enqueue), (.start, .launch(attempt: 3)),
                     (.exited(.exited(2)), .fail(reason: "exit status 2 after 3 attempts", .exited(2)))],
             end: .ended(.failed)),
        Case(name: "attempts recorded on a file kept over a restart count", attempts: 2,
             steps: [(.start, .launch(attempt: 3)), (.exited(.exited(1)), .fail(reason: "exit status 1 after 3 attempts", .exited(1)))],
             end: .ended(.failed)),
        Case(name: "one attempt only", maxAttempts: 1,
             steps: [(.start, .launch(attempt: 1)), (.exited(.exited(1)), .fail(reason: "exit status 1 after 1 attempt", .exited(1)))],
             end: .ended(.failed)),
        Case(name: "a failed start is retried under the same policy",
             steps: [(.start, .launch(attempt: 1)),
                     (.startFailed("no such file"), .retry(after: delay, .spawnFailed("no such file")))],
             end: .retryWaiting),
        Case(name: "a refused start fails at once", maxAttempts: 5,
             steps: [(.start, .launch(attempt: 1)), (.refused("refused: Landlock=require"), .fail(reason: "refused: Landlock=require", nil))],
             end: .ended(.failed)),
        Case(name: "a timeout stops the handler, then kills it, and counts as a timeout", maxAttempts: 1,
             steps: [(.start, .launch(attempt: 1)), (.timeout, .signal(.terminate)), (.timeout, .none),
                     (.grace, .signal(.kill)), (.exited(.signaled(9)), .fail(reason: "timed out after 1 attempt", .timedOut))],
             end: .ended(.failed)),
        Case(name: "a handler that exits 0 after its timeout still timed out",
             steps: [(.start, .launch(attempt: 1)), (.timeout, .signal(.terminate)),
                     (.exited(.exited(0)), .retry(after: delay, .timedOut))],
             end: .retryWaiting),
        Case(name: "a changed copy is a violation, whatever the exit",
             steps: [(.start, .launch(attempt: 1)),
                     (.violated(.exited(0), "size 12 → 0"), .reportViolation(change: "size 12 → 0", .exited(0)))],
             end: .ended(.violated)),
        Case(name: "another writer before the start: withdrawn, never launched",
             steps: [(.tampered("W"), .withdraw(reason: "W", nil)), (.start, .none)],
             end: .ended(.withdrawn)),
        Case(name: "another writer while it ran that changed the copy: withdrawn, not a violation",
             steps: [(.start, .launch(attempt: 1)),
                     (.interfered(.exited(0), change: "size 12 → 0"),
                      .withdraw(reason: "W while its handler ran, and changed it: size 12 → 0", .exited(0)))],
             end: .ended(.withdrawn)),
        Case(name: "another writer waited for while it ran, copy intact: its success stands",
             steps: [(.start, .launch(attempt: 1)), (.interfered(.exited(0), change: nil), .complete(.exited(0)))],
             end: .ended(.handled)),
        Case(name: "another writer waited for while it ran, copy intact, a failure: withdrawn instead of retried",
             steps: [(.start, .launch(attempt: 1)),
                     (.interfered(.exited(1), change: nil), .withdraw(reason: "W while its handler ran; not tried again",
                                                                       .exited(1)))],
             end: .ended(.withdrawn)),
        Case(name: "a tamper report after the start does nothing",
             steps: [(.start, .launch(attempt: 1)), (.tampered("W"), .none)], end: .running(timedOut: false)),
        Case(name: "a reload removes the handler of a queued delivery: routed again",
             steps: [(.handlerRemoved, .reroute), (.start, .none)],
             end: .ended(.released)),
        Case(name: "a reload while it runs lets it finish",
             steps: [(.start, .launch(attempt: 1)), (.handlerRemoved, .none), (.exited(.exited(0)), .complete(.exited(0)))],
             end: .ended(.handled)),
        Case(name: "a reload during a retry wait is seen when the retry is due",
             steps: [(.start, .launch(attempt: 1)), (.exited(.exited(1)), .retry(after: delay, .exited(1))),
                     (.handlerRemoved, .none), (.retryDue, .enqueue), (.handlerRemoved, .reroute)],
             end: .ended(.released)),
        Case(name: "the file vanished before its start",
             steps: [(.fileGone, .none), (.start, .none)], end: .ended(.released)),
        Case(name: "drain: a queued file waits for the next start",
             steps: [(.drain, .none), (.start, .none)], end: .queued),
        Case(name: "drain: a retry wait is cancelled, the file kept",
             steps: [(.start, .launch(attempt: 1)), (.exited(.exited(1)), .retry(after: delay, .exited(1))),
                     (.drain, .cancelRetry), (.retryDue, .none)],
             end: .ended(.released)),
        Case(name: "drain: a running handler stopped by the shutdown is not its failure",
             steps: [(.start, .launch(attempt: 1)), (.drain, .none), (.stop(.terminate), .signal(.terminate)),
                     (.stop(.kill), .signal(.kill)), (.exited(.signaled(15)), .keepForNextStart)],
             end: .ended(.released)),
        Case(name: "drain: a handler that fails by itself meanwhile is recorded, with no retry timer",
             steps: [(.start, .launch(attempt: 1)), (.drain, .none), (.exited(.exited(1)), .retry(after: nil, .exited(1)))],
             end: .ended(.released)),
        Case(name: "drain: one that finishes is handled",
             steps: [(.start, .launch(attempt: 1)), (.drain, .none), (.exited(.exited(0)), .complete(.exited(0)))],
             end: .ended(.handled)),
        Case(name: "stop requests before a drain do nothing",
             steps: [(.start, .launch(attempt: 1)), (.stop(.terminate), .none)], end: .running(timedOut: false)),
        Case(name: "late events after the end do nothing",
             steps: [(.start, .launch(attempt: 1)), (.exited(.exited(0)), .complete(.exited(0))), (.exited(.exited(1)), .none),
                     (.timeout, .none), (.grace, .none), (.retryDue, .none), (.start, .none), (.refused("x"), .none)],
             end: .ended(.handled)),
        Case(name: "a deferred attempt (a print queue stopped) is retried without being counted", maxAttempts: 1,
             steps: [(.start, .launch(attempt: 1)), (.exited(.deferred("q is stopped")), .retry(after: delay, .deferred("q is stopped"))),
                     (.retryDue, .enqueue), (.start, .launch(attempt: 1)),
                     (.exited(.deferred("q is stopped")), .retry(after: delay, .deferred("q is stopped"))),
                     (.retryDue, .enqueue), (.start, .launch(attempt: 1)), (.exited(.exited(0)), .complete(.exited(0)))],
             end: .ended(.handled)),
        Case(name: "a print job that failed uses an attempt and fails with its reason", maxAttempts: 1,
             steps: [(.start, .launch(attempt: 1)),
                     (.exited(.printFailed("q-3 ended aborted")), .fail(reason: "could not print it (q-3 ended aborted) after 1 attempt",
                                                                        .printFailed("q-3 ended aborted")))],
             end: .ended(.failed)),
        Case(name: "drain: a deferred attempt waits for the next start, with no retry timer",
             steps: [(.start, .launch(attempt: 1)), (.drain, .none), (.exited(.deferred("no server")), .retry(after: nil, .deferred("no server")))],
             end: .ended(.released)),
        Case(name: "a deferred attempt stopped at its timeout is a timeout, and counted", maxAttempts: 1,
             steps: [(.start, .launch(attempt: 1)), (.timeout, .signal(.terminate)),
                     (.exited(.deferred("x")), .fail(reason: "timed out after 1 attempt", .timedOut))],
             end: .ended(.failed)),
        Case(name: "an exit before any start does nothing",
             steps: [(.exited(.exited(0)), .none), (.grace, .none)], end: .queued),
    ]

    @Test(arguments: cases)
    func transitions(_ test: Case) {
        var lifecycle = Lifecycle(policy: RetryPolicy(maxAttempts: test.maxAttempts, retryDelay: Self.delay),
                                  attempts: test.attempts)
        for (index, (event, expected)) in test.steps.enumerated() {
            let action = event.apply(to: &lifecycle)
            #expect(action == expected, "step \(index + 1): \(event)")
        }
        #expect(lifecycle.state == test.end)
    }

    @Test func negativeRecordedAttemptsCountAsNone() {
        var lifecycle = Lifecycle(policy: RetryPolicy(), attempts: -4)
        #expect(lifecycle.start() == .launch(attempt: 1))
    }
}
