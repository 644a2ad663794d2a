import Glibc
import InboxCore

/// Everything the agent needs to run, after flags, config file and defaults are combined.
public struct AgentSettings: Sendable {
    /// Every drop Inbox watched: those of `[Agent] Inbox=` (or `--inbox`, or the default), then those of the
    /// [Inbox] sections.
    public var inboxes: [String]
    /// The [Inbox] sections of inboxd.conf; their paths are in `inboxes` too.
    public var inboxSections: [InboxSection] = [] {
        didSet { bindings = Dictionary(inboxSections.compactMap { s in s.binding.map { (s.path, $0) } },
                                       uniquingKeysWith: { first, _ in first }) }
    }
    /// The bound Inboxes by path, for the router's one look-up per file (none when nothing is bound).
    public private(set) var bindings: [String: Routing.Binding] = [:]
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
    /// ChooseHandler=, ChooseTimeoutSec= of inboxd.conf: [Agent]'s for every Inbox, an [Inbox] section's for its own.
    public var choices = HandlerChoice.Inboxes()
    /// KeepFailedSec=, KeepUnhandledSec= of inboxd.conf: forever unless set.
    public var retention = RetentionSettings()
    /// MaxInboxFiles=, MaxInboxBytes= and their PerSender= forms of inboxd.conf: the bounds of each drop Inbox.
    public var inboxBounds = InboxBounds()
    /// MaxPackageDepth=, MaxPackageEntries=, MaxPackageSize= of inboxd.conf, resolved: `maxBytes` is MaxPackageSize=,
    /// else MaxInboxBytes= (the single-file bound), else nil (no bound; `infinity` says so too).
    public var packageLimits = PackageLimits()
    /// [Cluster] of inboxd.conf: the cluster this host feeds (`cluster.inboxes`) and works for (`cluster.work`);
    /// nil for none.
    public var cluster: ClusterSettings?
    /// Where inboxd.conf gave each directory (Inbox=, [Inbox] Path=, StateDirectory=, HandlersDirectory=), by path;
    /// one given on the command line or by default has none.
    public var pathLocations: [String: SourceLocation] = [:]
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

    /// The built-in places of the instance this process is: the system's as root, the user's otherwise.
    public static func defaults(environment: [String: String], isRoot: Bool) -> InstanceDefaults {
        isRoot ? .system : .user(environment: environment)
    }
}

/// Where one instance of the agent keeps everything when neither a flag nor inboxd.conf says otherwise
/// (docs/design.md, Directories). The system instance lives in the FHS places; a user instance (an ordinary user's
/// agent, `systemctl --user`) lives in the XDG base directories and reads no configuration of the system's, so that
/// an administrator's /etc/inboxd/inboxd.conf (its Inboxes, its state directory) never redirects a user's agent.
public struct InstanceDefaults: Sendable, Equatable {
    public var inbox: String
    public var state: String
    /// Where the status file is kept.
    public var runtime: String
    /// The handlers.d search path, first wins by file name.
    public var handlers: [String]
    /// inboxd.conf, read when it exists.
    public var configFile: String
    /// defaults.conf, read when it exists.
    public var preferencesFile: String

    public init(inbox: String, state: String, runtime: String, handlers: [String], configFile: String,
                preferencesFile: String) {
        self.inbox = inbox
        self.state = state
        self.runtime = runtime
        self.handlers = handlers
        self.configFile = configFile
        self.preferencesFile = preferencesFile
    }

    /// The system instance: /var/spool, /var/lib, /run and /etc.
    public static let system = InstanceDefaults(
        inbox: "/var/spool/inboxd/Inbox", state: "/var/lib/inboxd", runtime: "/run/inboxd",
        handlers: AgentSettings.systemHandlerDirectories,
        configFile: "/etc/inboxd/inboxd.conf", preferencesFile: "/etc/inboxd/defaults.conf")

    /// A user instance: `$XDG_DATA_HOME/inboxd/Inbox`, `$XDG_STATE_HOME/inboxd`, `$XDG_RUNTIME_DIR/inboxd` (or
    /// `$XDG_STATE_HOME/inboxd/run` where the session has no runtime directory), and `$XDG_CONFIG_HOME/inboxd/` for
    /// inboxd.conf, defaults.conf and handlers.d, ahead of the system's handlers.d (registrations that packages
    /// install are there for users too). A variable that is unset or not an absolute path counts as unset, as the
    /// XDG Base Directory specification says; its default is under `$HOME`.
    public static func user(environment: [String: String]) -> InstanceDefaults {
        func base(_ variable: String, _ fallback: String) -> String {
            environment[variable].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (environment["HOME"] ?? "/") + fallback
        }
        let data = base("XDG_DATA_HOME", "/.local/share"), state = base("XDG_STATE_HOME", "/.local/state")
        let config = base("XDG_CONFIG_HOME", "/.config") + "/inboxd"
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 + "/inboxd" : nil }
            ?? state + "/inboxd/run"
        return InstanceDefaults(
            inbox: data + "/inboxd/Inbox", state: state + "/inboxd", runtime: runtime,
            handlers: [config + "/handlers.d"] + AgentSettings.systemHandlerDirectories,
            configFile: config + "/inboxd.conf", preferencesFile: config + "/defaults.conf")
    }
}
