/// Parses the agent's own configuration files with the registration lexer and the same error rules.
///
/// The returned values hold every setting that parsed; callers should refuse a file whose diagnostics contain an error.
public enum ConfigurationParser {
    /// Files larger than this are rejected unread.
    public static let maximumSize = 1 << 20

    /// inboxd.conf: [Agent] Inbox= and HandlersDirectory= (repeatable, empty clears), StateDirectory=, MaxConcurrent=,
    /// MaxAttempts=, RetryDelaySec= (time span), TimeoutSec=,
    /// Landlock=, ContentSniffing=, retention and Inbox bounds (`heldFileLimitKeys`), package bounds
    /// (`packageLimitKeys`); and repeatable [Inbox] sections,
    /// Path= and Handler= (`readInboxes`); ChooseHandler= and ChooseTimeoutSec= in both (`parseChoice`). Paths must be absolute.
    public static func parseAgent(_ bytes: [UInt8], path: String) -> (configuration: AgentConfiguration,
                                                                       diagnostics: [Diagnostic]) {
        var sink = DiagnosticSink(path: path, diagnostics: [])
        var configuration = AgentConfiguration()
        var otherSections: [INISection] = []
        let agentEntries = entries(of: "Agent", in: bytes, path: path, sink: &sink, also: ["Inbox", "Cluster"],
                                   into: &otherSections)
        let inboxSections = otherSections.filter { $0.name == "Inbox" }
        for entry in agentEntries {
            let value = entry.value
            switch entry.key {
            case "Inbox":
                if value.isEmpty { configuration.inboxes.removeAll() }
                else if let path = absolutePath(entry, sink: &sink) {
                    configuration.inboxes.append(path)
                    configuration.pathLocations[path] = sink.location(entry.line)
                }
            case "HandlersDirectory":
                if value.isEmpty { configuration.handlerDirectories.removeAll() }
                else if let path = absolutePath(entry, sink: &sink) {
                    configuration.handlerDirectories.append(path)
                    configuration.pathLocations[path] = sink.location(entry.line)
                }
            case "StateDirectory":
                configuration.stateDirectory = value.isEmpty ? nil : absolutePath(entry, sink: &sink)
                if let path = configuration.stateDirectory { configuration.pathLocations[path] = sink.location(entry.line) }
            case "MaxConcurrent":
                configuration.maxConcurrent = positiveInteger(entry, sink: &sink)
            case "MaxAttempts":
                configuration.maxAttempts = positiveInteger(entry, sink: &sink)
            case "RetryDelaySec":
                let span = timeSpan(entry, sink: &sink)
                if span.disabled { sink.error(entry.line, "RetryDelaySec= must be finite") }
                configuration.retryDelay = span.duration
            case "TimeoutSec":
                let span = timeSpan(entry, sink: &sink)
                configuration.defaultTimeout = span.duration
                configuration.defaultTimeoutDisabled = span.disabled
            case "Landlock":
                if value.isEmpty {
                    configuration.landlock = nil
                } else if let mode = LandlockMode(rawValue: value) {
                    configuration.landlock = mode
                } else {
                    sink.error(entry.line, "invalid Landlock= '\(value.abbreviated)': expected auto, require or off")
                }
            case "ContentSniffing":
                if value.isEmpty {
                    configuration.contentSniffing = nil
                } else if let flag = BooleanSyntax.parse(value) {
                    configuration.contentSniffing = flag
                } else {
                    sink.error(entry.line, "invalid ContentSniffing= '\(value.abbreviated)': expected yes or no")
                }
            case let key where heldFileLimitKeys.contains(key):
                parseHeldFileLimit(entry, into: &configuration, sink: &sink)
            case let key where choiceKeys.contains(key):
                parseChoice(entry, into: &configuration.choice, sink: &sink)
            case let key where packageLimitKeys.contains(key):
                parsePackageLimit(entry, into: &configuration, sink: &sink)
            default:
                sink.unknownKey(entry, in: "Agent")
            }
        }
        configuration.inboxSections = readInboxes(inboxSections, agentEntries: agentEntries, sink: &sink)
        for section in configuration.inboxSections { configuration.pathLocations[section.path] = section.location }
        configuration.cluster = readCluster(otherSections.filter { $0.name == "Cluster" },
                                            inboxes: configuration.inboxes + configuration.inboxSections.map(\.path),
                                            sink: &sink)
        return (configuration, sink.sorted)
    }

    /// defaults.conf: [Defaults] lines `UTI=handler-id` (any key is a UTI here; an empty value removes it).
    public static func parseDefaults(_ bytes: [UInt8], path: String) -> (preferences: HandlerPreferences,
                                                                          diagnostics: [Diagnostic]) {
        var sink = DiagnosticSink(path: path, diagnostics: [])
        var preferences = HandlerPreferences()
        for entry in entries(of: "Defaults", in: bytes, path: path, sink: &sink) where !entry.key.hasPrefix("X-") {
            guard TypeIdentifierSyntax.isValid(entry.key) else {
                sink.error(entry.line, "invalid type identifier '\(entry.key.abbreviated)'")
                continue
            }
            if entry.value.isEmpty {
                preferences.byType[entry.key] = nil
            } else if IdentifierSyntax.isValid(entry.value) {
                preferences.byType[entry.key] = entry.value
            } else {
                sink.error(entry.line, "invalid handler identifier '\(entry.value.abbreviated)'")
            }
        }
        return (preferences, sink.sorted)
    }

    /// The one `[Cluster]` section (a second is an error at its header), checked against this host's drop Inboxes.
    private static func readCluster(_ sections: [INISection], inboxes: [String],
                                    sink: inout DiagnosticSink) -> ClusterSettings? {
        guard let first = sections.first else { return nil }
        for extra in sections.dropFirst() {
            sink.error(extra.line, "a second [Cluster] section (the first is at line \(first.line)): a host takes "
                       + "part in one cluster")
        }
        guard let settings = ClusterSettings.read(first, sink: &sink), sections.count == 1 else { return nil }
        // A file that names no Inbox leaves the instance's default drop Inbox, which only the settings resolver knows
        // (SettingsResolver checks Inboxes= against it).
        guard !inboxes.isEmpty else { return settings }
        let problems = settings.unconfiguredInboxes(configured: inboxes)
        sink.diagnostics += problems
        return problems.isEmpty ? settings : nil
    }

    /// Lexes a file and returns the entries of its `[name]` sections, and in `others` its sections named in `also`
    /// (each one of its own); other sections are warned about.
    private static func entries(of name: String, in bytes: [UInt8], path: String, sink: inout DiagnosticSink,
                                also: Set<String> = [], into others: inout [INISection]) -> [INIEntry] {
        let document = INILexer.lex(bytes, path: path, maximumSize: maximumSize)
        sink = DiagnosticSink(path: path, diagnostics: document.diagnostics)
        var entries: [INIEntry] = []
        for section in document.sections {
            if section.name == name {
                entries += section.entries
            } else if also.contains(section.name) {
                others.append(section)
            } else {
                unknownSection(section, sink: &sink)
            }
        }
        return entries
    }

    private static func entries(of name: String, in bytes: [UInt8], path: String,
                                sink: inout DiagnosticSink) -> [INIEntry] {
        var none: [INISection] = []
        return entries(of: name, in: bytes, path: path, sink: &sink, into: &none)
    }

    private static func unknownSection(_ section: INISection, sink: inout DiagnosticSink) {
        guard !section.name.hasPrefix("X-") else { return }
        sink.warning(section.line, "unknown section [\(section.name)], ignored")
    }

    static func absolutePath(_ entry: INIEntry, sink: inout DiagnosticSink) -> String? {
        guard entry.value.hasPrefix("/") else {
            sink.error(entry.line, "\(entry.key)= must be an absolute path, got '\(entry.value.abbreviated)'")
            return nil
        }
        return entry.value
    }

    private static func positiveInteger(_ entry: INIEntry, sink: inout DiagnosticSink) -> Int? {
        guard !entry.value.isEmpty else { return nil }
        guard let number = Int(entry.value), number > 0 else {
            sink.error(entry.line, "\(entry.key)= must be a positive integer, got '\(entry.value.abbreviated)'")
            return nil
        }
        return number
    }

    private static func timeSpan(_ entry: INIEntry, sink: inout DiagnosticSink) -> (duration: Duration?, disabled: Bool) {
        guard !entry.value.isEmpty else { return (nil, false) }
        do {
            let duration = try TimeSpan.parse(entry.value)
            return (duration, duration == nil)
        } catch {
            sink.error(entry.line, "invalid \(entry.key)=: \(error.message)")
            return (nil, false)
        }
    }
}
