/// How long failed/ and unhandled/ keep their entries: `KeepFailedSec=` and `KeepUnhandledSec=` of inboxd.conf.
/// nil is forever (the default, and what `infinity` says).
public struct RetentionSettings: Sendable, Hashable {
    public var keepFailed: Duration?
    public var keepUnhandled: Duration?

    public init(keepFailed: Duration? = nil, keepUnhandled: Duration? = nil) {
        self.keepFailed = keepFailed
        self.keepUnhandled = keepUnhandled
    }

    /// True when something expires at all.
    public var isEnabled: Bool { keepFailed != nil || keepUnhandled != nil }
}

/// How much one drop Inbox may have in the agent's hands at once, as a whole and per sender uid:
/// `MaxInboxFiles=`, `MaxInboxBytes=`, `MaxInboxFilesPerSender=`, `MaxInboxBytesPerSender=`. nil is no bound.
public struct InboxBounds: Sendable, Hashable {
    public var maxFiles: Int?
    public var maxBytes: Int64?
    public var maxFilesPerSender: Int?
    public var maxBytesPerSender: Int64?

    public init(maxFiles: Int? = nil, maxBytes: Int64? = nil, maxFilesPerSender: Int? = nil,
                maxBytesPerSender: Int64? = nil) {
        self.maxFiles = maxFiles
        self.maxBytes = maxBytes
        self.maxFilesPerSender = maxFilesPerSender
        self.maxBytesPerSender = maxBytesPerSender
    }

    /// True when no bound is set: nothing is counted.
    public var isEmpty: Bool { maxFiles == nil && maxBytes == nil && maxFilesPerSender == nil && maxBytesPerSender == nil }
}

extension ConfigurationParser {
    /// The [Agent] keys of retention and Inbox bounds.
    static let heldFileLimitKeys: Set<String> = [
        "KeepFailedSec", "KeepUnhandledSec", "MaxInboxFiles", "MaxInboxBytes", "MaxInboxFilesPerSender",
        "MaxInboxBytesPerSender",
    ]

    /// Parses one of `heldFileLimitKeys`; an empty value resets it to the default, `infinity` means no limit, zero is
    /// an error (a limit of nothing would lose or refuse every file: say `infinity` or leave the key out).
    static func parseHeldFileLimit(_ entry: INIEntry, into configuration: inout AgentConfiguration,
                                   sink: inout DiagnosticSink) {
        let value = entry.value
        switch entry.key {
        case "KeepFailedSec": configuration.retention.keepFailed = keepTime(entry, sink: &sink)
        case "KeepUnhandledSec": configuration.retention.keepUnhandled = keepTime(entry, sink: &sink)
        case "MaxInboxFiles": configuration.inboxBounds.maxFiles = fileCount(entry, sink: &sink)
        case "MaxInboxFilesPerSender": configuration.inboxBounds.maxFilesPerSender = fileCount(entry, sink: &sink)
        case "MaxInboxBytes": configuration.inboxBounds.maxBytes = byteCount(entry, sink: &sink)
        case "MaxInboxBytesPerSender": configuration.inboxBounds.maxBytesPerSender = byteCount(entry, sink: &sink)
        default: preconditionFailure("not a held-file limit: \(entry.key) = \(value)")
        }
    }

    private static func keepTime(_ entry: INIEntry, sink: inout DiagnosticSink) -> Duration? {
        guard !entry.value.isEmpty else { return nil }
        do {
            guard let duration = try TimeSpan.parse(entry.value) else { return nil }
            guard duration > .zero else {
                sink.error(entry.line, "\(entry.key)= must be longer than 0 (infinity keeps entries forever)")
                return nil
            }
            return duration
        } catch {
            sink.error(entry.line, "invalid \(entry.key)=: \(error.message)")
            return nil
        }
    }

    private static func fileCount(_ entry: INIEntry, sink: inout DiagnosticSink) -> Int? {
        guard !entry.value.isEmpty, entry.value != "infinity" else { return nil }
        guard entry.value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(entry.value), number > 0 else {
            sink.error(entry.line, "\(entry.key)= must be a positive number of files or infinity, got "
                       + "'\(entry.value.abbreviated)'")
            return nil
        }
        return number
    }

    /// A size (ByteSize syntax); nil for empty or `infinity`, and for a bad value (an error at its line).
    static func byteCount(_ entry: INIEntry, sink: inout DiagnosticSink) -> Int64? {
        guard !entry.value.isEmpty else { return nil }
        do {
            guard let bytes = try ByteSize.parse(entry.value) else { return nil }
            guard bytes > 0 else {
                sink.error(entry.line, "\(entry.key)= must be more than 0 bytes (or infinity)")
                return nil
            }
            return bytes
        } catch {
            sink.error(entry.line, "invalid \(entry.key)=: \(error.message)")
            return nil
        }
    }
}
