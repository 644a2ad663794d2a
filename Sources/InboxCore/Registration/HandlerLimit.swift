/// A `Limit*=` key of a registration: systemd's names and value syntax.
public struct HandlerLimit: Sendable, Hashable {
    /// The keys, as systemd spells them.
    public enum Key: String, Sendable, Hashable, CaseIterable {
        case openFiles = "LimitNOFILE"
        case addressSpace = "LimitAS"
        case processes = "LimitNPROC"
        case cpuSeconds = "LimitCPU"
        case fileSize = "LimitFSIZE"
        case coreSize = "LimitCORE"

        /// Whether values are byte sizes (K, M, G, T suffixes, base 1024).
        var takesBytes: Bool { self == .addressSpace || self == .fileSize || self == .coreSize }
    }

    public var key: Key
    /// nil is unlimited ("infinity").
    public var soft: UInt64?
    public var hard: UInt64?

    public init(key: Key, soft: UInt64?, hard: UInt64?) {
        self.key = key
        self.soft = soft
        self.hard = hard
    }

    /// Parses `VALUE` or `SOFT:HARD`, each a number, a size with K/M/G/T for byte limits, or "infinity".
    public static func parse(_ text: String, key: Key) -> HandlerLimit? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 1 || parts.count == 2 else { return nil }
        guard let soft = value(parts[0], key: key) else { return nil }
        guard let hard = parts.count == 2 ? value(parts[1], key: key) : soft else { return nil }
        if let s = soft, let h = hard, s > h { return nil }
        if soft == nil, hard != nil { return nil }
        return HandlerLimit(key: key, soft: soft, hard: hard)
    }

    /// nil: not a value; .some(nil): infinity.
    private static func value(_ text: String, key: Key) -> UInt64?? {
        if text == "infinity" { return .some(nil) }
        var digits = Substring(text)
        var multiplier: UInt64 = 1
        if key.takesBytes, let last = digits.last, let shift = ["K": 10, "M": 20, "G": 30, "T": 40][String(last).uppercased()] {
            multiplier = 1 << UInt64(shift)
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = UInt64(digits) else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : .some(product)
    }
}
