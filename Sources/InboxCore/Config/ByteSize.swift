/// Why a size could not be parsed.
public struct ByteSizeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A short phrase naming the bad text.
    public let message: String
    /// The message.
    public var description: String { message }
}

/// Sizes as systemd writes them (systemd.resource-control(5), `MemoryMax=`): "4096", "512K", "1.5G", with the
/// suffixes K, M, G, T, P and E taken to the base 1024; "infinity" means no size at all.
public enum ByteSize {
    /// Parses a size in bytes; nil means "infinity".
    public static func parse(_ text: String) throws(ByteSizeError) -> Int64? {
        let trimmed = text.trimmingINIWhitespace()
        if trimmed == "infinity" { return nil }
        let failure = ByteSizeError(message: "invalid size '\(trimmed.abbreviated)': expected bytes, or a number "
                                    + "with K, M, G, T, P or E (base 1024), or infinity")
        var digits = Substring(trimmed)
        var multiplier: UInt64 = 1
        if let last = digits.last, let power = suffixes.firstIndex(of: last) {
            multiplier = UInt64(1) << (10 * UInt64(power + 1))
            digits = digits.dropLast()
        }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !digits.isEmpty, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
              parts[0].utf8.count <= 19, let whole = UInt64(parts[0]) else { throw failure }
        let tooLarge = ByteSizeError(message: "size '\(trimmed.abbreviated)' is too large")
        let (wholeBytes, overflow) = whole.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw tooLarge }
        var total = wholeBytes
        if parts.count == 2 {
            // A fraction of a byte is rounded down, as systemd does; nine places are more than any suffix needs.
            let fraction = parts[1].prefix(9)
            let scale = (0..<fraction.count).reduce(UInt64(1)) { value, _ in value * 10 }
            guard let value = UInt64(fraction) else { throw failure }
            let (sum, overflow) = total.addingReportingOverflow(scale.dividingFullWidth(multiplier.multipliedFullWidth(by: value)).quotient)
            guard !overflow else { throw tooLarge }
            total = sum
        }
        guard total <= UInt64(Int64.max) else { throw tooLarge }
        return Int64(total)
    }

    /// A size as a person would write it: "10M" when it is a whole number of a suffix's unit, else bytes.
    public static func format(_ bytes: Int64) -> String {
        guard bytes > 0 else { return String(bytes) }
        for power in stride(from: suffixes.count, through: 1, by: -1) {
            let unit = Int64(1) << (10 * Int64(power))
            if bytes % unit == 0 { return "\(bytes / unit)\(suffixes[power - 1])" }
        }
        return String(bytes)
    }

    private static let suffixes: [Character] = ["K", "M", "G", "T", "P", "E"]
}
