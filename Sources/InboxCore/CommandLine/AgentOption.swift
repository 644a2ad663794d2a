/// The agent's options, declared once: `inboxd` takes them all, and inboxctl's subcommands take those that say where
/// the agent's files are, with the same meaning (docs/design.md, Runtime directory and inboxctl: inboxctl sees exactly what the agent sees). What a value
/// becomes (a path made absolute, a number checked) is each executable's.
public enum AgentOption: String, CaseIterable, Sendable {
    case config = "--config"
    case inbox = "--inbox"
    case handlers = "--handlers"
    case state = "--state"
    case runtimeDirectory = "--runtime-dir"
    case defaults = "--defaults"
    case maxConcurrent = "--max-concurrent"
    case logTarget = "--log-target"
    case logLevel = "--log-level"

    /// The options inboxctl's subcommands accept, in the order their help lists them.
    public static let inboxctl = allCases.filter { $0.inboxctlHelp != nil }

    /// Its name on the command line.
    public var name: String { rawValue }

    /// The placeholder for its value in help.
    public var valueName: String {
        switch self {
        case .config, .defaults: "FILE"
        case .inbox, .handlers, .state, .runtimeDirectory: "DIR"
        case .maxConcurrent: "N"
        case .logTarget: "TARGET"
        case .logLevel: "LEVEL"
        }
    }

    /// What `inboxd --help` says it does.
    public var agentHelp: String {
        switch self {
        case .config: "Agent configuration (default /etc/inboxd/inboxd.conf, a user's ~/.config/inboxd/inboxd.conf)"
        case .inbox: "Watch DIR as a drop Inbox (repeatable; replaces Inbox= of the config)"
        case .handlers: "Read registrations from DIR (repeatable; replaces the search path)"
        case .state: "State directory: containers/, failed/, unhandled/"
        case .runtimeDirectory: "Where the status file is kept"
        case .defaults: "Handler preferences (default /etc/inboxd/defaults.conf, a user's ~/.config/inboxd/defaults.conf)"
        case .maxConcurrent: "Handlers running at once, across all handlers"
        case .logTarget: "auto, journal or stderr (default auto)"
        case .logLevel: "info or debug (default info)"
        }
    }

    /// What inboxctl's help says it does, from the side of a tool that looks at the agent's files; nil for the
    /// options that only tune the running agent, which inboxctl does not take.
    public var inboxctlHelp: String? {
        switch self {
        case .config: "The agent's configuration (default /etc/inboxd/inboxd.conf, a user's ~/.config/inboxd/inboxd.conf)"
        case .inbox: "A drop Inbox (repeatable; as the agent's --inbox)"
        case .handlers: "Registrations from DIR (repeatable; replaces the search path)"
        case .state: "The agent's state directory"
        case .runtimeDirectory: "The agent's runtime directory (its status file)"
        case .defaults: "Handler preferences (default /etc/inboxd/defaults.conf, a user's ~/.config/inboxd/defaults.conf)"
        case .maxConcurrent, .logTarget, .logLevel: nil
        }
    }

    /// The option as a command declares it: every agent option takes a value.
    public var option: CommandOption {
        CommandOption(names: [name], takesValue: true, valueName: valueName, help: agentHelp)
    }
}
