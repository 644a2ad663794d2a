import InboxCore
import InboxSystem

/// `inboxctl discard ID`: removes a file the agent holds in failed/ or unhandled/.
enum DiscardCommand: InboxctlCommand {
    static let name = "discard"
    static let summary = "Remove a failed or unhandled file"
    static let usage = "inboxctl discard ID [--json]"

    static let help = """
        OVERVIEW: Remove a failed or unhandled file.

        ID is a file name in failed/ or unhandled/ (failed/NAME or unhandled/NAME when both hold
        one), or a delivery id (32 hex digits, as in the journal's INBOX_DELIVERY_ID). Only regular
        files and directories (a package document, or a directory moved aside) are removed, a
        directory whole, depth first; a link is never followed, another mount never entered.

        USAGE: \(usage)

        ARGUMENTS:
          <ID>                    A file name in failed/ or unhandled/, or a delivery id

        OPTIONS:
          --json                  Print one JSON document: what was removed, or why not
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.flag("--json")], agentOptions: true, positionals: .atMostOne)

    /// The usage errors that the options one by one cannot show.
    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if parsed.positionals.isEmpty { throw UsageError(message: "missing ID") }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let resolved = parsed.agent.resolve(),
              let held = HeldFiles(state: resolved.settings.stateDirectory, hint: resolved.hint("inboxctl discard")),
              let entries = held.find(parsed.positionals[0]) else { return 1 }
        let json = parsed.flag("--json")
        var status: CInt = 0
        var removed: [String] = [], failed: [String] = []
        for entry in entries {
            let name = Array(entry.name.utf8)
            let path = entry.directory.child(entry.name)
            // lstat, then unlinkat: a name swapped for a link in between is itself removed, never what it points to.
            let kind = (try? entry.directory.status(of: name))?.map { EntryKind(mode: $0.st_mode) }
            guard kind == .regular || kind == .directory else {
                Inboxctl.write("inboxctl: \(path) is not a regular file or a package; left in place\n", to: 2)
                failed.append(JSONText.object([("path", JSON.quote(path)),
                                               ("error", JSON.quote("not a regular file or a package"))]))
                status = 1
                continue
            }
            // A package (or a directory moved aside) goes whole, depth first by descriptor: nothing in it is followed,
            // and nothing on another mount is touched.
            if let error = kind == .directory ? PackageTree.remove(name, in: entry.directory) : entry.directory.remove(name) {
                Inboxctl.write("inboxctl: cannot remove \(path): \(error)\n", to: 2)
                failed.append(JSONText.object([("path", JSON.quote(path)), ("error", JSON.quote(error.description))]))
                status = 1
            } else {
                entry.directory.removeSidecar(of: name)
                if !json { Inboxctl.write("removed \(path)\n", to: 1) }
                removed.append(JSON.quote(path))
            }
        }
        if json {
            Inboxctl.write(JSONText.object([("removed", "[" + removed.joined(separator: ",") + "]"),
                                            ("failed", "[" + failed.joined(separator: ",") + "]")]) + "\n", to: 1)
        }
        return status
    }
}
