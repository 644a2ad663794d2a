import InboxCore
import InboxSystem

/// `inboxctl choose FILE [--with ID]`: the list AirDrop shows when several apps could open a file. A file dropped in
/// an Inbox with `ChooseHandler=ask` waits in pending/; the choice is written on it (`user.inboxd.choice`), and the
/// agent, which watches pending/ for that, delivers it. `inboxctl list pending` shows what waits (`PendingFiles`).
enum ChooseCommand: InboxctlCommand {
    static let name = "choose"
    static let summary = "Choose the handler of a file waiting in pending/"
    static let usage = "inboxctl choose FILE [--with ID]"

    static let help = """
        OVERVIEW: Choose the handler of a file waiting in pending/.

        A file dropped into an Inbox with ChooseHandler=ask in inboxd.conf, which more than one
        handler could open, waits in pending/ until a person chooses ('inboxctl list pending'
        shows each with its candidates, best first). FILE is its name there, pending/NAME, its
        path or its delivery id. With --with, ID must be one of its candidates: otherwise nothing
        is recorded, the candidates are listed and the exit status is 1. Without --with, on a
        terminal, the candidates are numbered: press a candidate's key to choose, q or Escape to
        leave the file waiting (exit status 1). The agent delivers the file to the chosen handler at once
        (INBOX_CHOSEN_BY=person). Only root or the agent's own user may choose.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file waiting in pending/

        OPTIONS:
          --with ID               The handler to deliver it to
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.value("--with")], agentOptions: true, positionals: .atMostOne)

    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        guard !parsed.positionals.isEmpty else { throw UsageError(message: "missing FILE") }
        if let handler = parsed.value("--with") {
            guard HandlerIdentifier.isValid(handler) else {
                throw UsageError(message: "invalid handler identifier '\(handler)'", token: handler, suggestion: nil)
            }
        } else if !TerminalMenu.available {
            throw UsageError(message: "missing '--with ID' (not on a terminal, so no list to choose from)")
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let resolved = parsed.agent.resolve() else { return 1 }
        let uid = CurrentProcess.effectiveUserID
        guard uid == 0 || uid == resolved.agentUID else {
            Inboxctl.write("inboxctl: only root or the agent's own user (uid \(resolved.agentUID)) may choose a "
                           + "handler for a file it holds\n", to: 2)
            return 1
        }
        guard let files = PendingFiles(resolved), let inspection = Inspection(resolved.settings) else { return 1 }
        guard let entry = files.find(parsed.positionals[0]) else { return 1 }
        let item = files.item(entry, inspection: inspection, now: WallClock.now)
        guard !item.candidates.isEmpty else {
            Inboxctl.write("inboxctl: no handler can open \(item.name) any more; the agent routes it again by itself\n",
                           to: 2)
            return 1
        }
        let chosen: String
        if let handler = parsed.value("--with") {
            guard item.candidates.contains(handler) else {
                Inboxctl.write("inboxctl: \(handler) is not a candidate for \(item.name) (\(item.type)); its "
                               + "candidates, best first:\n" + item.candidates.map { "  \($0)\n" }.joined(), to: 2)
                return 1
            }
            chosen = handler
        } else {
            guard let picked = menu(item) else { return 1 }
            chosen = picked
        }
        guard case .opened(let file) = entry.directory.openRegular(Array(entry.name.utf8)) else {
            Inboxctl.write("inboxctl: \(item.name) is no longer in pending/\n", to: 2)
            return 1
        }
        defer { file.descriptor.close() }
        if let error = ExtendedAttributes(file.descriptor).write(AgentAttribute.choice, chosen) {
            Inboxctl.write("inboxctl: cannot record the choice on \(item.path): \(error)\n", to: 2)
            return 1
        }
        Inboxctl.write("Chose \(chosen) for \(item.name); the agent delivers it now.\n", to: 1)
        return 0
    }

    /// The numbered list on the terminal (TerminalMenu): a key chooses, q (or Escape, Ctrl-C) leaves the file waiting.
    static func menu(_ item: PendingFiles.Item) -> String? {
        let rows = item.candidates.enumerated().map { index, handler in handler + (index == 0 ? "  (best-ranked)" : "") }
        let menu = TerminalMenu(title: "\(item.name) (\(item.type)) could go to:", rows: rows, leave: "leave it waiting",
                                left: "Left waiting.")
        return menu.choose().map { item.candidates[$0] }
    }
}

/// What waits in `<state>/pending/`, found by name, path or delivery id, with its candidates as the agent ranks them.
struct PendingFiles {
    struct Item {
        let name: String
        let path: String
        let type: String
        let deliveryID: String?
        /// Best first.
        let candidates: [String]
        let sinceUSec: Int64
        let waitingSeconds: Int64
        /// A choice recorded and not yet acted on.
        let choice: String?
    }

    let pending: Directory?
    let directoryPath: String

    /// nil, after saying why, when pending/ cannot be read (it is the agent's).
    init?(_ resolved: AgentOptions.Resolved) {
        directoryPath = resolved.settings.stateDirectory + "/" + StateDirectories.pendingName
        do { _ = try Directory(path: directoryPath) } catch where error.errno == .permissionDenied {
            Inboxctl.write("inboxctl: cannot read pending/ (\(directoryPath)): \(error.errno); it is the agent's "
                           + "(uid \(resolved.agentUID))\n", to: 2)
            return nil
        } catch {}
        pending = (try? StateDirectories(existing: resolved.settings.stateDirectory))?.pending
    }

    var entries: [HeldFiles.Entry] {
        guard let pending, let names = try? pending.entries() else { return [] }
        return names.filter { !FileNames.isHidden($0) }.compactMap { String(validating: $0, as: UTF8.self) }.sorted()
            .map { HeldFiles.Entry(directory: pending, name: $0) }
    }

    /// The entry `id` names (NAME, pending/NAME, its path, or a delivery id); nil after listing what waits.
    func find(_ id: String) -> HeldFiles.Entry? {
        var name = id
        if name.hasPrefix(directoryPath + "/") { name = String(name.dropFirst(directoryPath.count + 1)) }
        if name.hasPrefix("pending/") { name = String(name.dropFirst("pending/".count)) }
        let all = entries
        if let entry = all.first(where: { $0.name == name }) { return entry }
        if let wanted = AgentAttribute.validDeliveryID(id.lowercased()) {
            let byID = all.first { entry in
                guard case .opened(let file) = entry.directory.openRegular(Array(entry.name.utf8)) else { return false }
                defer { file.descriptor.close() }
                return AgentAttribute.delivery(ExtendedAttributes(file.descriptor))?.id == wanted
            }
            if let byID { return byID }
        }
        Inboxctl.write("inboxctl: no file or delivery '\(id)' waits in pending/ (\(directoryPath))"
                       + (all.isEmpty ? "; nothing waits\n" : "; there are:\n" + all.prefix(10).map { "  \($0.name)\n" }.joined()),
                       to: 2)
        return nil
    }

    /// The entry as the agent sees it: typed as it was dropped, ranked among the handlers of the Inbox it came from.
    func item(_ entry: HeldFiles.Entry, inspection: Inspection, now: Int64) -> Item {
        let path = entry.directory.child(entry.name)
        var id: String?, recordedName: String?, recordedInbox: String?, since: Int64 = now, choice: String?
        if case .opened(let file) = entry.directory.openRegular(Array(entry.name.utf8)) {
            defer { file.descriptor.close() }
            let attributes = ExtendedAttributes(file.descriptor)
            let delivery = AgentAttribute.delivery(attributes)
            id = delivery?.id
            recordedName = delivery?.name
            recordedInbox = attributes.readString(AgentAttribute.inbox, limit: 4096)
            choice = attributes.readString(AgentAttribute.choice, limit: 256)
            since = attributes.readString(AgentAttribute.waiting, limit: 32).flatMap(Int64.init)
                ?? Int64(file.status.st_ctim.tv_sec) * 1_000_000
        }
        var type = "?", candidates: [String] = []
        if case .success(let report) = inspection.inspect(path) {
            type = report.resolved.identifier
            let catalog = inspection.catalog
            let subject = Routing.Subject(type: type, name: catalog.hasNamePatterns ? (recordedName ?? entry.name) : nil,
                                          binding: recordedInbox.flatMap { catalog.binding(forInbox: $0) })
            candidates = catalog.candidates(for: subject).candidates.map(\.handler)
        }
        return Item(name: entry.name, path: path, type: type, deliveryID: id, candidates: candidates, sinceUSec: since,
                    waitingSeconds: max(0, (now - since) / 1_000_000), choice: choice)
    }

    /// `inboxctl list pending [--json]`.
    static func list(_ resolved: AgentOptions.Resolved, json: Bool, suffix: String) -> CInt {
        guard let files = PendingFiles(resolved) else { return 1 }
        let entries = files.entries
        let inspection = entries.isEmpty ? nil : Inspection(resolved.settings)
        if !entries.isEmpty && inspection == nil { return 1 }
        let now = WallClock.now
        let items = inspection.map { inspection in entries.map { files.item($0, inspection: inspection, now: now) } } ?? []
        if json {
            Inboxctl.write(JSONText.object([
                ("list", JSON.quote("pending")), ("directory", JSON.quote(files.directoryPath)),
                ("files", "[" + items.map { item in
                    JSONText.object([
                        ("name", JSON.quote(item.name)), ("path", JSON.quote(item.path)),
                        ("contentType", JSON.quote(item.type)),
                        ("deliveryID", item.deliveryID.map(JSON.quote) ?? "null"),
                        ("waitingSinceUSec", String(item.sinceUSec)), ("waitingSec", String(item.waitingSeconds)),
                        ("candidates", "[" + item.candidates.map(JSON.quote).joined(separator: ",") + "]"),
                        ("choice", item.choice.map(JSON.quote) ?? "null"),
                        ("choose", JSON.quote("inboxctl choose " + LogCommand.quoted("pending/" + item.name) + suffix
                                              + " --with ID")),
                    ])
                }.joined(separator: ",") + "]"),
            ]) + "\n", to: 1)
            return 0
        }
        guard !items.isEmpty else {
            Inboxctl.write("pending/ (\(files.directoryPath)) is empty\n" + resolved.hint("inboxctl list pending"), to: 1)
            return 0
        }
        let rows = items.map { item in
            [item.name, ListCommand.age(item.waitingSeconds), item.deliveryID ?? "-",
             item.candidates.isEmpty ? "(none now)" : item.candidates.joined(separator: ", ")]
        }
        var text = "pending/ (\(files.directoryPath)): \(items.count) file\(items.count == 1 ? "" : "s") waiting for a choice\n"
        text += StatusCommand.table(header: ["NAME", "WAITING", "DELIVERY", "CANDIDATES (BEST FIRST)"], rows: rows)
            .joined(separator: "\n") + "\n"
        text += "\nTo choose:\n" + items.map {
            "  inboxctl choose " + LogCommand.quoted("pending/" + $0.name) + suffix + " --with ID\n"
        }.joined()
        Inboxctl.write(text, to: 1)
        return 0
    }
}
