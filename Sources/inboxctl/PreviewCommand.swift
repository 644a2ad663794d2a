import InboxCore
import InboxSystem

/// `inboxctl preview FILE...`: Quick Look's job. Each file is shown read-only (nothing is moved, consumed or delivered,
/// and the agent is not involved) by the best registered `Role=Viewer` handler, else by the built-in generators: on the
/// terminal, by the desktop's viewer, or as PNG pages (`--output`).
enum PreviewCommand: InboxctlCommand {
    static let name = "preview"
    static let summary = "Show files with a viewer or the built-in previews, read-only"
    static let usage = "inboxctl preview [--title TITLE]... [--with ID | --builtin] [--terminal] [--output DIR [--json]] "
        + "[--size N] [--pages N] FILE..."

    static let help = """
        OVERVIEW: Show files with a viewer or the built-in previews, read-only.

        Each FILE, in order, is shown by the best handler whose document type for it has
        Role=Viewer (or by --with ID, which must be one), each waited for; a file no registered
        viewer shows (or every file, with --builtin or --output) is shown by the built-in
        generators: pictures through gdk-pixbuf and the desktop's .thumbnailer programs, PDF
        through poppler, PostScript through Ghostscript, text with its encoding detected, CSV
        and TSV as aligned tables, RTF and Office documents through LibreOffice when it is
        installed, iWork documents from the preview they carry, and for anything else the
        facts inboxctl info gives.

        Where the built-in previews go: with --output, one PNG per page as DIR/<i>-<p>.png (item
        i, page p); else, in a desktop session (WAYLAND_DISPLAY or DISPLAY set) and without
        --terminal, to the desktop's own viewer for the type (xdg-open); else on this terminal,
        one item at a time under its [i/n] title: space or n shows the next page, p the previous,
        ] and [ the next and previous item, q dismisses. When standard input or output is not a
        terminal, the items are written out in order.

        A registered viewer is run as the agent would run it for that one file (Exec=, the
        environment and the stdin document; a %F/%U Exec= as a batch of one; an
        Activation=resident one started for this file alone, sent it on fd 3, then told to
        exit) plus INBOX_PREVIEW=1, INBOX_TITLE, INBOX_PREVIEW_INDEX and INBOX_PREVIEW_COUNT; its
        output comes here. A viewer that cannot be started is passed over with a note for the
        next best (with --with, that is an error). Viewers and generators alike run as you (as
        root: a viewer as the identity the agent gives its handler, a generator as an identity
        of its own, on a read-only copy), Landlock lets them write only in a scratch directory
        that is removed afterwards, and they are bounded in time (a viewer by its TimeoutSec=,
        else the agent's; a generator by the agent's TimeoutSec=, at most 60s), memory and
        output. A file
        is opened once, without following a symbolic link, and generators read that
        descriptor. The exit status is 1 if a file could not be shown (said after the others
        are shown), a viewer failed or changed the file; 128 + the signal when interrupted.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file (or package document) to show

        OPTIONS:
          --title TITLE           The title of the next FILE in order (repeatable; default: its name)
          --with ID               The registered viewer to use
          --builtin               Use the built-in previews even where a viewer is registered
          --terminal              Show on this terminal even in a desktop session
          --output DIR            Write each page as a PNG into DIR (made if missing)
          --json                  With --output: say which file is which, as JSON
          --size N                The longest side of a PNG page, in pixels (default: 1024)
          --pages N               Pages shown at most of each file (default: 100)
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions(
        [.value("--title"), .value("--with"), .flag("--builtin"), .flag("--terminal"), .value("--output"),
         .flag("--json"), .value("--size"), .value("--pages")], agentOptions: true, positionals: .any)

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
        if parsed.value("--with") != nil && parsed.flag("--builtin") {
            throw UsageError(message: "--with and --builtin choose differently: give one")
        }
        if parsed.value("--with") != nil && parsed.value("--output") != nil {
            throw UsageError(message: "--output writes the built-in previews: --with cannot be given with it")
        }
        if parsed.flag("--json") && parsed.value("--output") == nil {
            throw UsageError(message: "--json describes what --output writes: give --output DIR")
        }
        if let size = parsed.value("--size"), Int(size).map({ (16...8192).contains($0) }) != true {
            throw UsageError(message: "--size '\(size)' is not a number of pixels from 16 to 8192")
        }
        if let pages = parsed.value("--pages"), Int(pages).map({ (1...10_000).contains($0) }) != true {
            throw UsageError(message: "--pages '\(pages)' is not a number from 1 to 10000")
        }
    }

    /// What `inboxctl preview` was asked besides its files: the options of its command line.
    struct Request {
        /// `--title`, the i-th for the i-th file.
        var titles: [String] = []
        /// `--with ID`: the one viewer to use.
        var viewer: String?
        /// `--builtin`: the built-in previews even where a viewer is registered.
        var builtin = false
        /// `--terminal`: on this terminal even in a desktop session.
        var terminal = false
        /// `--output DIR` and `--json`: PNG pages into DIR, and which file is which.
        var output: String?
        var json = false
        /// `--size N` and `--pages N`; nil for the renderer's defaults.
        var size: Int?
        var pages: Int?

        /// What `inboxctl preview FILE` does with no options.
        init() {}

        /// The request `parsed` makes.
        init(_ parsed: ParsedOptions) {
            titles = parsed.values("--title")
            viewer = parsed.value("--with")
            builtin = parsed.flag("--builtin")
            terminal = parsed.flag("--terminal")
            output = parsed.value("--output")
            json = parsed.flag("--json")
            size = parsed.value("--size").flatMap(Int.init)
            pages = parsed.value("--pages").flatMap(Int.init)
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let settings = parsed.agent.settings(), let inspection = inspection(settings) else { return 1 }
        return preview(parsed.positionals, request: Request(parsed), inspection: inspection)
    }

    /// The agent's view as a preview needs it: as root, each viewer runs as the identity the agent gives its handler.
    static func inspection(_ settings: AgentSettings) -> Inspection? {
        let identities: HandlerCatalog.IdentityLookup = CurrentProcess.isRoot
            ? .resolve(isRoot: true, containersPath: StateDirectories.paths(of: settings.stateDirectory).containers) : .skip
        return Inspection(settings, identities: identities)
    }

    /// Shows `files` as `request` asks; the exit status.
    static func preview(_ files: [String], request: Request, inspection: Inspection) -> CInt {
        let settings = inspection.settings
        let titles = request.titles
        let landlockABI = LandlockRuleset.abi()
        if landlockABI == 0 {
            Inboxctl.write("inboxctl: this kernel has no Landlock: viewers and generators are not confined; a change to "
                           + "the file is still detected afterwards\n", to: 2)
        }
        Interruption.catchSignals()
        let output = request.output
        let builtinOnly = request.builtin || output != nil
        var status: CInt = 0
        var pending: [(index: Int, file: String, title: String)] = []
        for (index, file) in files.enumerated() {
            if Interruption.signal != 0 { break }
            let title = index < titles.count ? titles[index] : lastPathComponent(file)
            if builtinOnly {
                pending.append((index, file, title))
                continue
            }
            let preview = Delivery.Preview(title: title, index: index + 1, count: files.count)
            switch show(file, preview: preview, with: request.viewer, inspection: inspection,
                        landlockABI: landlockABI) {
            case .shown(let succeeded): if !succeeded { status = 1 }
            case .noViewer: pending.append((index, file, title))
            }
        }
        if !pending.isEmpty && Interruption.signal == 0 {
            let desktop = output == nil && !request.terminal && DesktopViewer.sessionPresent
                && !CurrentProcess.isRoot
            if desktop {
                for item in pending where Interruption.signal == 0 {
                    if case .failure(let error) = DesktopViewer.open(item.file, output: FileDescriptor(rawValue: 2)) {
                        Inboxctl.write("inboxctl: cannot preview \(item.file): \(error)\n", to: 2)
                        status = 1
                    }
                }
            } else if !showBuiltin(pending, count: files.count, request: request, settings: settings,
                                   inspection: inspection, landlockABI: landlockABI) {
                status = 1
            }
        }
        let signal = Interruption.signal
        return signal != 0 ? 128 + signal : status
    }

    /// Shows files with the built-in generators, to `--output` or the terminal; false if one could not be shown.
    private static func showBuiltin(_ pending: [(index: Int, file: String, title: String)], count: Int,
                                    request: Request, settings: AgentSettings, inspection: Inspection,
                                    landlockABI: Int) -> Bool {
        var options = PreviewRenderer.Options()
        if let size = request.size { options.size = size }
        if let pages = request.pages { options.maximumPages = pages }
        options.timeout = PreviewRenderer.Options.timeout(agent: settings.defaultTimeout)
        let (thumbnailers, problems) = ThumbnailerDirectories.load()
        for problem in problems { Inboxctl.write("inboxctl: \(problem)\n", to: 2) }
        let renderer: PreviewRenderer
        do {
            renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: landlockABI, options: options, thumbnailers: thumbnailers)
        } catch {
            Inboxctl.write("inboxctl: cannot prepare the previews: \(error)\n", to: 2)
            return false
        }
        let previews = BuiltinPreviews(inspection: inspection, renderer: renderer, thumbnailers: thumbnailers)
        var items: [BuiltinItem] = []
        for entry in pending where Interruption.signal == 0 {
            var item = previews.make(entry.file, title: entry.title)
            item.index = entry.index + 1
            item.count = count
            items.append(item)
        }
        var succeeded = true
        if let output = request.output {
            let directory: Directory
            switch PreviewOutput.open(output) {
            case .success(let opened): directory = opened
            case .failure(let error):
                Inboxctl.write("inboxctl: cannot write the previews into \(output): \(error)\n", to: 2)
                return false
            }
            let writer = PreviewOutput(renderer: renderer, directory: directory)
            var json: [String] = []
            for item in items {
                let pages = writer.write(item, index: item.index)
                if case .failure(let error) = pages {
                    Inboxctl.write("inboxctl: cannot preview \(item.file): \(error)\n", to: 2)
                    succeeded = false
                }
                json.append(PreviewOutput.json(item, index: item.index, pages: pages))
            }
            if request.json { Inboxctl.write("{\"items\":[" + json.joined(separator: ",") + "]}\n", to: 1) }
            return succeeded
        }
        TerminalPreview(renderer: renderer, items: items, format: nil).show()
        for item in items {
            if case .failure(let error) = item.content {
                Inboxctl.write("inboxctl: cannot preview \(item.file): \(error)\n", to: 2)
                succeeded = false
            }
        }
        return succeeded
    }

    /// Shows one file; false (after saying why) if it could not be shown or its viewer failed. The viewers are tried
    /// best first: one that cannot be started (its identity is missing, its program cannot be run, it needs Landlock
    /// that is not there) is passed over with a note, and the next is tried; a viewer that started and failed is
    /// not, since it may have shown part of the file already. With `--with`, only that viewer.
    /// What `show` did with a file.
    enum Shown {
        /// A registered viewer ran (true: it showed the file and left it as it was), or the file could not be shown.
        case shown(Bool)
        /// No registered viewer is for it: the built-in previews are.
        case noViewer
    }

    static func show(_ file: String, preview: Delivery.Preview, with chosen: String?, inspection: Inspection,
                     landlockABI: Int) -> Shown {
        let report: FileReport
        switch inspection.inspect(file) {
        case .success(let inspected): report = inspected
        case .failure(let error):
            Inboxctl.write("inboxctl: \(file): \(error)\n", to: 2)
            return .shown(false)
        }
        // A viewer is sandboxed to read one file; a package's tree is the built-in previews' (its QuickLook/ preview).
        guard report.package == nil else {
            guard chosen == nil else {
                Inboxctl.write("inboxctl: \(file): is a package document (a directory); a viewer shows single files\n",
                               to: 2)
                return .shown(false)
            }
            return .noViewer
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
                return .shown(false)
            }
            order = [chosen]
        } else {
            guard !viewers.candidates.isEmpty else { return .noViewer }
            order = viewers.candidates.map(\.handler)
        }
        let absolute = file.hasPrefix("/") ? file : (CurrentProcess.workingDirectory ?? ".") + "/" + file
        let item = PreviewSession.Item(path: absolute, contentType: type,
                                       contentTypes: inspection.catalog.conformanceChain(of: type), preview: preview)
        var passedOver: [(handler: String, reason: String)] = []
        for (index, handler) in order.enumerated() {
            switch start(handler, item, inspection: inspection, landlockABI: landlockABI) {
            case .ran(let result):
                return .shown(reportResult(result, of: handler, showing: file))
            case .cannotStart(let reason):
                if chosen != nil {
                    Inboxctl.write("inboxctl: cannot show \(file) with \(handler): \(reason)\n", to: 2)
                    return .shown(false)
                }
                passedOver.append((handler, reason))
                if index + 1 < order.count {
                    Inboxctl.write("inboxctl: cannot show \(file) with \(handler): \(reason); trying \(order[index + 1])\n",
                                   to: 2)
                }
            }
        }
        var text = "inboxctl: no registered viewer could show \(file) (\(type)); tried, best first:\n"
        for (handler, reason) in passedOver { text += "  \(handler): \(reason)\n" }
        Inboxctl.write(text + "inboxctl: showing the built-in preview of \(file)\n", to: 2)
        return .noViewer
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
