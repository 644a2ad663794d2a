import InboxCore
import InboxSystem

/// The agent's options as a subcommand was given them (`AgentOption.inboxctl`; docs/design.md, Runtime directory and inboxctl: inboxctl sees exactly
/// what the agent sees), turned into the overrides the agent itself would resolve.
struct AgentOptions {
    var overrides = SettingsOverrides()

    static let help = help(omitting: [])

    /// The help lines of the agent's options, without those a command declares itself (`--inbox` where it names the
    /// Inbox to send to).
    static func help(omitting names: Set<String>) -> String {
        AgentOption.inboxctl.filter { !names.contains($0.name) }
            .compactMap { option in option.inboxctlHelp.map(option.option.helpLine) }
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
    }

    /// The settings the agent would run with; problems in inboxd.conf are printed as `file:line: message`.
    func settings() -> AgentSettings? {
        let (settings, diagnostics) = SettingsResolver.resolve(overrides)
        for diagnostic in diagnostics { Inboxctl.write(diagnostic.description + "\n", to: 2) }
        switch settings {
        case .success(let settings):
            warnAboutMissingPaths()
            return settings
        case .failure(let error):
            Inboxctl.write("inboxctl: \(error)\n", to: 2)
            return nil
        }
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
        self.init(options, agentOptions: agentOptions ? AgentOption.inboxctl : [], positionals: positionals)
    }
}

extension AgentSettings {
    /// The drop Inbox a file goes to: `given` (`--inbox`), else the agent's first; nil after saying why not.
    func openDropInbox(_ given: String?) -> Directory? {
        guard let path = given ?? inboxes.first else {
            Inboxctl.write("inboxctl: no drop Inbox is configured; give one with --inbox\n", to: 2)
            return nil
        }
        // O_PATH: the shared Inbox (1733) gives others write and search, not read; everything inboxctl does there is
        // relative to this descriptor (openat, renameat2, unlinkat, fstatat), which needs no more.
        do { return try Directory(searchOnly: path) } catch {
            Inboxctl.write("inboxctl: cannot open the Inbox: \(error)\n", to: 2)
            return nil
        }
    }
}
