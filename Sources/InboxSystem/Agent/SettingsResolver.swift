import Glibc
import InboxCore

/// What a command line says about where things are and how to run; nil or empty means "from inboxd.conf, or the
/// default". `inboxd` and `inboxctl` take the same options, so both see the same directories.
public struct SettingsOverrides: Sendable {
    public var config: String?
    public var inboxes: [String] = []
    public var handlers: [String] = []
    public var state: String?
    public var runtimeDirectory: String?
    public var defaults: String?
    public var maxConcurrent: Int?
    public var logTarget: LogTarget?
    public var logLevel: LogPriority?

    public init() {}
}

/// Combines flags, inboxd.conf and the built-in defaults: flags override the file, which overrides the defaults.
public enum SettingsResolver {
    /// The settings, or why there are none (an unreadable file, or errors in it); `diagnostics` holds every
    /// problem found in inboxd.conf, warnings included, for the caller to print.
    public static func resolve(_ overrides: SettingsOverrides, environment: [String: String] = CurrentProcess.environmentVariables,
                               isRoot: Bool = CurrentProcess.isRoot)
        -> (settings: Result<AgentSettings, ResolveError>, diagnostics: [Diagnostic]) {
        var config = AgentConfiguration()
        var diagnostics: [Diagnostic] = []
        // The instance's own inboxd.conf when no --config is given (a user's agent never reads /etc/inboxd's).
        let defaults = AgentSettings.defaults(environment: environment, isRoot: isRoot)
        let configPath = overrides.config ?? defaults.configFile
        if overrides.config != nil || FileSystem.accessError(configPath) == nil {
            switch readBounded(configPath, limit: ConfigurationParser.maximumSize) {
            case .success(let bytes):
                let parsed = ConfigurationParser.parseAgent(bytes, path: configPath)
                diagnostics = parsed.diagnostics
                let errors = parsed.diagnostics.filter(\.isError)
                if !errors.isEmpty {
                    return (.failure(ResolveError("\(configPath): \(errors.count) error(s)", invalid: true)), diagnostics)
                }
                config = parsed.configuration
            case .failure(let error):
                return (.failure(ResolveError("\(configPath): \(error)", invalid: false)), diagnostics)
            }
        }
        // The default drop Inbox only when no Inbox is configured at all: an [Inbox] section is one.
        let bound = config.inboxSections.map(\.path)
        let plain = !overrides.inboxes.isEmpty ? overrides.inboxes
            : (!config.inboxes.isEmpty || !bound.isEmpty ? config.inboxes : [defaults.inbox])
        let inboxes = plain.filter { !bound.contains(ConfigurationParser.normalized($0)) } + bound
        let handlers = !overrides.handlers.isEmpty ? overrides.handlers
            : (!config.handlerDirectories.isEmpty ? config.handlerDirectories : defaults.handlers)
        var policy = RetryPolicy()
        if let attempts = config.maxAttempts { policy.maxAttempts = attempts }
        if let delay = config.retryDelay { policy.retryDelay = delay }
        var settings = AgentSettings(
            inboxes: inboxes, handlerDirectories: handlers,
            stateDirectory: overrides.state ?? config.stateDirectory ?? defaults.state,
            runtimeDirectory: overrides.runtimeDirectory ?? defaults.runtime,
            defaultsFile: overrides.defaults ?? defaults.preferencesFile,
            maxConcurrent: overrides.maxConcurrent ?? config.maxConcurrent ?? 2 * CurrentProcess.onlineProcessors,
            retryPolicy: policy,
            defaultTimeout: config.defaultTimeoutDisabled ? nil : config.defaultTimeout ?? .seconds(300),
            stopTimeout: .seconds(10),
            logTarget: overrides.logTarget ?? .auto, logLevel: overrides.logLevel ?? .info)
        settings.landlock = config.landlock ?? .auto
        settings.contentSniffing = config.contentSniffing ?? true
        settings.inboxSections = config.inboxSections
        let common = config.choice.applied(to: .rank)
        settings.choices = HandlerChoice.Inboxes(common: common, byInbox: Dictionary(
            config.inboxSections.map { ($0.path, $0.choice.applied(to: common)) }, uniquingKeysWith: { first, _ in first }))
        settings.retention = config.retention
        settings.inboxBounds = config.inboxBounds
        settings.cluster = config.cluster
        settings.pathLocations = config.pathLocations
        // Inboxes= against the Inboxes this instance watches, the default one included (a file that names none).
        if let cluster = config.cluster {
            let problems = cluster.unconfiguredInboxes(configured: inboxes)
            if !problems.isEmpty {
                return (.failure(ResolveError("\(configPath): \(problems.count) error(s)", invalid: true)),
                        diagnostics + problems)
            }
        }
        settings.packageLimits = PackageLimits.resolved(config.packageLimits, unlimited: config.packageSizeUnlimited,
                                                        inboxBytes: config.inboxBounds.maxBytes)
        return (.success(settings), diagnostics)
    }

    /// Why no settings could be made.
    public struct ResolveError: Error, Sendable, CustomStringConvertible {
        public let description: String
        /// True when the file was read and has errors (each in the diagnostics); false when it could not be read.
        public let invalid: Bool
        init(_ description: String, invalid: Bool) {
            self.description = description
            self.invalid = invalid
        }
    }
}
