/// A document in the Prometheus text exposition format, version 0.0.4 (what a Prometheus server scrapes and
/// node_exporter's textfile collector reads): per family, one `# HELP` and one `# TYPE` line, then all its samples,
/// `name{label="value",...} value`, one per line. A family is written whole by one call, so its lines are never split
/// and never declared twice.
public struct PrometheusText: Sendable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    public typealias Labels = [(name: String, value: String)]

    /// One sample of a counter or gauge: its labels and its value as the format spells it (`number`, `seconds`).
    public struct Sample: Sendable {
        public var labels: Labels
        public var value: String

        public init(_ labels: Labels, _ value: String) {
            self.labels = labels
            self.value = value
        }
    }

    /// The document so far; ends with a newline once a family is written.
    public private(set) var text = ""
    private var families: Set<String> = []

    public init() {}

    /// Writes a counter or gauge family with its samples.
    public mutating func family(_ name: String, _ kind: Kind, help: String, _ samples: [Sample]) {
        precondition(kind != .histogram, "histograms are written by histogram(_:help:_:)")
        declare(name, kind, help: help)
        for sample in samples { line(name, sample.labels, sample.value) }
    }

    /// Writes a family of one unlabelled sample.
    public mutating func family(_ name: String, _ kind: Kind, help: String, value: String) {
        family(name, kind, help: help, [Sample([], value)])
    }

    /// Writes a histogram family: for each series, its cumulative buckets (`le` in seconds, the last `+Inf`), its sum
    /// in seconds and its count.
    public mutating func histogram(_ name: String, help: String,
                                   _ series: [(labels: Labels, histogram: DeliveryMetrics.Histogram)]) {
        declare(name, .histogram, help: help)
        for (labels, histogram) in series {
            precondition(!labels.contains { $0.name == "le" }, "le is the bucket's label")
            let bounds = histogram.boundsUSec.map(Self.seconds) + ["+Inf"]
            for (bound, count) in zip(bounds, histogram.cumulativeCounts) {
                line(name + "_bucket", labels + [("le", bound)], String(count))
            }
            line(name + "_sum", labels, Self.seconds(histogram.sumUSec))
            line(name + "_count", labels, String(histogram.count))
        }
    }

    private mutating func declare(_ name: String, _ kind: Kind, help: String) {
        precondition(Self.isName(name, colons: true), "not a metric name: \(name)")
        precondition(families.insert(name).inserted, "\(name) written twice")
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    private mutating func line(_ name: String, _ labels: Labels, _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { label in
                precondition(Self.isName(label.name, colons: false), "not a label name: \(label.name)")
                return "\(label.name)=\"\(Self.escapeLabelValue(label.value))\""
            }.joined(separator: ",") + "}"
        }
        text += " " + value + "\n"
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*` for metric names; label names take no colon.
    static func isName(_ name: String, colons: Bool) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
            case UInt8(ascii: ":"): colons
            default: false
            }
        }
    }

    /// A label value as the format quotes it: backslash, double quote and line feed escaped.
    public static func escapeLabelValue(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A }) else { return value }
        var escaped = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// HELP text: backslash and line feed escaped (a double quote is itself there).
    public static func escapeHelp(_ help: String) -> String {
        guard help.utf8.contains(where: { $0 == 0x5C || $0 == 0x0A }) else { return help }
        var escaped = ""
        for character in help.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// Microseconds as decimal seconds, exactly and without trailing zeros: 2_500 is "0.0025", 60_000_000 is "60".
    public static func seconds(_ microseconds: Int64) -> String {
        let magnitude = microseconds.magnitude
        let whole = String(magnitude / 1_000_000), fraction = magnitude % 1_000_000
        let sign = microseconds < 0 ? "-" : ""
        guard fraction > 0 else { return sign + whole }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 6 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return sign + whole + "." + digits
    }
}
