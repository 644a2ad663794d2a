import InboxCore
import InboxSystem

/// Tokenizes a subcommand's arguments the way swift-argument-parser does: `--name value`, `--name=value`,
/// flags, `--` ending the options, and the rest as positional arguments. What the options mean is the caller's.
struct OptionScanner {
    /// A problem with the command line: the message for `Inboxctl.usageError`.
    struct UsageError: Error {
        let message: String

        /// "unknown option '--jsno'; did you mean '--json'?", the suggestion taken from `known`.
        static func unknownOption(_ name: String, known: [String]) -> UsageError {
            var message = "unknown option '\(name)'"
            if let close = Spelling.closest(to: name, among: known) { message += "; did you mean '\(close)'?" }
            return UsageError(message: message)
        }
    }

    private var arguments: ArraySlice<String>
    private var onlyPositional = false

    init(_ arguments: [String]) {
        self.arguments = arguments[...]
    }

    /// The next token: an option (with its inline `=value`, if any) or a positional argument; nil at the end.
    mutating func next() -> Token? {
        guard let token = arguments.popFirst() else { return nil }
        if onlyPositional || !token.hasPrefix("-") || token == "-" { return .positional(token) }
        if token == "--" {
            onlyPositional = true
            return next()
        }
        if token.hasPrefix("--"), let equals = token.firstIndex(of: "=") {
            return .option(String(token[..<equals]), inline: String(token[token.index(after: equals)...]))
        }
        return .option(token, inline: nil)
    }

    /// The value of an option that takes one: its inline `=value` or the next argument.
    mutating func value(for name: String, inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard let value = arguments.popFirst() else { throw UsageError(message: "missing value for '\(name)'") }
        return value
    }

    enum Token {
        case option(String, inline: String?)
        case positional(String)
    }
}

/// The agent's own options, which every subcommand that looks at the agent's directories accepts with the same
/// meaning (DESIGN.md: inboxctl sees exactly what the agent sees).
struct AgentOptions {
    var overrides = SettingsOverrides()

    static let names: Set<String> = ["--config", "--handlers", "--state", "--runtime-dir", "--defaults", "--inbox"]

    static let help = help(omitting: [])

    /// The help lines of the agent's options, without those a command declares itself (`--inbox` where it names the
    /// Inbox to send to).
    static func help(omitting names: Set<String>) -> String {
        let lines: [(option: String, meaning: String)] = [
            ("--config FILE", "The agent's configuration (default /etc/inboxd/inboxd.conf when present)"),
            ("--inbox DIR", "A drop Inbox (repeatable; as the agent's --inbox)"),
            ("--handlers DIR", "Registrations from DIR (repeatable; replaces the search path)"),
            ("--state DIR", "The agent's state directory"),
            ("--runtime-dir DIR", "The agent's runtime directory (its status file)"),
            ("--defaults FILE", "Handler preferences (default /etc/inboxd/defaults.conf)"),
        ]
        var text: [String] = []
        for line in lines {
            let name = String(line.option.prefix { $0 != " " })
            if !names.contains(name) { text.append("  " + line.option.padding(to: 22) + "  " + line.meaning) }
        }
        return text.joined(separator: "\n")
    }

    /// Takes one of the agent's options; false if `name` is not one.
    mutating func take(_ name: String, inline: String?, from scanner: inout OptionScanner) throws(OptionScanner.UsageError) -> Bool {
        guard Self.names.contains(name) else { return false }
        let value = try scanner.value(for: name, inline: inline)
        switch name {
        case "--config": overrides.config = value
        case "--inbox": overrides.inboxes.append(value)
        case "--handlers": overrides.handlers.append(value)
        case "--state": overrides.state = value
        case "--runtime-dir": overrides.runtimeDirectory = value
        default: overrides.defaults = value
        }
        return true
    }

    /// The settings the agent would run with; problems in inboxd.conf are printed as `file:line: message`.
    func settings() -> AgentSettings? {
        let (settings, diagnostics) = SettingsResolver.resolve(overrides)
        for diagnostic in diagnostics { Inboxctl.write(diagnostic.description + "\n", to: 2) }
        switch settings {
        case .success(let settings): return settings
        case .failure(let error):
            Inboxctl.write("inboxctl: \(error)\n", to: 2)
            return nil
        }
    }
}

extension AgentSettings {
    /// The drop Inbox a file goes to: `given` (`--inbox`), else the agent's first; nil after saying why not.
    func openDropInbox(_ given: String?) -> Directory? {
        guard let path = given ?? inboxes.first else {
            Inboxctl.write("inboxctl: no drop Inbox is configured; give one with --inbox\n", to: 2)
            return nil
        }
        do { return try Directory(path: path) } catch {
            Inboxctl.write("inboxctl: cannot open the Inbox: \(error)\n", to: 2)
            return nil
        }
    }
}
