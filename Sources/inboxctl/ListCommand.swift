import InboxCore
import InboxSystem

/// `inboxctl list failed|unhandled [--json]`: what the agent holds aside, each file with why, since when, its
/// delivery id and the command that sends it again. `inboxctl list --mine`: what became of this user's own files.
enum ListCommand: InboxctlCommand {
    static let name = "list"
    static let summary = "List the files in failed/ or unhandled/, or your own"
    static let usage = "inboxctl list failed|unhandled|pending|--mine [--json]"

    static let help = """
        OVERVIEW: List the files the agent holds in failed/ or unhandled/.

        One line per file: its name, how long it has been there, its delivery id (the journal's
        INBOX_DELIVERY_ID) and why it is there: the agent's failure record for failed/, the type
        no handler takes for unhandled/. Then the command that sends a file again (inboxctl
        retry, with the options given here). Files in unhandled/ are also dispatched by
        themselves once a registration for their type appears. A package document (a directory
        held whole) is listed as NAME/, its reason starting with 'package', its entries and its
        bytes; a directory that is no package, moved aside, as NAME/ with no command to send it.

        pending: the files waiting for a person to choose their handler (ChooseHandler=ask), each
        with its candidates, best first, and how long it has waited; 'inboxctl choose' chooses.

        With --mine, the files you sent, as the agent tells each sender of their own (and no one
        else): one line per file with its state (queued, waiting for a retry, running, done,
        failed, unhandled, refused), since when, its handler and delivery id, and why. Done files
        are the agent's recent memory of them, at most 100 per sender. This needs no access to
        failed/ or unhandled/: the agent keeps the list in its runtime directory, readable by you
        alone.

        USAGE: \(usage)

        ARGUMENTS:
          <WHICH>                 failed, unhandled or pending

        OPTIONS:
          --mine                  Your own files, whatever became of them
          --json                  Print one JSON document
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.flag("--mine"), .flag("--json")], agentOptions: true, positionals: .atMostOne)

    static let places = ["failed", "unhandled", "pending"]

    /// The usage errors that the options one by one cannot show.
    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if parsed.flag("--mine") {
            if let which = parsed.positionals.first {
                throw UsageError(message: "give either WHICH or --mine, not both", token: which, suggestion: nil)
            }
            return
        }
        guard let which = parsed.positionals.first else {
            throw UsageError(message: "missing WHICH (failed, unhandled or pending) or --mine")
        }
        guard places.contains(which) else {
            let close = Spelling.closest(to: which, among: places)
            throw UsageError(message: "unknown list '\(which)'; expected failed, unhandled or pending"
                             + (close.map { "; did you mean '\($0)'?" } ?? ""), token: which, suggestion: close)
        }
    }

    /// One held file as listed.
    struct Item {
        let name: String
        let path: String
        let ageSeconds: Int64
        let deliveryID: String?
        let reason: String
        /// nil for a directory that is no package: moved aside, never sent again.
        let retry: String?
        var kind = Kind.file
        /// A package's entries and bytes, when it could be walked.
        var package: PackageSummary?

        enum Kind { case file, package, directory }

        /// The name as listed: a directory's with a trailing '/'.
        var shownName: String { kind == .file ? name : name + "/" }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let resolved = parsed.agent.resolve() else { return 1 }
        if parsed.flag("--mine") { return mine(resolved, json: parsed.flag("--json")) }
        let which = parsed.positionals[0]
        if which == "pending" {
            return PendingFiles.list(resolved, json: parsed.flag("--json"), suffix: agentArguments(parsed))
        }
        let settings = resolved.settings
        let paths = StateDirectories.paths(of: settings.stateDirectory)
        let directoryPath = which == "failed" ? paths.failed : paths.unhandled
        // The agent's own directory, closed to its senders: saying it is empty would hide their files in it.
        do { _ = try Directory(path: directoryPath) } catch where error.errno == .permissionDenied {
            Inboxctl.write("inboxctl: cannot read \(which)/ (\(directoryPath)): \(error.errno); it is the agent's "
                           + "(uid \(resolved.agentUID)): 'inboxctl list --mine' shows your own files\n", to: 2)
            return 1
        } catch {}
        let state = try? StateDirectories(existing: settings.stateDirectory)
        let directory = which == "failed" ? state?.failed : state?.unhandled
        let held = state.map { HeldFiles($0) }
        let entries = held?.entries(in: directory) ?? []
        // The type of a file in unhandled/ is worked out as the agent did (libmagic in process, as `info` does).
        let inspection = which == "unhandled" && !entries.isEmpty ? Inspection(settings) : nil
        let now = WallClock.now
        let suffix = agentArguments(parsed)
        let items = entries.map { entry in
            item(entry, which: which, inspection: inspection, now: now, retrySuffix: suffix, limits: settings.packageLimits)
        }
        // What could not even be moved aside into failed/ is still where it was dropped: listed with failed/.
        let left = which == "failed" ? state.map { LeftInPlace.read(from: $0.root) } ?? [] : []
        if parsed.flag("--json") {
            var text = json(which: which, directory: directoryPath, items: items)
            if which == "failed" { text = String(text.dropLast()) + ",\"leftInPlace\":" + leftJSON(left) + "}" }
            Inboxctl.write(text + "\n", to: 1)
            return 0
        }
        Inboxctl.write(render(which: which, directory: directoryPath, items: items) + renderLeft(left, now: now), to: 1)
        // An empty list may be the wrong instance's: say which this is, and how to look at the other.
        if items.isEmpty && left.isEmpty { Inboxctl.write(resolved.hint("inboxctl list \(which)"), to: 1) }
        return 0
    }

    /// The entries left in place (`LeftInPlace`), after failed/'s files.
    static func renderLeft(_ left: [LeftInPlace.Entry], now: Int64) -> String {
        guard !left.isEmpty else { return "" }
        let rows = left.map { [$0.path, $0.kind, age(max(0, (now - $0.sinceUSec) / 1_000_000)), $0.reason] }
        let header = ["PATH", "KIND", "AGE", "REASON"]
        let widths = (0..<3).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        let line = { (row: [String]) in
            (0..<3).map { row[$0].padding(to: widths[$0]) }.joined(separator: "  ") + "  " + row[3] + "\n"
        }
        return "\nLeft in place, not moved aside: \(left.count) entr\(left.count == 1 ? "y" : "ies") (remove each by hand)\n"
            + line(header) + rows.map(line).joined()
    }

    static func leftJSON(_ left: [LeftInPlace.Entry]) -> String {
        "[" + left.map { entry in
            JSONText.object([("path", JSON.quote(entry.path)), ("kind", JSON.quote(entry.kind)),
                             ("reason", JSON.quote(entry.reason)), ("sinceUSec", String(entry.sinceUSec))])
        }.joined(separator: ",") + "]"
    }

    static func item(_ entry: HeldFiles.Entry, which: String, inspection: Inspection?, now: Int64,
                     retrySuffix: String, limits: PackageLimits) -> Item {
        let path = entry.directory.child(entry.name)
        var age: Int64 = 0, id: String?, recorded: String?, chosen: String?
        var kind = Item.Kind.file, package: PackageSummary?
        if case .opened(let file) = entry.directory.openHeld(Array(entry.name.utf8)) {
            defer { file.descriptor.close() }
            if file.isPackage {
                kind = .package
                // Its size is its files' bytes together, as the agent's bounds count them.
                if case .success(let manifest) = PackageTree.check(file.descriptor, limits: limits) {
                    package = PackageSummary(entries: manifest.entryCount, bytes: manifest.totalBytes)
                }
            } else if file.isDirectory {
                kind = .directory
            }
            // The change time: set when the file was moved here (rename) and its failure recorded.
            age = max(0, (now / 1_000_000) - Int64(file.status.st_ctim.tv_sec))
            let attributes = ExtendedAttributes(file.descriptor)
            id = AgentAttribute.delivery(attributes)?.id
            recorded = attributes.readString(AgentAttribute.failure, limit: 4096)
            chosen = attributes.readString(SenderAttribute.handler, limit: MetadataLimits.sourceAppBytes)
        }
        var reason = recorded ?? (which == "failed" ? "no failure recorded" : "no handler for its type")
        if kind == .directory {
            reason = "a directory that is no package document, moved aside (inboxctl discard removes it)"
        }
        if which == "unhandled", recorded == nil, kind != .directory, let inspection {
            // A sender's choice of a handler not registered (yet) waits for that handler, whatever the type.
            if let chosen, inspection.catalog.registration(chosen) == nil {
                reason = "no handler \(chosen) (its sender's choice) is registered"
            } else if case .success(let report) = inspection.inspect(path) {
                reason = "no handler for \(report.resolved.identifier)"
            }
        }
        if kind == .package {
            reason = "package" + (package.map { summary in
                let entries = summary.entries ?? 0
                return ", \(entries) entr\(entries == 1 ? "y" : "ies"), \(summary.bytes ?? 0) bytes"
            } ?? "") + ": " + reason
        }
        let retry = kind == .directory ? nil : "inboxctl retry " + LogCommand.quoted(which + "/" + entry.name) + retrySuffix
        return Item(name: entry.name, path: path, ageSeconds: age, deliveryID: id, reason: reason, retry: retry, kind: kind,
                    package: package)
    }

    /// `--mine`: this user's files, live ones first, then outcomes, the latest first.
    static func mine(_ resolved: AgentOptions.Resolved, json: Bool) -> CInt {
        guard let view = SenderView.read(resolved, command: "inboxctl list --mine") else { return 1 }
        if json {
            Inboxctl.write(SenderView.json(view, files: view.files, instance: resolved.choice.instance), to: 1)
            return 0
        }
        guard !view.files.isEmpty else {
            Inboxctl.write("No files of yours are known (\(SenderView.whose(resolved))).\n" + resolved.hint("inboxctl list --mine"),
                           to: 1)
            return 0
        }
        let now = WallClock.now
        let rows = view.files.map { file in
            [SenderView.shownName(file), file.state.phrase, SenderView.since(file, now: now), file.handler ?? "-",
             file.deliveryID.isEmpty ? "-" : file.deliveryID, SenderView.reason(file, now: now)]
        }
        var text = "Your files (\(SenderView.whose(resolved))): \(view.files.count + view.moreLive)\n"
        text += StatusCommand.table(header: ["NAME", "STATE", "SINCE", "HANDLER", "DELIVERY", "REASON"], rows: rows)
            .joined(separator: "\n") + "\n"
        if view.moreLive > 0 { text += "... and \(view.moreLive) more queued\n" }
        Inboxctl.write(text, to: 1)
        return 0
    }

    /// The agent options given, as they would be given again to `inboxctl retry`.
    static func agentArguments(_ parsed: ParsedOptions) -> String {
        let names = Set(AgentOption.inboxctl.map(\.name))
        return parsed.given.filter { names.contains($0.name) }
            .map { " \($0.name) " + LogCommand.quoted($0.value ?? "") }.joined()
    }

    static func render(which: String, directory: String, items: [Item]) -> String {
        guard !items.isEmpty else { return "\(which)/ (\(directory)) is empty\n" }
        let rows = items.map { [$0.shownName, age($0.ageSeconds), $0.deliveryID ?? "-", $0.reason] }
        let header = ["NAME", "AGE", "DELIVERY", "REASON"]
        let widths = (0..<3).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        let line = { (row: [String]) in
            (0..<3).map { row[$0].padding(to: widths[$0]) }.joined(separator: "  ") + "  " + row[3] + "\n"
        }
        var text = "\(which)/ (\(directory)): \(items.count) file\(items.count == 1 ? "" : "s")\n"
        text += line(header) + rows.map(line).joined()
        let retries = items.compactMap(\.retry)
        if !retries.isEmpty { text += "\nTo send one again:\n" + retries.map { "  \($0)\n" }.joined() }
        if which == "unhandled" {
            text += "(A file in unhandled/ is also dispatched by itself once a registration for its type appears.)\n"
        }
        return text
    }

    static func json(which: String, directory: String, items: [Item]) -> String {
        JSONText.object([
            ("list", JSON.quote(which)), ("directory", JSON.quote(directory)),
            ("files", "[" + items.map { item in
                var pairs = [
                    ("name", JSON.quote(item.name)), ("path", JSON.quote(item.path)), ("ageSec", String(item.ageSeconds)),
                    ("deliveryID", item.deliveryID.map(JSON.quote) ?? "null"), ("reason", JSON.quote(item.reason)),
                    ("retry", item.retry.map(JSON.quote) ?? "null"),
                ]
                switch item.kind {
                case .file: break
                case .package:
                    pairs += [("package", "true"), ("entries", item.package?.entries.map { String($0) } ?? "null"),
                              ("bytes", item.package?.bytes.map { String($0) } ?? "null")]
                case .directory: pairs += [("package", "false"), ("directory", "true")]
                }
                return JSONText.object(pairs)
            }.joined(separator: ",") + "]"),
        ])
    }

    /// "42 s", "3 min", "5 h", "2 days": how long, as a person says it.
    static func age(_ seconds: Int64) -> String {
        switch seconds {
        case ..<120: "\(seconds) s"
        case ..<7200: "\(seconds / 60) min"
        case ..<172_800: "\(seconds / 3600) h"
        default: "\(seconds / 86400) days"
        }
    }
}
