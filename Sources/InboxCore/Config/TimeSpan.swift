/// Why a time span could not be parsed.
public struct TimeSpanError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A short phrase naming the bad text.
    public let message: String
    /// The message.
    public var description: String { message }
}

/// systemd time spans (systemd.time(7)): "30" (seconds), "30s", "500ms", "1min 30s", "1.5h", "infinity".
public enum TimeSpan {
    /// Parses a time span; nil means "infinity". Precision is one microsecond, as in systemd.
    public static func parse(_ text: String) throws(TimeSpanError) -> Duration? {
        let trimmed = text.trimmingINIWhitespace()
        if trimmed == "infinity" { return nil }
        guard !trimmed.isEmpty else { throw TimeSpanError(message: "empty time span") }
        let scalars = Array(trimmed.unicodeScalars)
        var index = 0
        var total: UInt64 = 0
        let failure = TimeSpanError(message: "invalid time span '\(trimmed.abbreviated)'")

        while index < scalars.count {
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
            if index == scalars.count { break }
            var whole: UInt64 = 0
            var digits = 0
            while index < scalars.count, let digit = scalars[index].decimalDigit {
                let (times, overflow1) = whole.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(digit)
                guard !overflow1, !overflow2 else { throw TimeSpanError(message: "time span '\(trimmed.abbreviated)' is too large") }
                whole = sum
                digits += 1
                index += 1
            }
            // Fractions are kept to nine places: enough for any unit down to nanoseconds before rounding to µs.
            var fraction: UInt64 = 0
            var fractionScale: UInt64 = 1
            if index < scalars.count, scalars[index] == "." {
                index += 1
                // As systemd: "3.sec" and "3. 1" are errors, a fraction needs a digit.
                guard index < scalars.count, scalars[index].decimalDigit != nil else { throw failure }
                while index < scalars.count, let digit = scalars[index].decimalDigit {
                    if fractionScale < 1_000_000_000 {
                        fraction = fraction * 10 + digit
                        fractionScale *= 10
                    }
                    digits += 1
                    index += 1
                }
            }
            guard digits > 0 else { throw failure }
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
            var unit = ""
            while index < scalars.count, scalars[index].properties.isAlphabetic {
                unit.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard let microseconds = unitMicroseconds[unit.isEmpty ? "s" : unit] else {
                throw TimeSpanError(message: "unknown time unit '\(unit)' in '\(trimmed.abbreviated)'")
            }
            let (wholePart, overflow1) = whole.multipliedReportingOverflow(by: microseconds)
            // fraction < fractionScale, so the quotient is below `microseconds`; the product is taken at double width
            // (nine digits of fraction times a year in µs does not fit in 64 bits).
            let fractionPart = fractionScale.dividingFullWidth(microseconds.multipliedFullWidth(by: fraction)).quotient
            let (withFraction, overflow2) = wholePart.addingReportingOverflow(fractionPart)
            let (newTotal, overflow3) = total.addingReportingOverflow(withFraction)
            guard !overflow1, !overflow2, !overflow3, newTotal <= UInt64(Int64.max) else {
                throw TimeSpanError(message: "time span '\(trimmed.abbreviated)' is too large")
            }
            total = newTotal
        }
        return .microseconds(Int64(total))
    }

    private static let unitMicroseconds: [String: UInt64] = {
        let second: UInt64 = 1_000_000
        var table: [String: UInt64] = [:]
        let rows: [([String], UInt64)] = [
            (["usec", "us", "µs", "μs"], 1),
            (["msec", "ms"], 1000),
            (["seconds", "second", "sec", "s"], second),
            (["minutes", "minute", "min", "m"], 60 * second),
            (["hours", "hour", "hr", "h"], 3600 * second),
            (["days", "day", "d"], 86400 * second),
            (["weeks", "week", "w"], 7 * 86400 * second),
            // systemd's month and year are averages: 30.44 and 365.25 days.
            (["months", "month", "M"], 2_629_800 * second),
            (["years", "year", "y"], 31_557_600 * second),
        ]
        for (names, value) in rows {
            for name in names { table[name] = value }
        }
        return table
    }()
}

extension Unicode.Scalar {
    /// The value of an ASCII decimal digit, nil for anything else.
    fileprivate var decimalDigit: UInt64? {
        value >= 0x30 && value <= 0x39 ? UInt64(value - 0x30) : nil
    }
}

extension TimeSpan {
    /// A duration as systemd writes one (format_timespan): "2s", "1h 30min", "1d 2h", "250ms"; "0" for none.
    public static func format(_ duration: Duration) -> String {
        var rest = duration.microsecondsClamped
        guard rest > 0 else { return "0" }
        let units: [(String, Int64)] = [
            ("d", 86_400_000_000), ("h", 3_600_000_000), ("min", 60_000_000), ("s", 1_000_000), ("ms", 1000), ("us", 1),
        ]
        var parts: [String] = []
        for (name, size) in units where rest >= size {
            parts.append("\(rest / size)\(name)")
            rest %= size
        }
        return parts.joined(separator: " ")
    }
}
