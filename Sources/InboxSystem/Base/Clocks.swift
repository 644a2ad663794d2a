import Glibc

/// CLOCK_REALTIME: the wall clock, for times that people and other processes read (`status.json`).
public enum WallClock {
    /// Microseconds since the Unix epoch.
    public static var now: Int64 {
        let time = clockTime(CLOCK_REALTIME)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
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
