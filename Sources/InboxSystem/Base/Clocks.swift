import Glibc

/// CLOCK_REALTIME: the wall clock, for times that people and other processes read (`status.json`).
public enum WallClock {
    /// Microseconds since the Unix epoch.
    public static var now: Int64 {
        let time = clockTime(CLOCK_REALTIME)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
    }

    /// A time on this clock (microseconds since the epoch, as `now`) as a UTC calendar date and time (gmtime_r(3)).
    public static func utcComponents(_ microseconds: Int64) -> CalendarTime {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        // gmtime_r fails only for a year past tm's CInt; an Int64 of microseconds spans about ±292,000 years.
        precondition(sys_gmtime_r(&seconds, &parts), "gmtime_r(\(seconds))")
        return CalendarTime(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// clock_gettime(2) cannot fail for a clock the kernel always has and a valid pointer.
    static func clockTime(_ clock: clockid_t) -> timespec {
        var time = timespec()
        _ = sys_clock_gettime(clock, &time)
        return time
    }
}

/// CLOCK_MONOTONIC: never set back, the clock sd-event's timers use.
public enum MonotonicClock {
    public static var now: Duration {
        let time = WallClock.clockTime(CLOCK_MONOTONIC)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}

/// A calendar date and time of day, as people read it: month 1-12, day 1-31, second 0-60 (a leap second).
public struct CalendarTime: Hashable, Sendable {
    public let year: Int
    public let month: Int
    public let day: Int
    public let hour: Int
    public let minute: Int
    public let second: Int

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }
}
