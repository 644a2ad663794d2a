import InboxCore
import InboxSystem

/// The options menu of one file (`inboxctl options`, docs/design.md, The options menu): what can be done with it,
/// each item only when it applies, in the order Quick Look, Open in each candidate, Print, Copy, Send to each other
/// Inbox. Built from the file's type as the agent decides it, without doing anything.
struct OptionsMenu {
    /// One thing the menu offers.
    struct Item {
        /// What it does, as `--do` names it.
        let action: OptionsAction
        let kind: Kind
        /// Its row on the terminal.
        let label: String
        /// What it would do, as one JSON object of `--json`'s `actions`.
        let json: String
    }

    /// What an item does, with what it needs to do it.
    enum Kind {
        /// Quick Look: the registered viewer that would show it (nil: none would), and the built-in generator.
        case quickLook(viewer: String?, generator: PreviewGenerator)
        /// Open in a candidate handler: its place in the Open In list (from 1) and why it is there.
        case open(Candidate, position: Int, reason: String)
        /// Print on a destination, as the plan says (as it is, or converted).
        case print(PrintDestination, PrintPlan)
        /// Copy into a directory.
        case copyInto(String)
        /// Copy onto the session's clipboard, offering these targets.
        case clipboard(DesktopClipboard.Session, targets: [String])
        /// Send into another drop Inbox of the agent's.
        case send(inbox: String)
    }

    /// The file as given, its report and its preferred MIME type (then the sniffed one).
    let file: String
    let report: FileReport
    let mimeTypes: [String]
    let items: [Item]
    /// Why there is no Print, when there is none: no server, no destination, or the plan's answer.
    let printAbsence: String?
    /// What the menu was built with.
    let choices: Choices
    /// The agent's drop Inboxes, and the one the file lies in (if any).
    let inboxes: [String]
    let ownInbox: String?
    /// The handlers registered, for saying why an `open=ID` does not apply.
    let registered: Set<String>

    /// What the menu is built with besides the file: where Copy and Print go (`--to`, `--printer`, or `--do`'s).
    struct Choices {
        var copyDirectory: String?
        var printer: String?
    }

    /// The menu of the file `report` describes, held open as `held`: Open in is decided on the file as `open` sends
    /// it, without its content-type attribute.
    init(file: String, report: FileReport, held: Inspection.HeldDocument, choices: Choices, inspection: Inspection) {
        self.file = file
        self.report = report
        self.choices = choices
        registered = Set(inspection.loaded.registrations.map(\.identifier))
        let type = report.resolved.identifier
        let catalog = inspection.catalog
        var mimeTypes = catalog.database.declaration(for: type)?.mimeTypes ?? []
        if let sniffed = report.sniffed, !mimeTypes.contains(sniffed) { mimeTypes.append(sniffed) }
        self.mimeTypes = mimeTypes
        let chain = catalog.conformanceChain(of: type)
        let package = report.package != nil
        var items: [Item] = []

        // Quick Look: a registered viewer (single files only, as preview does), or a built-in generator with more to
        // show than the facts.
        let viewers = package ? [] : catalog.candidates(for: Routing.Subject(type: type,
                                                                             name: inspection.subject(of: report).name),
                                                      role: .viewer).candidates.map(\.handler)
        let generator = PreviewPlan.generator(chain: chain, mimeTypes: mimeTypes, package: package,
                                              thumbnailers: ThumbnailerDirectories.load().entries)
        let hasGenerator = if case .facts = generator { false } else { true }
        if !viewers.isEmpty || hasGenerator {
            let viewer = viewers.first
            items.append(Item(action: .quickLook, kind: .quickLook(viewer: viewer, generator: generator),
                              label: "Quick Look" + (viewer.map { " with " + OpenInList.display($0, inspection: inspection) }
                                  ?? " (built-in: \(generator.name))"),
                              json: JSONText.object([
                                  ("action", JSON.quote("quicklook")), ("do", JSON.quote("quicklook")),
                                  ("viewer", viewer.map(JSON.quote) ?? "null"),
                                  ("generator", JSON.quote(generator.name)),
                              ])))
        }

        // Open in each candidate, as the agent would rank them for the drop Inbox the file would be sent to.
        let sent = (try? inspection.inspect(held, path: report.path, readingAttribute: false).get()) ?? report
        let selection = OpenInList.selection(sent, inbox: inspection.settings.inboxes.first, inspection: inspection)
        let rows = OpenInList.rows(selection, inspection: inspection, prefix: "Open in ")
        for (index, candidate) in selection.candidates.enumerated() {
            let reason = OpenInList.reason(candidate, position: index + 1, selection: selection)
            items.append(Item(action: .open(handler: candidate.handler),
                              kind: .open(candidate, position: index + 1, reason: reason), label: rows[index],
                              json: JSONText.object([
                                  ("action", JSON.quote("open")), ("do", JSON.quote("open=" + candidate.handler)),
                                  ("handler", JSON.quote(candidate.handler)),
                                  ("name", inspection.loaded.registration(candidate.handler).map { JSON.quote($0.name) }
                                      ?? "null"),
                                  ("position", String(index + 1)), ("rank", JSON.quote(candidate.rank.name)),
                                  ("reason", JSON.quote(reason)),
                              ])))
        }

        // Print, when a destination is found and the plan can send the file to it, as it is or converted.
        var printAbsence: String?
        switch PrintDestination.find(choices.printer) {
        case .failure(let error):
            printAbsence = "\(error)"
        case .success(let destination):
            let printing = PreviewPlan.generator(chain: chain, mimeTypes: mimeTypes, package: package, thumbnailers: [])
            let plan = PrintPlan.decide(generator: printing, mimeTypes: mimeTypes, takes: destination.supports(format:))
            var how: (label: String, json: (String, String))?
            switch plan {
            case .send(let format): how = (" as \(format)", ("format", JSON.quote(format)))
            case .convert(let with): how = (" as a PDF (\(with.name))", ("convert", JSON.quote(with.name)))
            case .noConverter: printAbsence = "nothing converts \(type) into a document a printer takes"
            case .formatNotTaken(let format):
                printAbsence = "\(PrintError.unsupportedFormat(destination: destination.name, format: format))"
            }
            if let how {
                items.append(Item(action: .print(destination: choices.printer), kind: .print(destination, plan),
                                  label: "Print on \(visible(destination.name))\(how.label)",
                                  json: JSONText.object([
                                      ("action", JSON.quote("print")),
                                      ("do", JSON.quote(OptionsAction.print(destination: choices.printer).word)),
                                      ("destination", JSON.quote(destination.name)), how.json,
                                  ])))
            }
        }
        self.printAbsence = printAbsence

        // Copy: into the directory given, else onto the desktop's clipboard when there is a session.
        if let directory = choices.copyDirectory {
            items.append(Item(action: .copy(directory: directory), kind: .copyInto(directory),
                              label: "Copy to \(visible(directory))",
                              json: JSONText.object([
                                  ("action", JSON.quote("copy")),
                                  ("do", JSON.quote(OptionsAction.copy(directory: directory).word)),
                                  ("to", JSON.quote(directory)),
                              ])))
        } else if let session = DesktopClipboard.session {
            let targets = DesktopClipboard.targets(in: session, mimeType: mimeTypes.first, isPackage: package)
            items.append(Item(action: .copy(directory: nil), kind: .clipboard(session, targets: targets),
                              label: "Copy to the clipboard (\(session == .x11 ? "X11" : "Wayland"): "
                                  + targets.joined(separator: ", ") + ")",
                              json: JSONText.object([
                                  ("action", JSON.quote("copy")), ("do", JSON.quote("copy")),
                                  ("clipboard", JSON.quote(session.rawValue)), ("targets", JSONText.array(targets)),
                              ])))
        }

        // Send to each of the agent's drop Inboxes but the one the file lies in.
        inboxes = inspection.settings.inboxes
        let parent = parentPath(Self.normalized(report.path))
        ownInbox = inboxes.first { Self.normalized($0) == parent }
        for inbox in inboxes where Self.normalized(inbox) != parent {
            items.append(Item(action: .send(inbox: inbox), kind: .send(inbox: inbox),
                              label: "Send to the Inbox \(visible(inbox))",
                              json: JSONText.object([
                                  ("action", JSON.quote("send")), ("do", JSON.quote("send=" + inbox)),
                                  ("inbox", JSON.quote(inbox)),
                              ])))
        }
        self.items = items
    }

    /// `--json`: the file, its type, and each action with what it would do.
    var json: String {
        JSONText.object([
            ("file", JSON.quote(file)), ("type", JSON.quote(report.resolved.identifier)),
            ("mimeType", mimeTypes.first.map(JSON.quote) ?? "null"),
            ("package", String(report.package != nil)),
            ("actions", "[" + items.map(\.json).joined(separator: ",") + "]"),
        ]) + "\n"
    }

    /// The item `action` names, when it applies: `open=` by the handler, `send=` by the Inbox's path (made
    /// absolute); `quicklook`, `print` and `copy` by their kind (the menu was built for the destination and the
    /// directory that `--do` names).
    func item(for action: OptionsAction) -> Item? {
        switch action {
        case .quickLook, .print, .copy:
            return items.first { $0.action.kind == action.kind }
        case .open:
            return items.first { $0.action == action }
        case .send(let inbox):
            let wanted = Self.normalized(inbox)
            return items.first { if case .send(let path) = $0.kind { Self.normalized(path) == wanted } else { false } }
        }
    }

    /// Why `action` is not in the menu, in a few words.
    func absence(of action: OptionsAction) -> String {
        let type = report.resolved.identifier
        switch action {
        case .quickLook:
            return "no registered viewer shows \(type), and no built-in preview has more to show than its facts"
        case .open(let handler):
            guard registered.contains(handler) else { return "no handler '\(handler)' is registered" }
            return "\(handler) does not open \(type)"
        case .print:
            return printAbsence ?? "no destination takes it"
        case .copy:
            return "no --to DIR, and no desktop session (WAYLAND_DISPLAY, DISPLAY) for the clipboard"
        case .send(let inbox):
            if let ownInbox, Self.normalized(inbox) == Self.normalized(ownInbox) { return "it lies in \(ownInbox) already" }
            return inboxes.isEmpty ? "the agent has no drop Inbox"
                : "\(inbox) is not one of the agent's Inboxes (\(inboxes.joined(separator: ", ")))"
        }
    }

    /// An absolute path without a trailing slash.
    private static func normalized(_ path: String) -> String {
        var path = path.hasPrefix("/") ? path : (CurrentProcess.workingDirectory ?? ".") + "/" + path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}

/// The Open In list of a file, as the options menu and `inboxctl open` (without `--with`) show it: the handlers that
/// would open it from the drop Inbox it would be sent to, ranked as `inboxctl handlers` ranks them, each with why.
enum OpenInList {
    /// The ranked candidates for `report` sent into `inbox` (its binding counts, as `open --with` checks it).
    static func selection(_ report: FileReport, inbox: String?, inspection: Inspection) -> Selection {
        inspection.catalog.candidates(for: inspection.subject(of: report, inbox: inbox))
    }

    /// Why a candidate is in the list, in the words of `inboxctl handlers`' columns: its rank, the type it claims and
    /// how far that is from the file's, the name pattern that matched, a preference; for the first, why it is chosen.
    static func reason(_ candidate: Candidate, position: Int, selection: Selection) -> String {
        var parts = ["\(candidate.rank.name) for \(candidate.matchedType)", "distance \(candidate.distance)"]
        if let pattern = candidate.namePattern { parts.append("name \(pattern)") }
        if candidate.preferred { parts.append("preferred") }
        var reason = parts.joined(separator: ", ")
        if position == 1 { reason += "; chosen: \(selection.reason)" }
        return reason
    }

    /// The handler as a person reads it: its Name= and identifier, or the identifier alone.
    static func display(_ handler: String, inspection: Inspection) -> String {
        guard let name = inspection.loaded.registration(handler)?.name, !name.isEmpty, name != handler else {
            return handler
        }
        return "\(visible(name)) (\(handler))"
    }

    /// One row per candidate, aligned: "\(prefix)NAME (ID)  REASON".
    static func rows(_ selection: Selection, inspection: Inspection, prefix: String = "") -> [String] {
        let names = selection.candidates.map { prefix + display($0.handler, inspection: inspection) }
        let width = names.map(\.count).max() ?? 0
        return selection.candidates.enumerated().map { index, candidate in
            names[index].padding(to: width + 2) + reason(candidate, position: index + 1, selection: selection)
        }
    }
}
