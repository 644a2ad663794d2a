import InboxCore
import InboxSystem

/// `inboxctl options FILE`: the options menu (docs/design.md, The options menu). What can be done with a file, each
/// item only when it applies (`OptionsMenu`): Quick Look, Open in each candidate handler, Print, Copy, Send to another
/// Inbox. On a terminal a numbered menu where one key does one; `--do ACTION` does one without it; `--json` says what
/// each would do and does none. The actions are the other commands' own: preview, open, print, send.
enum OptionsCommand: InboxctlCommand {
    static let name = "options"
    static let summary = "Show what can be done with a file, and do one"
    static let usage = "inboxctl options FILE [--to DIR] [--printer DEST] [--json] [--do ACTION[=ARG]]"

    static let help = """
        OVERVIEW: Show what can be done with a file, and do one.

        FILE is typed as the agent types it (content included; a symbolic link is refused), and
        the menu offers, each only when it applies: Quick Look (a registered viewer, or a built-in
        preview with more to show than the file's facts), as 'inboxctl preview FILE'; Open in each
        handler that would open it, best first, each with why, as 'inboxctl open FILE --with ID';
        Print, when a CUPS destination is found (--printer, else the one lp would use) and takes
        the file as it is or as a PDF, as 'inboxctl print'; Copy, into --to DIR (a copy made from
        the descriptor typed, never replacing a file of that name), else onto the desktop's
        clipboard in a Wayland or X session (WAYLAND_DISPLAY, DISPLAY): under X its file:// URI as
        text/uri-list and its bytes as its own MIME type, under Wayland one of them through
        wl-copy (Debian package wl-clipboard); Send to each other drop Inbox of the agent's, as
        'inboxctl send --inbox INBOX FILE'.

        On a terminal the items are numbered: a key takes one, q or Escape dismisses the menu.
        --do ACTION takes one without a menu: quicklook, open=ID, print or print=DEST, copy or
        copy=DIR, send=INBOX; one that does not apply is an error saying why and listing those
        that do. --json prints the menu, each action with what it would do, and takes none. Not
        on a terminal, --do or --json is needed. The exit status is 0 when an action was taken
        and succeeded (with --json: when the menu has an item), 1 when the menu was dismissed,
        is empty, or the action failed.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file (or package document)

        OPTIONS:
          --to DIR                Copy into DIR rather than onto the clipboard
          --printer DEST          The destination Print uses (a printer or class, NAME or NAME/INSTANCE)
          --json                  Print the menu as JSON, each action with what it would do; take none
          --do ACTION             Take one action without a menu (quicklook, open=ID, print[=DEST], copy[=DIR], send=INBOX)
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.value("--to"), .value("--printer"), .flag("--json"), .value("--do")],
                                        agentOptions: true, positionals: .atMostOne)

    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if parsed.positionals.isEmpty { throw UsageError(message: "missing FILE") }
        if let word = parsed.value("--do") {
            _ = try OptionsAction.parse(word)
            if parsed.flag("--json") { throw UsageError(message: "--json takes no action: give --do or --json, not both") }
        } else if !parsed.flag("--json") && !TerminalMenu.available {
            throw UsageError(message: "not on a terminal, so no menu to choose from: give --do ACTION or --json")
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let resolved = parsed.agent.resolve(), let inspection = PreviewCommand.inspection(resolved.settings) else {
            return 1
        }
        let file = parsed.positionals[0]
        let requested = parsed.value("--do").flatMap { try? OptionsAction.parse($0) }
        var choices = OptionsMenu.Choices(copyDirectory: parsed.value("--to"), printer: parsed.value("--printer"))
        if case .copy(let directory?)? = requested { choices.copyDirectory = directory }
        if case .print(let destination?)? = requested { choices.printer = destination }

        // Opened once, as the agent opens a dropped file: what is typed is what is copied.
        let held: Inspection.HeldDocument
        switch Inspection.open(file) {
        case .success(let opened): held = opened
        case .failure(let error):
            Inboxctl.write("inboxctl: \(file): \(error)\n", to: 2)
            return 1
        }
        defer { held.descriptor.close() }
        let report: FileReport
        switch inspection.inspect(held, path: file) {
        case .success(let inspected): report = inspected
        case .failure(let error):
            Inboxctl.write("inboxctl: \(file): \(error)\n", to: 2)
            return 1
        }
        let menu = OptionsMenu(file: file, report: report, held: held, choices: choices, inspection: inspection)
        if parsed.flag("--json") {
            Inboxctl.write(menu.json, to: 1)
            return menu.items.isEmpty ? 1 : 0
        }
        let type = report.resolved.identifier
        if let requested {
            guard let item = menu.item(for: requested) else {
                let applying = menu.items.map(\.action.word)
                Inboxctl.write("inboxctl: --do \(requested.word) does not apply to \(file) (\(type)): "
                               + menu.absence(of: requested) + "; "
                               + (applying.isEmpty ? "nothing does\n" : "what does: \(applying.joined(separator: ", "))\n"),
                               to: 2)
                return 1
            }
            return perform(item, menu: menu, held: held, resolved: resolved, inspection: inspection)
        }
        guard !menu.items.isEmpty else {
            Inboxctl.write("inboxctl: nothing can be done with \(file) (\(type)): no preview, no handler, no printer, "
                           + "no clipboard and no other Inbox\n", to: 2)
            return 1
        }
        let terminal = TerminalMenu(title: "\(visible(report.name)) (\(type)):", rows: menu.items.map(\.label),
                                    leave: "dismiss", left: "Dismissed.")
        guard let index = terminal.choose() else { return 1 }
        return perform(menu.items[index], menu: menu, held: held, resolved: resolved, inspection: inspection)
    }

    /// Takes one item's action, with the other commands' own code; 0 when it succeeded, 1 when it failed (128 + the
    /// signal when interrupted).
    static func perform(_ item: OptionsMenu.Item, menu: OptionsMenu, held: Inspection.HeldDocument,
                        resolved: AgentOptions.Resolved, inspection: Inspection) -> CInt {
        let file = menu.file
        let status: CInt
        switch item.kind {
        case .quickLook:
            status = PreviewCommand.preview([file], request: PreviewCommand.Request(), inspection: inspection)
        case .open(let candidate, _, _):
            status = OpenCommand.open([file], request: SendCommand.Request(handler: candidate.handler), inbox: nil,
                                      json: false, resolved: resolved, inspection: inspection)
        case .print(let destination, _):
            status = PrintCommand.print([file], on: destination, request: PrintRequest(title: ""), title: nil,
                                        follow: true, json: false, inspection: inspection)
        case .copyInto(let directory):
            status = copy(held, report: menu.report, into: directory, settings: resolved.settings)
        case .clipboard(let session, let targets):
            status = copyToClipboard(held, report: menu.report, session: session, targets: targets)
        case .send(let inbox):
            status = SendCommand.deliver([file], request: SendCommand.Request(), inbox: inbox, settings: resolved.settings,
                                         hint: resolved.hint("inboxctl send"))
        }
        return status == 0 ? 0 : status > 128 ? status : 1
    }

    /// Copy into `path`: the held file copied from its descriptor (a package document entry by entry, as `send`
    /// copies one), under its own name, never replacing an entry of that name.
    static func copy(_ held: Inspection.HeldDocument, report: FileReport, into path: String,
                     settings: AgentSettings) -> CInt {
        let name = report.name
        let directory: Directory
        do { directory = try Directory(path: path) } catch {
            Inboxctl.write("inboxctl: cannot copy \(report.path) into \(path): \(error)\n", to: 2)
            return 1
        }
        let result: Result<Void, Directory.CopyFailure>
        if report.package != nil {
            result = copyPackage(held.descriptor, named: name, into: directory, limits: settings.packageLimits)
        } else {
            result = directory.copyFile(from: held.descriptor, as: name, mode: held.status.st_mode & 0o777)
        }
        switch result {
        case .success:
            Inboxctl.write("Copied \(report.path) to \(directory.child(name))\n", to: 1)
            return 0
        case .failure(let failure):
            Inboxctl.write("inboxctl: cannot copy \(report.path): \(failure)\n", to: 2)
            return 1
        }
    }

    /// A package document's copy: its tree copied by descriptor under a hidden name (`PackageTree.copy`, which
    /// refuses what the agent would), given an ordinary directory's mode, then renamed to `name` if nothing has it.
    private static func copyPackage(_ source: FileDescriptor, named name: String, into directory: Directory,
                                    limits: PackageLimits) -> Result<Void, Directory.CopyFailure> {
        let hidden = Array(".inboxctl-copy-\(SendCommand.randomHex(12))".utf8)
        switch PackageTree.copy(source, into: directory, as: hidden, limits: limits) {
        case .success: break
        case .failure(.refused(let refusal)):
            return .failure(.failed(SystemError("copy", path: "the package \(refusal.reason)", errno: .invalidArgument)))
        case .failure(.failed(let error)):
            return .failure(.failed(error))
        }
        if case .opened(let copy) = directory.openPackage(hidden) {
            try? copy.descriptor.chmod(0o755)
            copy.descriptor.close()
        }
        switch directory.move(hidden, to: directory, as: Array(name.utf8)) {
        case nil:
            return .success(())
        case .fileExists?:
            _ = PackageTree.remove(hidden, in: directory)
            return .failure(.exists(directory.child(name)))
        case let error?:
            _ = PackageTree.remove(hidden, in: directory)
            return .failure(.failed(SystemError("renameat2", path: directory.child(name), errno: error)))
        }
    }

    /// Copy onto the desktop's clipboard: `targets` made from the held file (its `file://` URI, its bytes read from
    /// the descriptor), left to the session's clipboard.
    static func copyToClipboard(_ held: Inspection.HeldDocument, report: FileReport, session: DesktopClipboard.Session,
                                targets: [String]) -> CInt {
        func fail(_ error: ClipboardError) -> CInt {
            Inboxctl.write("inboxctl: cannot copy \(report.path) to the clipboard: \(error)\n", to: 2)
            return 1
        }
        // The path the kernel gives the descriptor typed: links in the directories resolved, as a file manager has it.
        let path = FileSystem.linkTarget("/proc/self/fd/\(held.descriptor.rawValue)") ?? report.path
        var offered: [(type: String, bytes: [UInt8])] = []
        for target in targets {
            if target == DesktopClipboard.uriList {
                offered.append((target, DesktopClipboard.uriListBytes(fileURL(forPath: path))))
                continue
            }
            let size = Int64(held.status.st_size)
            guard size <= Int64(DesktopClipboard.maximumBytes) else {
                return fail(.tooLarge(size, limit: DesktopClipboard.maximumBytes))
            }
            var bytes = [UInt8](repeating: 0, count: Int(size))
            let read = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) -> Int in try held.descriptor.read(fully: buffer, at: 0) }
            }
            switch read {
            case .success(let count): offered.append((target, Array(bytes.prefix(count))))
            case .failure(let error): return fail(.system(SystemError("read", path: report.path, errno: error)))
            }
        }
        if case .failure(let error) = DesktopClipboard.copy(offered, in: session) { return fail(error) }
        Inboxctl.write("Copied \(report.path) to the clipboard (\(session == .x11 ? "X11" : "Wayland"): "
                       + targets.joined(separator: ", ") + ")\n", to: 1)
        return 0
    }
}
