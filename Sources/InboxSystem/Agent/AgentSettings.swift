import Glibc
import InboxCore

/// Everything the agent needs to run, after flags, config file and defaults are combined.
public struct AgentSettings: Sendable {
    public var inboxes: [String]
    public var handlerDirectories: [String]
    public var stateDirectory: String
    public var runtimeDirectory: String
    public var defaultsFile: String?
    public var maxConcurrent: Int
    public var retryPolicy: RetryPolicy
    public var defaultTimeout: Duration?
    /// How long SIGTERM waits for running handlers before they are killed.
    public var stopTimeout: Duration
    public var logTarget: LogTarget
    public var logLevel: LogPriority
    /// Landlock= of inboxd.conf.
    public var landlock: LandlockMode = .auto
    /// Whether file contents are sniffed with libmagic when deciding a type (ContentSniffing=).
    public var contentSniffing = true
    /// shared-mime-info directories, most important first (each holds globs2, subclasses, aliases).
    public var mimeDirectories: [String] = MIMEDatabaseLoader.defaultDirectories()

    public init(inboxes: [String], handlerDirectories: [String], stateDirectory: String, runtimeDirectory: String,
                defaultsFile: String?, maxConcurrent: Int, retryPolicy: RetryPolicy, defaultTimeout: Duration?,
                stopTimeout: Duration, logTarget: LogTarget, logLevel: LogPriority) {
        self.inboxes = inboxes
        self.handlerDirectories = handlerDirectories
        self.stateDirectory = stateDirectory
        self.runtimeDirectory = runtimeDirectory
        self.defaultsFile = defaultsFile
        self.maxConcurrent = maxConcurrent
        self.retryPolicy = retryPolicy
        self.defaultTimeout = defaultTimeout
        self.stopTimeout = stopTimeout
        self.logTarget = logTarget
        self.logLevel = logLevel
    }

    /// The handlers.d search path (docs/design.md, Registration files), first wins by file name.
    public static let systemHandlerDirectories = [
        "/etc/inboxd/handlers.d", "/run/inboxd/handlers.d", "/usr/lib/inboxd/handlers.d",
    ]

    /// Directories for this user: the system ones as root, XDG ones otherwise.
    public static func defaults(environment: [String: String], isRoot: Bool) -> (inbox: String, state: String,
                                                                                  runtime: String, handlers: [String]) {
        if isRoot {
            return ("/var/spool/inboxd/Inbox", "/var/lib/inboxd", "/run/inboxd", systemHandlerDirectories)
        }
        let home = environment["HOME"] ?? "/"
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/state"
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 + "/inboxd" : nil }
            ?? state + "/inboxd/run"
        return (data + "/inboxd/Inbox", state + "/inboxd", runtime, [config + "/inboxd/handlers.d"] + systemHandlerDirectories)
    }
}
