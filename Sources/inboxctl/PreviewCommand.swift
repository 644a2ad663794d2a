import InboxCore
import InboxSystem

/// `inboxctl preview FILE... [--title TITLE]...`: Quick Look's job. Each file is shown by a `Role=Viewer` handler,
/// read-only: nothing is moved, consumed or delivered, and the agent is not involved.
enum PreviewCommand: InboxctlCommand {
    static let name = "preview"
    static let summary = "Show files with a viewer, read-only"
    static let usage = "inboxctl preview [--title TITLE]... [--with ID] FILE..."

    static let help = """
        OVERVIEW: Show files with a viewer, read-only.

        Each FILE, in order, is opened by the best handler whose document type for it has
        Role=Viewer (or by --with ID, which must be one), one at a time, each waited for. The
        viewer is run as the agent would run it for that one file (Exec=, the environment and
        the stdin document; a %F/%U Exec= as a batch of one; an Activation=resident one started
        for this file alone, sent it on fd 3, then told to exit) plus INBOX_PREVIEW=1,
        INBOX_TITLE, INBOX_PREVIEW_INDEX and INBOX_PREVIEW_COUNT; its output comes here. A
        viewer that cannot be started (its program or identity missing, Landlock required and
        absent) is passed over with a note for the next best; with --with, that is an error. It
        runs as you, on the file where it lies (as root: as the identity the agent gives that
        handler, on a read-only copy), and Landlock lets it write only in a scratch directory
        that is removed afterwards (TMPDIR and INBOX_DOCUMENTS): it cannot change, move or
        delete the file. TimeoutSec= bounds each run. The exit status is 1 if a file has no
        viewer that starts, a viewer fails or changes the file's mode or attributes; 128 + the
        signal when interrupted (the viewer is stopped first).

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file to show

        OPTIONS:
          --title TITLE           The title of the next FILE in order (repeatable; default: its name)
          --with ID               The viewer to use
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.value("--title"), .value("--with")], agentOptions: true, positionals: .any)

    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if parsed.positionals.isEmpty { throw UsageError(message: "missing FILE") }
        let titles = parsed.values("--title")
        if titles.count > parsed.positionals.count {
            throw UsageError(message:
                "\(titles.count) titles for \(parsed.positionals.count) file\(parsed.positionals.count == 1 ? "" : "s")")
        }
        if let long = titles.first(where: { $0.utf8.count > 1024 }) {
            throw UsageError(message: "title '\(long.prefix(20))...' is over 1024 bytes")
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let settings = parsed.agent.settings() else { return 1 }
        // As root, each viewer runs as the identity the agent gives its handler.
        let identities: HandlerCatalog.IdentityLookup = CurrentProcess.isRoot
            ? .resolve(isRoot: true, containersPath: StateDirectories.paths(of: settings.stateDirectory).containers) : .skip
        guard let inspection = Inspection(settings, identities: identities) else { return 1 }
        let files = parsed.positionals, titles = parsed.values("--title")
        let landlockABI = LandlockRuleset.abi()
        if landlockABI == 0 {
            Inboxctl.write("inboxctl: this kernel has no Landlock: viewers are not confined; a change to the file "
                           + "is still detected afterwards\n", to: 2)
        }
        Interruption.catchSignals()
        var status: CInt = 0
        for (index, file) in files.enumerated() {
            if Interruption.signal != 0 { break }
            let title = index < titles.count ? titles[index] : lastPathComponent(file)
            let preview = Delivery.Preview(title: title, index: index + 1, count: files.count)
            if !show(file, preview: preview, with: parsed.value("--with"), inspection: inspection, landlockABI: landlockABI) {
                status = 1
            }
        }
        let signal = Interruption.signal
        return signal != 0 ? 128 + signal : status
    }

    /// Shows one file; false (after saying why) if it could not be shown or its viewer failed. The viewers are tried
    /// best first: one that cannot be started (its identity is missing, its program cannot be run, it needs Landlock
    /// that is not there) is passed over with a note, and the next is tried; a viewer that started and failed is
    /// not, since it may have shown part of the file already. With `--with`, only that viewer.
    static func show(_ file: String, preview: Delivery.Preview, with chosen: String?, inspection: Inspection,
                     landlockABI: Int) -> Bool {
        let report: FileReport
        switch inspection.inspect(file) {
        case .success(let inspected): report = inspected
        case .failure(let error):
            Inboxctl.write("inboxctl: \(file): \(error)\n", to: 2)
            return false
        }
        // A viewer is sandboxed to read one file; a package's tree is a delivery's (inboxctl send), not a preview's.
        guard report.package == nil else {
            Inboxctl.write("inboxctl: \(file): is a package document (a directory); preview shows single files\n", to: 2)
            return false
        }
        let type = report.resolved.identifier
        // A preview is no delivery: the file's name takes part, the binding of an Inbox it may lie in does not.
        let subject = Routing.Subject(type: type, name: inspection.subject(of: report).name)
        let viewers = inspection.catalog.candidates(for: subject, role: .viewer)
        let order: [String]
        if let chosen {
            guard viewers.candidates.contains(where: { $0.handler == chosen }) else {
                var text = "inboxctl: \(chosen) is not a viewer of \(file) (\(type))"
                text += viewers.candidates.isEmpty ? "; nothing is\n"
                    : "; the viewers that are, best first:\n" + HandlersCommand.candidatesText(viewers, inspection)
                Inboxctl.write(text, to: 2)
                return false
            }
            order = [chosen]
        } else {
            guard !viewers.candidates.isEmpty else {
                Inboxctl.write("inboxctl: no viewer for \(file) (\(type)): no handler has Role=Viewer for it\n", to: 2)
                return false
            }
            order = viewers.candidates.map(\.handler)
        }
        let absolute = file.hasPrefix("/") ? file : (CurrentProcess.workingDirectory ?? ".") + "/" + file
        let item = PreviewSession.Item(path: absolute, contentType: type,
                                       contentTypes: inspection.catalog.conformanceChain(of: type), preview: preview)
        var passedOver: [(handler: String, reason: String)] = []
        for (index, handler) in order.enumerated() {
            switch start(handler, item, inspection: inspection, landlockABI: landlockABI) {
            case .ran(let result):
                return reportResult(result, of: handler, showing: file)
            case .cannotStart(let reason):
                if chosen != nil {
                    Inboxctl.write("inboxctl: cannot show \(file) with \(handler): \(reason)\n", to: 2)
                    return false
                }
                passedOver.append((handler, reason))
                if index + 1 < order.count {
                    Inboxctl.write("inboxctl: cannot show \(file) with \(handler): \(reason); trying \(order[index + 1])\n",
                                   to: 2)
                }
            }
        }
        var text = "inboxctl: no viewer could show \(file) (\(type)); tried, best first:\n"
        for (handler, reason) in passedOver { text += "  \(handler): \(reason)\n" }
        Inboxctl.write(text, to: 2)
        return false
    }

    private enum Start {
        /// The viewer ran (and ended): what it did.
        case ran(PreviewSession.Result)
        /// It could not be started at all; the next viewer may be tried.
        case cannotStart(String)
    }

    /// Runs one viewer on the file, unless it cannot be started.
    private static func start(_ handler: String, _ item: PreviewSession.Item, inspection: Inspection,
                              landlockABI: Int) -> Start {
        guard let registration = inspection.catalog.registration(handler) else {
            return .cannotStart("its registration is not loaded")
        }
        var identity: Identity?
        switch inspection.catalog.identities[handler] {
        case .success(let found)?: identity = found
        case .failure(let error)?: return .cannotStart("\(registration.path): \(error)")
        case nil: identity = nil
        }
        let session = PreviewSession(registration: registration, identity: identity, settings: inspection.settings,
                                     landlockABI: landlockABI)
        do throws(SystemError) {
            return .ran(try session.run(item, output: FileDescriptor(rawValue: 1), interrupted: { Interruption.signal != 0 }))
        } catch {
            return .cannotStart("\(error)")
        }
    }

    /// Says how a viewer that ran ended, when it failed; true when it showed the file and left it as it was.
    private static func reportResult(_ result: PreviewSession.Result, of handler: String, showing file: String) -> Bool {
        var succeeded = true
        switch result.outcome {
        case .exited(.exited(0)), .answered(.done, _): break
        case .exited(let status):
            Inboxctl.write("inboxctl: \(handler) \(status) showing \(file)\n", to: 2)
            succeeded = false
        case .answered(let answer, let reason):
            Inboxctl.write("inboxctl: \(handler) answered \(answer.rawValue)\(reason.isEmpty ? "" : " (\(reason))") "
                           + "showing \(file)\n", to: 2)
            succeeded = false
        case .unanswered(let status, let sendFailed, let ignored):
            var why = ""
            if let sendFailed { why = " (its delivery could not be sent: \(sendFailed))" }
            if let ignored { why += " (it sent \(ignored))" }
            Inboxctl.write("inboxctl: \(handler) \(status) without answering\(why) showing \(file) "
                           + "(Activation=resident)\n", to: 2)
            succeeded = false
        case .timedOut(let limit):
            Inboxctl.write("inboxctl: \(handler) was stopped after \(limit) showing \(file) (TimeoutSec=)\n", to: 2)
            succeeded = false
        case .interrupted:
            succeeded = false
        }
        if let change = result.change {
            Inboxctl.write("inboxctl: \(handler) changed \(file), which it may only read: \(change)\n", to: 2)
            succeeded = false
        }
        return succeeded
    }
}
