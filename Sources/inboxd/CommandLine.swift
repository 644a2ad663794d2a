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

    struct UsageError: Error { let message: String }

    static let usage = "inboxd [--config FILE] [--inbox DIR]... [--handlers DIR]... [--state DIR] [--runtime-dir DIR] [--defaults FILE] [--max-concurrent N] [--log-target auto|journal|stderr] [--log-level info|debug]"

    static let help = """
        OVERVIEW: Deliver files dropped in an Inbox to the handler registered for their type.

        USAGE: \(usage)

        OPTIONS:
          --config FILE           Agent configuration (default /etc/inboxd/inboxd.conf when present)
          --inbox DIR             Watch DIR as a drop Inbox (repeatable; replaces Inbox= of the config)
          --handlers DIR          Read registrations from DIR (repeatable; replaces the search path)
          --state DIR             State directory: containers/, failed/, unhandled/
          --runtime-dir DIR       Where the status file is kept
          --defaults FILE         Handler preferences (default /etc/inboxd/defaults.conf)
          --max-concurrent N      Handlers running at once, across all handlers
          --log-target TARGET     auto, journal or stderr (default auto)
          --log-level LEVEL       info or debug (default info)
          --version               Show the version
          -h, --help              Show help information

        """

    static let options: Set<String> = ["--config", "--inbox", "--handlers", "--state", "--runtime-dir", "--defaults",
                                       "--max-concurrent", "--log-target", "--log-level"]

    static func parse(_ arguments: [String]) throws(UsageError) -> AgentCommandLine {
        var result = AgentCommandLine()
        var index = 0
        while index < arguments.count {
            let token = arguments[index]
            index += 1
            if token == "-h" || token == "--help" { result.help = true; continue }
            if token == "--version" { result.version = true; continue }
            var name = token
            var value: String?
            if let equals = token.firstIndex(of: "="), token.hasPrefix("--") {
                name = String(token[..<equals])
                value = String(token[token.index(after: equals)...])
            }
            guard options.contains(name) else {
                let hint = closest(name).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError(message: token.hasPrefix("-") ? "unknown option '\(name)'\(hint)" : "unexpected argument '\(token)'")
            }
            if value == nil {
                guard index < arguments.count else { throw UsageError(message: "missing value for '\(name)'") }
                value = arguments[index]
                index += 1
            }
            let text = value!
            switch name {
            case "--config": result.config = try path(text, name)
            case "--inbox": result.inboxes.append(try path(text, name))
            case "--handlers": result.handlers.append(try path(text, name))
            case "--state": result.state = try path(text, name)
            case "--runtime-dir": result.runtimeDirectory = try path(text, name)
            case "--defaults": result.defaults = try path(text, name)
            case "--max-concurrent":
                guard let n = Int(text), n > 0, n <= 4096 else {
                    throw UsageError(message: "invalid value '\(text)' for '--max-concurrent': expected an integer from 1 to 4096")
                }
                result.maxConcurrent = n
            case "--log-target":
                guard let target = LogTarget(rawValue: text) else {
                    throw UsageError(message: "invalid value '\(text)' for '--log-target': expected auto, journal or stderr")
                }
                result.logTarget = target
            case "--log-level":
                switch text {
                case "info": result.logLevel = .info
                case "debug": result.logLevel = .debug
                default: throw UsageError(message: "invalid value '\(text)' for '--log-level': expected info or debug")
                }
            default: break
            }
        }
        return result
    }

    private static func path(_ text: String, _ option: String) throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError(message: "empty value for '\(option)'") }
        return text.hasPrefix("/") ? text : (ProcessEnvironment.currentDirectory() ?? "/") + "/" + text
    }

    /// A known option within two edits of a mistyped one.
    static func closest(_ name: String) -> String? {
        Spelling.closest(to: name, among: options.union(["--help", "--version"]))
    }
}
