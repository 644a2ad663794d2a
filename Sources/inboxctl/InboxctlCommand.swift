import InboxCore

/// One subcommand: its name and the line `inboxctl --help` shows for it, its usage line and help, what it accepts on
/// its command line (and what else must hold of it), and what runs it once that is parsed.
protocol InboxctlCommand: Sendable {
    static var name: String { get }
    static var summary: String { get }
    static var usage: String { get }
    static var help: String { get }
    static var options: CommandOptions { get }
    /// The usage errors that the options one by one cannot show; none by default.
    static func check(_ parsed: ParsedOptions) throws(UsageError)
    /// Runs the command; returns its exit status.
    static func run(_ parsed: ParsedOptions) -> CInt
}

extension InboxctlCommand {
    static func check(_ parsed: ParsedOptions) throws(UsageError) {}

    /// Parses `arguments`: help is printed (0), a usage error reported (2), else the command runs.
    static func main(_ arguments: [String]) -> CInt {
        let checks = { (parsed: ParsedOptions) throws(UsageError) in
            try AgentOptions.checkInstance(parsed)
            try check(parsed)
        }
        switch options.parse(arguments, check: checks) {
        case .help:
            Inboxctl.write(help, to: 1)
            return 0
        case .usageError(let error):
            return Inboxctl.usageError(error.message, usage: usage, helpCommand: "inboxctl help \(name)")
        case .parsed(let parsed):
            return run(parsed)
        }
    }
}
