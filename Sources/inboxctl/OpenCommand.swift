import InboxCore
import InboxSystem

/// `inboxctl open --with ID FILE...`: the "Open In" menu's choice. Each file is sent as `send` does, carrying the
/// chosen handler in `user.inbox.handler`; the agent honours it only for a handler that claims the file's type.
/// Without `--with`, on a terminal, the menu itself: the file's candidates numbered, one key picks.
enum OpenCommand: InboxctlCommand {
    static let name = "open"
    static let summary = "Send files to a handler of your choice"
    static let usage = "inboxctl open [--with ID [--force]] [--inbox DIR] [--source-app ID] [--annotation JSON] [--json] FILE..."

    static let help = """
        OVERVIEW: Send files to a handler of your choice.

        Each FILE is sent through the drop Inbox as 'inboxctl send' does, with the handler ID in
        the user.inbox.handler attribute. ID must be one of the file's candidates, as 'inboxctl
        handlers FILE' lists them (any of them, not only the first): otherwise the file is not sent,
        the candidates are listed, and the exit status is 1. The agent checks the choice again
        against the type it decides: a handler that cannot open it gets nothing and the file goes
        to failed/ ('refused'). --force sends it anyway (user.inbox.handler-override), and the agent
        delivers it to ID whatever its type if the sender is root or the agent's own user. A
        file's type is never changed by a choice of handler.

        Without --with, on a terminal, one FILE's Open In list is shown: its candidates numbered,
        best first, with why each could open it; a key opens the file with that handler, q or
        Escape dismisses the list (exit status 1). Not on a terminal, --with is required.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file to open

        OPTIONS:
          --with ID               The handler to open it with (required unless on a terminal)
          --force                 Send it even if ID does not claim the file's type
          --inbox DIR             The drop Inbox (default: the agent's first Inbox)
          --source-app ID         The sending application's identifier
          --annotation JSON       JSON handed to the handler (at most 65536 bytes)
          --json                  Print one JSON document: each file's path in the Inbox, or why not
        \(AgentOptions.help(omitting: ["--inbox"]))
          -h, --help              Show help information

        """

    static let options = CommandOptions([.value("--with"), .flag("--force"), .value("--inbox"), .value("--source-app"),
                                         .value("--annotation"), .flag("--json")], agentOptions: true, positionals: .any)

    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if let handler = parsed.value("--with") {
            if !HandlerIdentifier.isValid(handler) {
                throw UsageError(message: "invalid handler identifier '\(handler)'")
            }
        } else if !TerminalMenu.available {
            throw UsageError(message: "missing '--with ID'")
        } else if parsed.positionals.count > 1 {
            throw UsageError(message: "without '--with ID', give one FILE: its Open In list is shown to choose from")
        } else if parsed.flag("--force") {
            throw UsageError(message: "--force sends to the handler --with names: give '--with ID'")
        }
        if parsed.positionals.isEmpty { throw UsageError(message: "missing FILE") }
        if parsed.positionals.contains("-") {
            throw UsageError(message: "open takes files; send stdin with 'inboxctl send --type UTI -'")
        }
        try SendCommand.checkMetadata(parsed)
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let resolved = parsed.agent.resolve(), let inspection = Inspection(resolved.settings) else { return 1 }
        let handler: String
        if let given = parsed.value("--with") {
            handler = given
        } else {
            // On a terminal, with one FILE (check): its Open In list, and the handler picked there.
            guard let picked = choose(parsed.positionals[0], inbox: parsed.value("--inbox"), inspection: inspection)
            else { return 1 }
            handler = picked
        }
        let request = SendCommand.Request(sourceApp: parsed.value("--source-app"), annotation: parsed.value("--annotation"),
                                          handler: handler, overridesHandlerCheck: parsed.flag("--force"))
        return open(parsed.positionals, request: request, inbox: parsed.value("--inbox"), json: parsed.flag("--json"),
                    resolved: resolved, inspection: inspection)
    }

    /// Sends `files` to `request.handler` through `inbox` (default: the agent's first), each admitted first; the exit
    /// status, as `send`'s.
    static func open(_ files: [String], request: SendCommand.Request, inbox: String?, json: Bool,
                     resolved: AgentOptions.Resolved, inspection: Inspection) -> CInt {
        let settings = resolved.settings
        guard let handler = request.handler else { return 1 }
        guard inspection.loaded.registration(handler) != nil else {
            var message = "inboxctl: no handler '\(handler)' is registered"
            if let close = Spelling.closest(to: handler, among: inspection.loaded.registrations.map(\.identifier)) {
                message += "; did you mean '\(close)'?"
            }
            Inboxctl.write(message + "\n", to: 2)
            return 1
        }
        let dropInbox = inbox ?? settings.inboxes.first
        return SendCommand.deliver(files, request: request, inbox: inbox, settings: settings, json: json,
                                   hint: resolved.hint("inboxctl open")) { file in
            admit(file, handler: handler, force: request.overridesHandlerCheck, inbox: dropInbox,
                  inspection: inspection, agentUID: resolved.agentUID)
        }
    }

    /// The Open In list of `file` on the terminal (the handlers that would open it from `inbox`, default the agent's
    /// first, best first): the one picked, or nil when it was dismissed or there is none (said why).
    static func choose(_ file: String, inbox: String?, inspection: Inspection) -> String? {
        let report: FileReport
        switch inspection.inspect(file, readingAttribute: false) {
        case .success(let inspected): report = inspected
        case .failure(let error):
            Inboxctl.write("inboxctl: \(file): \(error)\n", to: 2)
            return nil
        }
        let selection = OpenInList.selection(report, inbox: inbox ?? inspection.settings.inboxes.first,
                                              inspection: inspection)
        guard !selection.candidates.isEmpty else {
            Inboxctl.write("inboxctl: no handler can open \(file) (\(report.resolved.identifier)): \(selection.reason)\n",
                           to: 2)
            return nil
        }
        let menu = TerminalMenu(title: "Open \(visible(report.name)) (\(report.resolved.identifier)) in:",
                                rows: OpenInList.rows(selection, inspection: inspection), leave: "dismiss",
                                left: "Dismissed.")
        return menu.choose().map { selection.candidates[$0].handler }
    }

    /// Whether `handler` can open the file as the agent will type it (sent without a content-type attribute); if not,
    /// says so with the candidates, unless `force`, and the agent would take the override from this user.
    /// A file for an Inbox bound to another handler is refused here, as the agent would.
    static func admit(_ file: String, handler: String, force: Bool, inbox: String?, inspection: Inspection,
                      agentUID: UInt32) -> Bool {
        let report: FileReport
        switch inspection.inspect(file, readingAttribute: false) {
        case .success(let inspected): report = inspected
        case .failure(let error):
            Inboxctl.write("inboxctl: \(file): \(error)\n", to: 2)
            return false
        }
        let type = report.resolved.identifier
        let loaded = inspection.loaded
        let subject = inspection.subject(of: report, inbox: inbox)
        if let binding = subject.binding, binding.handler != handler {
            Inboxctl.write("inboxctl: Inbox \(binding.inbox) is bound to \(binding.handler): the agent gives what is "
                           + "dropped there to that handler only, and would refuse \(file) for \(handler). Send it to "
                           + "another Inbox with --inbox DIR.\n", to: 2)
            return false
        }
        if Routing.claims(handler, subject: subject, index: loaded.index, database: loaded.database) { return true }
        if force {
            guard let refusal = overrideRefusal(agentUID: agentUID) else { return true }
            Inboxctl.write("inboxctl: \(handler) cannot open \(file) (\(type)), and \(refusal)\n", to: 2)
            return false
        }
        let selection = inspection.catalog.candidates(for: subject)
        var text = "inboxctl: \(handler) cannot open \(file) (\(type))"
        if selection.candidates.isEmpty {
            text += "; no handler can (it would wait in unhandled/). Use --force to send it to \(handler) anyway.\n"
        } else {
            text += "; the handlers that can, best first:\n" + HandlersCommand.candidatesText(selection, inspection)
                + "Choose one of them, or use --force to send it to \(handler) anyway.\n"
        }
        Inboxctl.write(text, to: 2)
        return false
    }

    /// Why the agent would refuse an override from this user: only root or the agent's own user may give one. The
    /// agent's uid is its instance's (`AgentOptions.Resolved.agentUID`), running or not, so that a file the agent
    /// would refuse into failed/ is never sent.
    static func overrideRefusal(agentUID: UInt32) -> String? {
        let me = CurrentProcess.effectiveUserID
        guard me != 0, agentUID != me else { return nil }
        return "the agent (uid \(agentUID)) takes --force only from root or its own user, not from uid \(me)"
    }
}
