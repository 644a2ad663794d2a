import InboxCore
import InboxSystem

enum Inboxctl {
    static let usage = "inboxctl <subcommand> [options]"

    /// Every subcommand, in the order `inboxctl --help` lists them.
    static let commands: [any InboxctlCommand.Type] = [
        VerifyCommand.self, TypesCommand.self, InfoCommand.self, HandlersCommand.self, StatusCommand.self,
        MetricsCommand.self, SendCommand.self, OpenCommand.self, ChooseCommand.self, OptionsCommand.self, PreviewCommand.self,
        ThumbnailCommand.self, PrintCommand.self, ListCommand.self, RetryCommand.self, DiscardCommand.self,
        LogCommand.self,
    ]

    static var help: String {
        let lines = commands.map { CommandOption.helpLine($0.name, $0.summary) }.joined(separator: "\n")
        return """
            OVERVIEW: Control and inspect inboxd.

            USAGE: \(usage)

            OPTIONS:
              --version               Show the version
              -h, --help              Show help information

            SUBCOMMANDS:
            \(lines)

              See 'inboxctl help <subcommand>' for detailed help.

            """
    }

    static var subcommands: [String] { commands.map { $0.name } + ["help"] }

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
        case "--version" where rest.isEmpty:
            write("inboxctl \(inboxdVersion)\n", to: 1)
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
            return usageError(UsageError.unknownSubcommand(topic, known: subcommands).message)
        default:
            if let command = commands.first(where: { $0.name == first }) { return command.main(rest) }
            // Before the subcommand only -h, --help and --version are options.
            let error = first.hasPrefix("-") ? UsageError.unknownOption(first, known: ["--help", "--version"])
                : UsageError.unknownSubcommand(first, known: subcommands)
            return usageError(error.message)
        }
    }

    /// Reports a usage error as swift-argument-parser does, on stderr; returns its exit status, 2.
    static func usageError(_ message: String, usage: String = usage, helpCommand: String = "inboxctl --help") -> CInt {
        write("Error: \(message)\nUsage: \(usage)\n  See '\(helpCommand)'.\n", to: 2)
        return 2
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
