/// The settings of `inboxd.conf`; nil or empty means "use the built-in default".
public struct AgentConfiguration: Sendable, Hashable {
    /// Inbox=: drop Inboxes to watch.
    public var inboxes: [String]
    /// HandlersDirectory=: replaces the handlers.d search path when non-empty.
    public var handlerDirectories: [String]
    /// StateDirectory=.
    public var stateDirectory: String?
    /// MaxConcurrent=: handlers running at once, across all handlers.
    public var maxConcurrent: Int?
    /// MaxAttempts=: launches per file before it is moved to failed/.
    public var maxAttempts: Int?
    /// RetryDelaySec=.
    public var retryDelay: Duration?
    /// TimeoutSec=: the default handler timeout; nil means the built-in default unless defaultTimeoutDisabled is set.
    public var defaultTimeout: Duration?
    /// True when TimeoutSec=infinity: handlers without their own TimeoutSec= are never timed out.
    public var defaultTimeoutDisabled: Bool
    /// Landlock=: whether handlers are sandboxed.
    public var landlock: LandlockMode?
    /// ContentSniffing=: whether libmagic's view of the content takes part in deciding a file's type.
    public var contentSniffing: Bool?
    /// The [Inbox] sections: drop Inboxes of their own, each perhaps bound to a handler.
    public var inboxSections: [InboxSection] = []
    /// ChooseHandler=, ChooseTimeoutSec= of [Agent]: the default of every drop Inbox.
    public var choice = HandlerChoice.Overrides()
    /// KeepFailedSec=, KeepUnhandledSec=.
    public var retention = RetentionSettings()
    /// MaxInboxFiles=, MaxInboxBytes= and their PerSender= forms: the bounds of every drop Inbox.
    public var inboxBounds = InboxBounds()
    /// MaxPackageDepth=, MaxPackageEntries=, MaxPackageSize=: the bounds of a package document. `maxBytes` nil is
    /// MaxPackageSize= unset (the settings make it MaxInboxBytes=), unless `packageSizeUnlimited`.
    public var packageLimits = PackageLimits()
    /// True when MaxPackageSize=infinity: a package's bytes are not bounded, whatever MaxInboxBytes= says.
    public var packageSizeUnlimited = false
    /// [Cluster]: how this host takes part in a cluster on NATS JetStream; nil for none (or one with an error).
    public var cluster: ClusterSettings?
    /// Where each directory was given (`Inbox=`, `[Inbox]` sections, `StateDirectory=`, `HandlersDirectory=`, by
    /// path): the line a warning about it points to.
    public var pathLocations: [String: SourceLocation] = [:]

    /// Creates a configuration; every setting defaults to "unset".
    public init(inboxes: [String] = [], handlerDirectories: [String] = [], stateDirectory: String? = nil,
                maxConcurrent: Int? = nil, maxAttempts: Int? = nil, retryDelay: Duration? = nil,
                defaultTimeout: Duration? = nil, defaultTimeoutDisabled: Bool = false) {
        self.inboxes = inboxes
        self.handlerDirectories = handlerDirectories
        self.stateDirectory = stateDirectory
        self.maxConcurrent = maxConcurrent
        self.maxAttempts = maxAttempts
        self.retryDelay = retryDelay
        self.defaultTimeout = defaultTimeout
        self.defaultTimeoutDisabled = defaultTimeoutDisabled
    }
}

/// How the agent uses Landlock for its handlers.
public enum LandlockMode: String, Sendable, Hashable, CaseIterable {
    /// Sandbox where the kernel can; elsewhere fall back to permissions and the after-exit check.
    case auto
    /// Refuse every handler the kernel cannot sandbox.
    case require
    /// Never sandbox (for tests of the fallback; says so at start-up).
    case off
}
