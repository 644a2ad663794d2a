import Testing
@testable import InboxCore

@Suite("Retry policy")
struct RetryPolicyTests {
    static let policy = RetryPolicy(maxAttempts: 3, retryDelay: .seconds(10))

    @Test(arguments: [
        (DeliveryOutcome.exited(0), 1, DeliveryDecision.complete),
        (.exited(0), 3, .complete),
        (.exited(75), 1, .retry(after: .seconds(10))),
        (.exited(1), 2, .retry(after: .seconds(10))),
        (.exited(1), 3, .fail(reason: "exit status 1 after 3 attempts")),
        (.exited(75), 3, .fail(reason: "exit status 75 after 3 attempts")),
        (.signaled(9), 1, .retry(after: .seconds(10))),
        (.signaled(9), 3, .fail(reason: "killed by signal 9 after 3 attempts")),
        (.timedOut, 2, .retry(after: .seconds(10))),
        (.timedOut, 3, .fail(reason: "timed out after 3 attempts")),
        (.spawnFailed("No such file or directory"), 1, .retry(after: .seconds(10))),
        (.spawnFailed("No such file or directory"), 3,
         .fail(reason: "could not start (No such file or directory) after 3 attempts")),
        (.exited(1), 7, .fail(reason: "exit status 1 after 7 attempts")),
    ])
    func decide(_ outcome: DeliveryOutcome, _ attempt: Int, _ expected: DeliveryDecision) {
        #expect(Self.policy.decide(outcome, attempt: attempt) == expected)
    }

    @Test(arguments: [0, 1, -3])
    func atLeastOneAttempt(_ maxAttempts: Int) {
        let policy = RetryPolicy(maxAttempts: maxAttempts, retryDelay: .seconds(1))
        #expect(policy.decide(.exited(2), attempt: 1) == .fail(reason: "exit status 2 after 1 attempt"))
    }

    @Test func defaults() {
        #expect(RetryPolicy() == RetryPolicy(maxAttempts: 3, retryDelay: .seconds(10)))
    }
}
