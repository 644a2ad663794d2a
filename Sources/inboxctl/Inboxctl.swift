import Glibc
import InboxCore
import InboxSystem

enum Inboxctl {
    static let usage = "inboxctl <subcommand> [options]"

    static let help = """
        OVERVIEW: Control and inspect inboxd.

        USAGE: \(usage)

        OPTIONS:
          -h, --help              Show help information

        SUBCOMMANDS:
          verify                  Check registration and configuration files

          See 'inboxctl help <subcommand>' for detailed help.

        """

    static let subcommands = ["verify", "help"]

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
            if topic == "verify" {
                write(VerifyCommand.help, to: 1)
                return 0
            }
            return usageError("unknown subcommand '\(topic)'", suggestion: closest(topic))
        case "verify":
            return VerifyCommand.run(rest)
        default:
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
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
        }
    }
}
