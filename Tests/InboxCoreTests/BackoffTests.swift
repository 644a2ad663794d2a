import InboxCore
import Testing

struct BackoffTests {
    @Test(arguments: [
        (Backoff.transient, 1, Duration?.some(.seconds(1))),
        (Backoff.transient, 2, .seconds(2)),
        (Backoff.transient, 6, .seconds(32)),
        (Backoff.transient, 7, .seconds(60)),
        (Backoff.transient, 1000, .seconds(60)),
        (Backoff.writer, 0, .milliseconds(100)),
        (Backoff.writer, 1, .milliseconds(100)),
        (Backoff.writer, 5, .milliseconds(1600)),
        (Backoff.writer, 6, nil),
    ])
    func delayBeforeRetry(backoff: Backoff, retry: Int, expected: Duration?) {
        #expect(backoff.delay(before: retry) == expected)
    }
}
