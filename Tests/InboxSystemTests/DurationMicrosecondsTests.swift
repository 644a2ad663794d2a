import Testing
@testable import InboxSystem

/// `Duration.microseconds`, which the event loop's timers and the status file's ages and due times are made of: whole
/// microseconds, saturating at zero for any negative duration (a retry whose timer has not fired yet is overdue).
struct DurationMicrosecondsTests {
    @Test(arguments: [
        (Duration.zero, UInt64(0)),
        (.microseconds(1), 1),
        (.nanoseconds(1_999), 1),
        (.milliseconds(200), 200_000),
        (.seconds(3) + .microseconds(7), 3_000_007),
        (.milliseconds(-50), 0),
        (.nanoseconds(-1), 0),
        (.seconds(-1), 0),
        (.seconds(-2) + .milliseconds(300), 0),
    ])
    func wholeMicrosecondsSaturatingAtZero(_ duration: Duration, _ expected: UInt64) {
        #expect(duration.microseconds == expected)
    }
}
