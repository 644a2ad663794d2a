import InboxCore
import InboxSystem

/// The agent's options as a subcommand was given them (`AgentOption.inboxctl`; docs/design.md, Runtime directory and inboxctl: inboxctl sees exactly
/// what the agent sees), turned into the overrides the agent itself would resolve, and which instance of the agent
/// they are about (`--system`, `--user`, or the one that runs: `InstanceChoice`).
struct AgentOptions {
    var overrides = SettingsOverrides()
    var request = InstanceChoice.Request.automatic
    /// A --config, --state or --runtime-dir was given: the places are the command line's, and no instance is looked for.
    var pinned = false

    static let help = help(omitting: [])

    /// The help lines of the agent's options, without those a command declares itself (`--inbox` where it names the
    /// Inbox to send to).
    static func help(omitting names: Set<String>) -> String {
        (AgentInstance.allCases.map { $0.option.helpLine($0.help) }
            + AgentOption.inboxctl.filter { !names.contains($0.name) }
                .compactMap { option in option.inboxctlHelp.map(option.option.helpLine) })
            .joined(separator: "\n")
    }

    /// The agent's options in `parsed` (none unless the command takes them).
    init(_ parsed: ParsedOptions) {
        overrides.config = parsed.value(.config)
        overrides.inboxes = parsed.values(.inbox)
        overrides.handlers = parsed.values(.handlers)
        overrides.state = parsed.value(.state)
        overrides.runtimeDirectory = parsed.value(.runtimeDirectory)
        overrides.defaults = parsed.value(.defaults)
        let given = Set(parsed.given.map(\.name))
        if given.contains("--system") { request = .only(.system) }
        if given.contains("--user") { request = .only(.user) }
        pinned = overrides.config != nil || overrides.state != nil || overrides.runtimeDirectory != nil
    }

    /// `--system` and `--user` exclude each other.
    static func checkInstance(_ parsed: ParsedOptions) throws(UsageError) {
        let given = Set(parsed.given.map(\.name))
        if given.contains("--system") && given.contains("--user") {
            throw UsageError(message: "'--system' and '--user' cannot be used together")
        }
    }

    /// The settings of the instance the command looks at, and which one that is.
    struct Resolved {
        let settings: AgentSettings
        let choice: InstanceChoice
        /// The instance's status, when it runs.
        let status: AgentStatus?

        /// The line every "not running" and "not found" message ends with (`InstanceChoice.otherInstanceHint`).
        func hint(_ command: String) -> String { choice.otherInstanceHint(command) + "\n" }

        /// The uid the instance's agent runs as: its status file's owner when it runs, else root for the system
        /// instance and this user for their own.
        var agentUID: UInt32 {
            if choice.running, let st = try? FileSystem.status(settings.runtimeDirectory + "/" + AgentStatus.fileName) {
                return st.st_uid
            }
            return choice.instance == .system ? 0 : CurrentProcess.effectiveUserID
        }
    }

    /// The settings the agent would run with; problems in inboxd.conf are printed as `file:line: message`.
    func settings() -> AgentSettings? { resolve()?.settings }

    /// Chooses the instance (without --config, --state and --runtime-dir: the one asked for, else the one that runs),
    /// then resolves its settings as its agent would. A running instance's own status names its Inboxes and state
    /// directory and handlers.d search path, which win over its configuration (changed since it started) unless given
    /// here.
    func resolve() -> Resolved? {
        let environment = CurrentProcess.environmentVariables, isRoot = CurrentProcess.isRoot
        let places: [AgentInstance: InstanceDefaults] = [.system: .system, .user: .user(environment: environment)]
        // With the places on the command line, the instance is the one this user would run, as without instances.
        var asked: AgentInstance? = pinned ? (isRoot ? .system : .user) : nil
        if case .only(let instance) = request { asked = instance }
        var statuses: [AgentInstance: AgentStatus] = [:]
        for instance in AgentInstance.allCases {
            let given = instance == asked ? overrides.runtimeDirectory : nil
            if let status = Self.runningStatus(in: given ?? places[instance]!.runtime) { statuses[instance] = status }
        }
        let choice = InstanceChoice.decide(asked.map { .only($0) } ?? .automatic, isRoot: isRoot) { statuses[$0] != nil }
        var overrides = overrides
        let status = statuses[choice.instance]
        if let status, !pinned {
            if overrides.inboxes.isEmpty && !status.inboxes.isEmpty { overrides.inboxes = status.inboxes }
            if overrides.state == nil && !status.stateDirectory.isEmpty { overrides.state = status.stateDirectory }
            if overrides.handlers.isEmpty { overrides.handlers = status.handlerDirectories }
        }
        let (settings, diagnostics) = SettingsResolver.resolve(overrides, environment: environment,
                                                               isRoot: choice.instance == .system)
        for diagnostic in diagnostics { Inboxctl.write(diagnostic.description + "\n", to: 2) }
        switch settings {
        case .success(let settings):
            warnAboutMissingPaths()
            return Resolved(settings: settings, choice: choice, status: status)
        case .failure(let error):
            Inboxctl.write("inboxctl: \(error)\n", to: 2)
            return nil
        }
    }

    /// The status in `runtime` when its agent is alive; nil when there is none, it cannot be read, or its agent is gone.
    static func runningStatus(in runtime: String) -> AgentStatus? {
        guard case .success(let bytes) = readBounded(runtime + "/" + AgentStatus.fileName, limit: 4 << 20),
              case .success(let status) = AgentStatus.parse(bytes), status.pid > 0, Signals.processExists(status.pid)
        else { return nil }
        return status
    }
}

extension AgentOptions {
    /// A `--inbox` or `--handlers` given that does not exist is most likely a typo: said once on stderr, since the
    /// command would otherwise answer as if the directory were empty.
    func warnAboutMissingPaths() {
        for (what, paths) in [("Inbox", overrides.inboxes), ("handlers directory", overrides.handlers)] {
            for path in paths where FileSystem.accessError(path) == .noSuchFile {
                Inboxctl.write("inboxctl: warning: \(what) \(path) does not exist\n", to: 2)
            }
        }
    }
}

extension ParsedOptions {
    /// The agent's options given (empty unless the command accepts them).
    var agent: AgentOptions { AgentOptions(self) }
}

extension CommandOptions {
    /// A subcommand's options: its own, the agent's when `agentOptions` (less any it declares itself), and how many
    /// positional arguments.
    init(_ options: [CommandOption] = [], agentOptions: Bool, positionals: Positionals) {
        self.init(options + (agentOptions ? AgentInstance.allCases.map(\.option) : []),
                  agentOptions: agentOptions ? AgentOption.inboxctl : [], positionals: positionals)
    }
}

extension AgentSettings {
    /// The drop Inbox a file goes to: `given` (`--inbox`), else the agent's first; nil after saying why not (and
    /// `hint`, the line that names the other instance).
    func openDropInbox(_ given: String?, hint: String = "") -> Directory? {
        guard let path = given ?? inboxes.first else {
            Inboxctl.write("inboxctl: no drop Inbox is configured; give one with --inbox\n", to: 2)
            return nil
        }
        // O_PATH: the shared Inbox (1733) gives others write and search, not read; everything inboxctl does there is
        // relative to this descriptor (openat, renameat2, unlinkat, fstatat), which needs no more.
        do { return try Directory(searchOnly: path) } catch {
            Inboxctl.write("inboxctl: cannot open the Inbox: \(error)\n" + hint, to: 2)
            return nil
        }
    }
}

/// The running agent's view of the file system (`ServiceView`): what its sandbox lets it and its handlers write.
enum AgentView {
    /// The view of the agent running for `runtime`, or why there is none to check against.
    static func find(runtime: String) -> Result<ServiceView, Unavailable> {
        guard let status = AgentOptions.runningStatus(in: runtime) else { return .failure(.notRunning) }
        do { return .success(try ServiceView.process(status.pid)) } catch {
            return .failure(.unreadable(pid: status.pid, error))
        }
    }

    /// Why the agent's sandbox was not looked at.
    enum Unavailable: Error, CustomStringConvertible {
        case notRunning
        case unreadable(pid: Int32, SystemError)

        var description: String {
            switch self {
            case .notRunning:
                "no agent runs for this instance to ask"
            case .unreadable(let pid, let error):
                "the agent's view (PID \(pid)) cannot be read: \(error) (its user or root can)"
            }
        }
    }
}
