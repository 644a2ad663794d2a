import Glibc
import InboxCore
import InboxSystem

/// One subcommand: its name, the line `inboxctl --help` shows, its usage line and help, what it accepts on its command
/// line (and what else must hold of it), and what runs it once that is parsed.
struct Subcommand: Sendable {
    let name: String
    let summary: String
    let usage: String
    let help: String
    let options: CommandOptions
    var check: @Sendable (ParsedOptions) throws(OptionScanner.UsageError) -> Void = { _ in }
    let run: @Sendable (ParsedOptions) -> CInt

    /// Parses `arguments`: help is printed (0), a usage error reported (2), else the command runs.
    func callAsFunction(_ arguments: [String]) -> CInt {
        switch options.parse(arguments, check: check) {
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

enum Inboxctl {
    static let usage = "inboxctl <subcommand> [options]"

    /// Every subcommand, in the order `inboxctl --help` lists them.
    static let commands: [Subcommand] = [
        Subcommand(name: "verify", summary: "Check registration and configuration files", usage: VerifyCommand.usage, help: VerifyCommand.help,
                   options: VerifyCommand.options, run: VerifyCommand.run),
        Subcommand(name: "types", summary: "Show the types the agent knows and how they conform", usage: TypesCommand.usage, help: TypesCommand.help,
                   options: TypesCommand.options, run: TypesCommand.run),
        Subcommand(name: "info", summary: "Show a file's type and the handler it would get", usage: InfoCommand.usage, help: InfoCommand.help,
                   options: InfoCommand.options, check: InfoCommand.check, run: InfoCommand.run),
        Subcommand(name: "handlers", summary: "List handlers, or those that would open a file or type", usage: HandlersCommand.usage, help: HandlersCommand.help,
                   options: HandlersCommand.options, check: HandlersCommand.check, run: HandlersCommand.run),
        Subcommand(name: "status", summary: "Show what the agent is doing", usage: StatusCommand.usage, help: StatusCommand.help,
                   options: StatusCommand.options, run: StatusCommand.run),
        Subcommand(name: "send", summary: "Send files to their handlers through a drop Inbox", usage: SendCommand.usage, help: SendCommand.help,
                   options: SendCommand.options, check: SendCommand.check, run: SendCommand.run),
        Subcommand(name: "open", summary: "Send files to a handler of your choice", usage: OpenCommand.usage, help: OpenCommand.help,
                   options: OpenCommand.options, check: OpenCommand.check, run: OpenCommand.run),
        Subcommand(name: "preview", summary: "Show files with a viewer, read-only", usage: PreviewCommand.usage, help: PreviewCommand.help,
                   options: PreviewCommand.options, check: PreviewCommand.check, run: PreviewCommand.run),
        Subcommand(name: "retry", summary: "Send a failed or unhandled file to its handler again", usage: RetryCommand.usage, help: RetryCommand.help,
                   options: RetryCommand.options, check: RetryCommand.check, run: RetryCommand.run),
        Subcommand(name: "discard", summary: "Remove a failed or unhandled file", usage: DiscardCommand.usage, help: DiscardCommand.help,
                   options: DiscardCommand.options, check: DiscardCommand.check, run: DiscardCommand.run),
        Subcommand(name: "log", summary: "Show the journal entries of a handler, file or delivery", usage: LogCommand.usage, help: LogCommand.help,
                   options: LogCommand.options, check: LogCommand.check, run: LogCommand.run),
    ]

    static var help: String {
        let lines = commands.map { "  " + $0.name.padding(to: 22) + "  " + $0.summary }.joined(separator: "\n")
        return """
            OVERVIEW: Control and inspect inboxd.

            USAGE: \(usage)

            OPTIONS:
              -h, --help              Show help information

            SUBCOMMANDS:
            \(lines)

              See 'inboxctl help <subcommand>' for detailed help.

            """
    }

    static var subcommands: [String] { commands.map(\.name) + ["help"] }

    /// Runs one command line; returns the exit status (0 success, 1 failure, 2 usage).
    static func run(_ arguments: [String]) -> CInt {
        guard let first = arguments.first else {
            write(help, to: 1)
            return 0
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help":
            write(help, to: 1)
            return 0
        case "help":
            guard let topic = rest.first else {
                write(help, to: 1)
                return 0
            }
            if let command = commands.first(where: { $0.name == topic }) {
                write(command.help, to: 1)
                return 0
            }
            return usageError("unknown subcommand '\(topic)'", suggestion: closest(topic))
        default:
            if let command = commands.first(where: { $0.name == first }) { return command(rest) }
            return usageError(first.hasPrefix("-") ? "unknown option '\(first)'" : "unknown subcommand '\(first)'",
                              suggestion: first.hasPrefix("-") ? nil : closest(first))
        }
    }

    static func usageError(_ message: String, suggestion: String? = nil, usage: String = usage,
                           helpCommand: String = "inboxctl --help") -> CInt {
        var text = "Error: \(message)"
        if let suggestion { text += "; did you mean '\(suggestion)'?" }
        text += "\nUsage: \(usage)\n  See '\(helpCommand)'.\n"
        write(text, to: 2)
        return 2
    }

    static func closest(_ word: String) -> String? {
        Spelling.closest(to: word, among: subcommands)
    }

    static func write(_ text: String, to fd: CInt) {
        _ = Array(text.utf8).withUnsafeBytes { FileDescriptor(rawValue: fd).write(all: $0) }
    }
}

extension String {
    /// The string padded with spaces to `width` characters (unchanged when longer).
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
