/// How large a package document (a directory that is one document) may be: `MaxPackageDepth=`,
/// `MaxPackageEntries=` and `MaxPackageSize=` of inboxd.conf. Every package is walked within these bounds before
/// anything else sees it; one beyond any of them is refused whole.
public struct PackageLimits: Sendable, Hashable {
    /// Levels of directories below the package's own (the package itself is level 0).
    public var maxDepth: Int
    /// Entries (files and directories, the package's own directory not counted).
    public var maxEntries: Int
    /// Bytes of all its files together; nil is the single-file bound (`MaxInboxBytes=`, else none).
    public var maxBytes: Int64?

    public static let defaultDepth = 32
    public static let defaultEntries = 10_000

    public init(maxDepth: Int = PackageLimits.defaultDepth, maxEntries: Int = PackageLimits.defaultEntries,
                maxBytes: Int64? = nil) {
        self.maxDepth = maxDepth
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }
}

extension PackageLimits {
    /// The values MaxPackageDepth= may have.
    public static let depthRange = 1...1024
    /// The values MaxPackageEntries= may have.
    public static let entriesRange = 1...10_000_000

    /// The limits in force: `configured` with MaxPackageSize= unset (`maxBytes` nil, not `unlimited`) made the
    /// single-file bound, `inboxBytes` (MaxInboxBytes=; nil, none).
    public static func resolved(_ configured: PackageLimits, unlimited: Bool, inboxBytes: Int64?) -> PackageLimits {
        var limits = configured
        limits.maxBytes = unlimited ? nil : configured.maxBytes ?? inboxBytes
        return limits
    }
}

extension ConfigurationParser {
    /// The [Agent] keys of package bounds.
    static let packageLimitKeys: Set<String> = ["MaxPackageDepth", "MaxPackageEntries", "MaxPackageSize"]

    /// Parses one of `packageLimitKeys`; an empty value resets it to the default. Depth and entries are whole numbers
    /// in `PackageLimits.depthRange` and `entriesRange` (a walk must stop somewhere: no `infinity`); the size is a
    /// ByteSize or `infinity`, more than 0.
    static func parsePackageLimit(_ entry: INIEntry, into configuration: inout AgentConfiguration,
                                  sink: inout DiagnosticSink) {
        switch entry.key {
        case "MaxPackageDepth":
            configuration.packageLimits.maxDepth = number(entry, in: PackageLimits.depthRange, sink: &sink)
                ?? PackageLimits.defaultDepth
        case "MaxPackageEntries":
            configuration.packageLimits.maxEntries = number(entry, in: PackageLimits.entriesRange, sink: &sink)
                ?? PackageLimits.defaultEntries
        case "MaxPackageSize":
            configuration.packageLimits.maxBytes = byteCount(entry, sink: &sink)
            configuration.packageSizeUnlimited = entry.value.trimmingINIWhitespace() == "infinity"
        default:
            preconditionFailure("not a package limit: \(entry.key)")
        }
    }

    private static func number(_ entry: INIEntry, in range: ClosedRange<Int>, sink: inout DiagnosticSink) -> Int? {
        guard !entry.value.isEmpty else { return nil }
        guard entry.value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(entry.value),
              range.contains(number) else {
            sink.error(entry.line, "\(entry.key)= must be a whole number from \(range.lowerBound) to "
                       + "\(range.upperBound), got '\(entry.value.abbreviated)'")
            return nil
        }
        return number
    }
}
