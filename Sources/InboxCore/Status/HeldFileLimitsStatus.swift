/// The retention and Inbox bounds in force, and each bounded Inbox's use, as `status.json` carries them under
/// `"limits"` (`AgentStatus.limits`).
public struct HeldFileLimitsStatus: Sendable, Hashable {
    /// What one drop Inbox has in the agent's hands.
    public struct InboxUse: Sendable, Hashable {
        public var inbox: String
        public var files: Int
        public var bytes: Int64

        public init(inbox: String, files: Int, bytes: Int64) {
            self.inbox = inbox
            self.files = files
            self.bytes = bytes
        }
    }

    public var retention = RetentionSettings()
    public var bounds = InboxBounds()
    /// Each Inbox's use; empty when no bound is set (nothing is counted).
    public var use: [InboxUse] = []
    /// The bounds of a package document, as resolved (MaxPackageSize= unset is MaxInboxBytes=).
    public var packages = PackageLimits()

    public init(retention: RetentionSettings = RetentionSettings(), bounds: InboxBounds = InboxBounds(),
                use: [InboxUse] = [], packages: PackageLimits = PackageLimits()) {
        self.retention = retention
        self.bounds = bounds
        self.use = use
        self.packages = packages
    }

    /// The `"limits"` member's value; nulls for what is not set.
    public var json: String {
        func number<T: BinaryInteger>(_ value: T?) -> String { value.map { String($0) } ?? "null" }
        let use = use.map { "{\"inbox\":\(JSON.quote($0.inbox)),\"files\":\($0.files),\"bytes\":\($0.bytes)}" }
        return "{\"keepFailedUSec\":\(number(retention.keepFailed?.microsecondsClamped)),"
            + "\"keepUnhandledUSec\":\(number(retention.keepUnhandled?.microsecondsClamped)),"
            + "\"maxInboxFiles\":\(number(bounds.maxFiles)),\"maxInboxBytes\":\(number(bounds.maxBytes)),"
            + "\"maxInboxFilesPerSender\":\(number(bounds.maxFilesPerSender)),"
            + "\"maxInboxBytesPerSender\":\(number(bounds.maxBytesPerSender)),"
            + "\"inboxUse\":[\(use.joined(separator: ","))],"
            + "\"maxPackageDepth\":\(packages.maxDepth),\"maxPackageEntries\":\(packages.maxEntries),"
            + "\"maxPackageBytes\":\(number(packages.maxBytes))}"
    }

    /// Reads the `"limits"` member; a missing or mistyped one is "nothing set".
    public init(_ value: JSONValue?) {
        guard let value else { return }
        retention.keepFailed = value["keepFailedUSec"]?.int.map { .microseconds($0) }
        retention.keepUnhandled = value["keepUnhandledUSec"]?.int.map { .microseconds($0) }
        bounds = InboxBounds(maxFiles: value["maxInboxFiles"]?.int, maxBytes: value["maxInboxBytes"]?.int.map { Int64($0) },
                             maxFilesPerSender: value["maxInboxFilesPerSender"]?.int,
                             maxBytesPerSender: value["maxInboxBytesPerSender"]?.int.map { Int64($0) })
        use = (value["inboxUse"]?.array ?? []).compactMap { item in
            guard let inbox = item["inbox"]?.string else { return nil }
            return InboxUse(inbox: inbox, files: item["files"]?.int ?? 0, bytes: Int64(item["bytes"]?.int ?? 0))
        }
        // An older agent's file has none: the defaults.
        packages = PackageLimits(maxDepth: value["maxPackageDepth"]?.int ?? PackageLimits.defaultDepth,
                                 maxEntries: value["maxPackageEntries"]?.int ?? PackageLimits.defaultEntries,
                                 maxBytes: value["maxPackageBytes"]?.int.map { Int64($0) })
    }

    /// What `inboxctl status` says of them: nothing when every setting is its default.
    public var lines: [(name: String, value: String)] {
        var lines: [(String, String)] = []
        if retention.isEnabled {
            func kept(_ keep: Duration?) -> String { keep.map(TimeSpan.format) ?? "infinity" }
            lines.append(("Retention", "failed/ \(kept(retention.keepFailed)) (KeepFailedSec=), "
                          + "unhandled/ \(kept(retention.keepUnhandled)) (KeepUnhandledSec=)"))
        }
        if packages != PackageLimits() {
            lines.append(("Packages", "MaxPackageDepth=\(packages.maxDepth) MaxPackageEntries=\(packages.maxEntries) "
                          + "MaxPackageSize=\(packages.maxBytes.map(ByteSize.format) ?? "infinity")"))
        }
        guard !bounds.isEmpty else { return lines }
        var set: [String] = []
        if let value = bounds.maxFiles { set.append("MaxInboxFiles=\(value)") }
        if let value = bounds.maxBytes { set.append("MaxInboxBytes=\(ByteSize.format(value))") }
        if let value = bounds.maxFilesPerSender { set.append("MaxInboxFilesPerSender=\(value)") }
        if let value = bounds.maxBytesPerSender { set.append("MaxInboxBytesPerSender=\(ByteSize.format(value))") }
        lines.append(("Bounds", set.joined(separator: " ")))
        for inbox in use {
            lines.append(("", "\(inbox.inbox): \(inbox.files) file\(inbox.files == 1 ? "" : "s"), \(inbox.bytes) bytes in hand"))
        }
        return lines
    }
}
