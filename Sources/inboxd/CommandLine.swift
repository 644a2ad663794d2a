import InboxCore
import InboxSystem

/// `inboxd` flags, tokenized separately from what they mean.
struct AgentCommandLine {
    var config: String?
    var inboxes: [String] = []
    var handlers: [String] = []
    var state: String?
    var runtimeDirectory: String?
    var defaults: String?
    var maxConcurrent: Int?
    var logTarget: LogTarget?
    var logLevel: LogPriority?
    var help = false
    var version = false

    static let usage = "inboxd [--config FILE] [--inbox DIR]... [--handlers DIR]... [--state DIR] [--runtime-dir DIR] [--defaults FILE] [--max-concurrent N] [--log-target auto|journal|stderr] [--log-level info|debug]"

    static let options = CommandOptions([.flag("--version"), .flag("--help", "-h")],
                                        agentOptions: AgentOption.allCases, positionals: .none)

    static let help = """
        OVERVIEW: Deliver files dropped in an Inbox to the handler registered for their type.

        USAGE: \(usage)

        OPTIONS:
        \(AgentOption.allCases.map { $0.option.helpLine($0.agentHelp) }.joined(separator: "\n"))
        \(CommandOption.helpLine("--version", "Show the version"))
        \(CommandOption.helpOptionLine)

        """

    /// The flags in `arguments`; each value is checked in command-line order, after the scan has found no unknown
    /// option, missing value or stray argument.
    static func parse(_ arguments: [String]) throws(UsageError) -> AgentCommandLine {
        var result = AgentCommandLine()
        // `--help` is declared, so it is a flag like `--version` and the scan never returns nil for help.
        guard let parsed = try options.scan(arguments) else {
            result.help = true
            return result
        }
        result.help = parsed.flag("--help")
        result.version = parsed.flag("--version")
        for given in parsed.given {
            guard let option = AgentOption(rawValue: given.name), let text = given.value else { continue }
            let name = option.name
            switch option {
            case .config: result.config = try path(text, name)
            case .inbox: result.inboxes.append(try path(text, name))
            case .handlers: result.handlers.append(try path(text, name))
            case .state: result.state = try path(text, name)
            case .runtimeDirectory: result.runtimeDirectory = try path(text, name)
            case .defaults: result.defaults = try path(text, name)
            case .maxConcurrent:
                guard let n = Int(text), n > 0, n <= 4096 else {
                    throw UsageError(message: "invalid value '\(text)' for '--max-concurrent': expected an integer from 1 to 4096")
                }
                result.maxConcurrent = n
            case .logTarget:
                guard let target = LogTarget(rawValue: text) else {
                    throw UsageError(message: "invalid value '\(text)' for '--log-target': expected auto, journal or stderr")
                }
                result.logTarget = target
            case .logLevel:
                switch text {
                case "info": result.logLevel = .info
                case "debug": result.logLevel = .debug
                default: throw UsageError(message: "invalid value '\(text)' for '--log-level': expected info or debug")
                }
            }
        }
        return result
    }

    private static func path(_ text: String, _ option: String) throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError(message: "empty value for '\(option)'") }
        return text.hasPrefix("/") ? text : (CurrentProcess.workingDirectory ?? "/") + "/" + text
    }
}
