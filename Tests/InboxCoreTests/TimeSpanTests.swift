import Testing
@testable import InboxCore

@Suite("Time spans")
struct TimeSpanTests {
    @Test(arguments: [
        ("30", Duration.seconds(30)), ("30s", .seconds(30)), ("500ms", .milliseconds(500)), ("2min", .seconds(120)),
        ("1h 30min", .seconds(5400)), ("1min30s", .seconds(90)), ("  5 s ", .seconds(5)), ("1.5s", .milliseconds(1500)),
        ("0.5", .milliseconds(500)), ("2h", .seconds(7200)), ("1d", .seconds(86400)), ("1w", .seconds(604_800)),
        ("10us", .microseconds(10)), ("0", .zero), ("1 hour 1 minute 1 second", .seconds(3661)),
        ("100 msec", .milliseconds(100)),
        // Nine digits of fraction times a large unit: the product does not fit in 64 bits (found by fuzzing).
        ("4.888888888y", .microseconds(154_281_599_971_948)), ("0.999999999999M", .microseconds(2_629_799_997_370)),
    ] as [(String, Duration)])
    func parses(_ text: String, _ expected: Duration) throws {
        #expect(try TimeSpan.parse(text) == expected)
    }

    @Test func infinityIsNil() throws {
        #expect(try TimeSpan.parse("infinity") == nil)
    }

    @Test(arguments: [
        ("", "empty time span"),
        ("   ", "empty time span"),
        ("soon", "invalid time span 'soon'"),
        ("-5s", "invalid time span '-5s'"),
        ("5 parsecs", "unknown time unit 'parsecs' in '5 parsecs'"),
        ("s", "invalid time span 's'"),
        ("1.s", "invalid time span '1.s'"),
        ("99999999999999999999", "time span '99999999999999999999' is too large"),
        ("999999999999y", "time span '999999999999y' is too large"),
        ("Infinity", "invalid time span 'Infinity'"),
    ])
    func rejects(_ text: String, _ message: String) {
        #expect(throws: TimeSpanError(message: message)) { try TimeSpan.parse(text) }
    }
}
