import Glibc
import InboxCore
import InboxSystem

/// `inboxctl discard ID`: removes a file the agent holds in failed/ or unhandled/.
enum DiscardCommand {
    static let usage = "inboxctl discard ID"

    static let help = """
        OVERVIEW: Remove a failed or unhandled file.

        ID is a file name in failed/ or unhandled/ (failed/NAME or unhandled/NAME when both hold
        one), or a delivery id (32 hex digits, as in the journal's INBOX_DELIVERY_ID). Only regular
        files are removed; a link is never followed.

        USAGE: \(usage)

        ARGUMENTS:
          <ID>                    A file name in failed/ or unhandled/, or a delivery id

        OPTIONS:
          --state DIR             The agent's state directory
          --config FILE           The agent's configuration (default /etc/inboxd/inboxd.conf when present)
          -h, --help              Show help information

        """

    static func run(_ arguments: [String]) -> CInt {
        var id: String?
        var agent = AgentOptions()
        var scanner = OptionScanner(arguments)
        do throws(OptionScanner.UsageError) {
            while let token = scanner.next() {
                switch token {
                case .option("-h", _), .option("--help", _):
                    Inboxctl.write(help, to: 1)
                    return 0
                case .option(let name, let inline):
                    if try agent.take(name, inline: inline, from: &scanner) { continue }
                    throw OptionScanner.UsageError.unknownOption(name, known: ["--state", "--config", "--help"])
                case .positional(let value):
                    guard id == nil else { throw OptionScanner.UsageError(message: "unexpected argument '\(value)'") }
                    id = value
                }
            }
            guard id != nil else { throw OptionScanner.UsageError(message: "missing ID") }
        } catch {
            return Inboxctl.usageError(error.message, usage: usage, helpCommand: "inboxctl help discard")
        }
        guard let settings = agent.settings(), let held = HeldFiles(state: settings.stateDirectory),
              let entries = held.find(id ?? "") else { return 1 }
        var status: CInt = 0
        for entry in entries {
            let name = Array(entry.name.utf8)
            let path = entry.directory.child(entry.name)
            // lstat, then unlinkat: a name swapped for a link in between is itself removed, never what it points to.
            guard let st = try? entry.directory.status(of: name), st.st_mode & S_IFMT == S_IFREG else {
                Inboxctl.write("inboxctl: \(path) is not a regular file; left in place\n", to: 2)
                status = 1
                continue
            }
            if let error = entry.directory.remove(name) {
                Inboxctl.write("inboxctl: cannot remove \(path): \(error)\n", to: 2)
                status = 1
            } else {
                Inboxctl.write("removed \(path)\n", to: 1)
            }
        }
        return status
    }
}
