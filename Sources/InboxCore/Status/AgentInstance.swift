/// The two instances of the agent a machine can run, as systemctl and journalctl name them: the system's (`inboxd`
/// under the system manager: /var/spool, /var/lib, /run/inboxd) and a user's own (`systemctl --user`: the XDG base
/// directories). `inboxctl --system` and `--user` choose one; without either, `InstanceChoice.decide` does.
public enum AgentInstance: String, Sendable, CaseIterable {
    case system, user

    /// The instance that is not this one.
    public var other: AgentInstance { self == .system ? .user : .system }

    /// The inboxctl option that chooses it.
    public var flag: String { "--" + rawValue }

    /// The option as inboxctl's commands declare it (every command that takes the agent's options takes it).
    public var option: CommandOption { .flag(flag) }

    /// What inboxctl's help says it does.
    public var help: String {
        self == .system ? "The system instance (the default as root, or when yours is not running)"
            : "Your user instance (the default when it is running)"
    }

    /// How messages name it: "the system instance", "your user instance".
    public var title: String { self == .system ? "the system instance" : "your user instance" }
}

/// Which instance a command looks at, and what is known of both: whether each runs (has a status file whose agent is
/// alive). Pure: the caller finds out what runs.
public struct InstanceChoice: Sendable, Equatable {
    /// What the command line asked for: one instance (`--system`, `--user`) or none.
    public enum Request: Sendable, Equatable {
        case automatic
        case only(AgentInstance)
    }

    public let instance: AgentInstance
    /// Whether the chosen instance runs.
    public let running: Bool
    /// Whether the other one runs.
    public let otherRunning: Bool

    public init(instance: AgentInstance, running: Bool, otherRunning: Bool) {
        self.instance = instance
        self.running = running
        self.otherRunning = otherRunning
    }

    /// The rule, as systemctl's: what is asked for wins; root looks at the system instance; an ordinary user at their
    /// own instance when it runs, else at the system's when that runs, else at their own (the one they would start).
    public static func decide(_ request: Request, isRoot: Bool, running: (AgentInstance) -> Bool) -> InstanceChoice {
        let instance: AgentInstance
        switch request {
        case .only(let asked): instance = asked
        case .automatic where isRoot: instance = .system
        case .automatic: instance = running(.user) || !running(.system) ? .user : .system
        }
        return InstanceChoice(instance: instance, running: running(instance), otherRunning: running(instance.other))
    }

    /// One sentence that names the other instance and the option that looks at it, for every message that says
    /// something is not running or not found: `command` is the inboxctl command line to suggest, without the option
    /// ("inboxctl status").
    public func otherInstanceHint(_ command: String) -> String {
        let other = instance.other
        let this = "This is \(instance.title)" + (running ? "" : ", which is not running")
        if otherRunning {
            return this + "; \(other.title) is running: see '\(command) \(other.flag)'."
        }
        return this + "; \(other.title) is not running either ('\(command) \(other.flag)' looks there)."
    }
}
