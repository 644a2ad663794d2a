import Testing
import InboxCore

@Suite("Attempts recorded on a file held over a restart")
struct RecordedAttemptsTests {
    @Test(arguments: [
        // failed, started → count, redelivered
        (nil, nil, 0, false),
        ("2", nil, 2, false),
        // Failed and recorded as such: the agent saw it end.
        ("1", "1", 1, false),
        ("2", "2", 2, false),
        // Running when the last run crashed: it counts, and the next attempt is a redelivery.
        (nil, "1", 1, true),
        ("1", "2", 2, true),
        // Stopped by the agent's shutdown: the handler is told, the attempt does not count.
        (nil, "1 stopped", 0, true),
        ("2", "3 stopped", 2, true),
        ("3", "3 stopped", 3, false),
        // Malformed text is absent.
        ("x", "y", 0, false),
        ("-4", nil, 0, false),
        (nil, "0", 0, false),
        (nil, "1 later", 0, false),
        (nil, "1  stopped", 0, false),
        (nil, "", 0, false),
    ] as [(String?, String?, Int, Bool)])
    func decide(_ failed: String?, _ started: String?, _ count: Int, _ redelivered: Bool) {
        #expect(RecordedAttempts(failed: failed, started: started) == RecordedAttempts(count: count, redelivered: redelivered))
    }
}
