/// When an entry of failed/ or unhandled/ expires (`KeepFailedSec=`, `KeepUnhandledSec=`).
///
/// An entry's age counts from when the agent put it there. The agent records that time on the files it can write
/// (`user.inboxd.kept`, microseconds since the epoch), and the kernel's change time (ctime) is the other witness: a
/// rename into the directory sets it, and nobody can set it back (utimensat(2) cannot), so the true placement is never
/// later than it. The age is taken from the earlier of the two: a recorded time that a copy of the state directory
/// carried (its ctime is the copy's) is kept, and one a sender wrote later than the ctime cannot make its entry live
/// longer. An entry the agent could not write on (a link or FIFO moved aside unopened) is aged by its ctime alone.
public enum RetentionPolicy {
    public enum Decision: Sendable, Hashable {
        /// Kept forever: no Keep*Sec= for its directory.
        case keepForever
        /// Kept until this wall-clock time (microseconds since the epoch).
        case keep(untilUSec: Int64)
        /// Past its time: remove it; `keptUSec` is how long it was kept.
        case expire(keptUSec: Int64)
    }

    /// The decision for one entry at `nowUSec`; `recordedUSec` from its attribute (nil: none, or unreadable),
    /// `changedUSec` its ctime.
    public static func decide(recordedUSec: Int64?, changedUSec: Int64, nowUSec: Int64, keep: Duration?) -> Decision {
        guard let keep else { return .keepForever }
        let placed = min(recordedUSec ?? changedUSec, changedUSec)
        let (deadline, overflow) = placed.addingReportingOverflow(keep.microsecondsClamped)
        if overflow { return .keep(untilUSec: .max) }
        return nowUSec >= deadline ? .expire(keptUSec: max(0, nowUSec - placed)) : .keep(untilUSec: deadline)
    }

    /// The text of `user.inboxd.kept`.
    public static func record(nowUSec: Int64) -> String { String(nowUSec) }

    /// A recorded time, if the text is one: decimal digits only, positive, no larger than an Int64.
    public static func recorded(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int64(text), value > 0 else { return nil }
        return value
    }
}

extension Duration {
    /// Whole microseconds, saturated at Int64's range.
    public var microsecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        return overflow2 ? (seconds < 0 ? .min : .max) : sum
    }
}
