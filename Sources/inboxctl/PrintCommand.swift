import InboxCore
import InboxSystem

/// `inboxctl print FILE...`: Quick Look's print. Each file, typed as the agent types it, goes to a CUPS destination as it
/// is when the destination takes its format, else as a PDF made by the built-in generators; each job is followed to
/// its end unless `--no-wait`.
enum PrintCommand: InboxctlCommand {
    static let name = "print"
    static let summary = "Print files through CUPS"
    static let usage = "inboxctl print [--printer DEST] [--copies N] [--pages RANGES] [--title TITLE] [-o NAME=VALUE]... "
        + "[--no-wait] [--json] FILE..."

    static let help = """
        OVERVIEW: Print files through CUPS.

        Each FILE, in order, is typed as the agent types it (content included) and sent as a job
        of its own to DEST, else to the destination lp would use: $PRINTER, $LPDEST, the
        lpoptions default, then the server's (CUPS_SERVER and client.conf name the server).
        PDF, PostScript, pictures and text go as they are when the destination takes their
        format (text is drawn as its preview is, as PDF, where PDF is taken); RTF, Office,
        OpenDocument, CSV and iWork documents are first made into a PDF by the generators of
        inboxctl preview, sandboxed and bounded as there. A file is opened once, without
        following a symbolic link, and read through that descriptor. A type nothing converts is
        an error naming it, and nothing of it is sent.

        Each job is followed to its end, its progress on a terminal; with --no-wait its id
        (DEST-N) is printed and it is left to the server. The exit status is 0 when every job
        completed (or was queued, with --no-wait); 1 when a file could not be printed or its job
        was canceled or aborted (said with its reasons, after the others are sent); 3 when the
        destination is stopped or refuses jobs (nothing more is sent; a job already queued on it
        stays queued); 4 when no CUPS server answers; 128 + the signal when interrupted (a job
        sent goes on).

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file (or package document) to print

        OPTIONS:
          --printer DEST          The destination (a printer or class, NAME or NAME/INSTANCE)
          --copies N              Copies of each file (1 to 9999)
          --pages RANGES          The pages to print, as 1-3,5
          --title TITLE           The job's title (default: the file's name)
          -o, --option NAME=VALUE  A job option, as lp -o takes it (repeatable)
          --no-wait               Print each job's id and do not follow it
          --json                  Say what became of each file, as JSON
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions(
        [.value("--printer"), .value("--copies"), .value("--pages"), .value("--title"), .value("--option", "-o"),
         .flag("--no-wait"), .flag("--json")], agentOptions: true, positionals: .any)

    /// Exit statuses beyond 0, 1 and 2.
    static let stoppedStatus: CInt = 3
    static let unreachableStatus: CInt = 4

    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if parsed.positionals.isEmpty { throw UsageError(message: "missing FILE") }
        if let copies = parsed.value("--copies"), Int(copies).map({ (1...9999).contains($0) }) != true {
            throw UsageError(message: "--copies '\(copies)' is not a number from 1 to 9999")
        }
        if let pages = parsed.value("--pages"), !PageRanges.isValid(pages) {
            throw UsageError(message: "--pages '\(pages)' is not a list of pages and ranges, such as 1-3,5")
        }
        if let title = parsed.value("--title"), title.utf8.count > 1024 {
            throw UsageError(message: "title '\(title.prefix(20))...' is over 1024 bytes")
        }
        for option in parsed.values("--option") {
            guard let equals = option.firstIndex(of: "="), equals != option.startIndex else {
                throw UsageError(message: "-o '\(option)' is not NAME=VALUE")
            }
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let settings = parsed.agent.settings(), let inspection = Inspection(settings) else { return 1 }
        let destination: PrintDestination
        switch PrintDestination.find(parsed.value("--printer")) {
        case .success(let found): destination = found
        case .failure(let error):
            Inboxctl.write("inboxctl: cannot print: \(error)\n", to: 2)
            return status(of: error)
        }
        var request = PrintRequest(title: "", copies: parsed.value("--copies").flatMap(Int.init),
                                   pageRanges: parsed.value("--pages"))
        request.options = parsed.values("--option").map { option in
            let equals = option.firstIndex(of: "=")!
            return (String(option[..<equals]), String(option[option.index(after: equals)...]))
        }
        return print(parsed.positionals, on: destination, request: request, title: parsed.value("--title"),
                     follow: !parsed.flag("--no-wait"), json: parsed.flag("--json"), inspection: inspection)
    }

    /// Prints `files` on `destination`, each a job titled `title` (default: the file's name), followed to its end
    /// when `follow`; the exit status. A stopped destination, or one that refuses jobs, is refused before anything is
    /// sent.
    static func print(_ files: [String], on destination: PrintDestination, request: PrintRequest, title: String?,
                      follow: Bool, json: Bool, inspection: Inspection) -> CInt {
        if let error = destination.checkReady() {
            Inboxctl.write("inboxctl: cannot print: \(error); nothing was sent\n", to: 2)
            return status(of: error)
        }
        Interruption.catchSignals()
        var request = request
        let printer = Printer(inspection: inspection, destination: destination, settings: inspection.settings,
                              follow: follow, progress: Terminal.isTerminal(.standardError))
        var status: CInt = 0
        var documents: [String] = []
        for file in files where Interruption.signal == 0 {
            request.title = title ?? lastPathComponent(file)
            let printed = printer.print(file, request: request)
            documents.append(printed.json)
            if let error = printed.error {
                Inboxctl.write("inboxctl: cannot print \(file): \(error)\n", to: 2)
            } else if !json, !printer.follow, let job = printed.job {
                Inboxctl.write(job + "\n", to: 1)
            }
            if printed.exitStatus != 0 { status = printed.exitStatus }
            // A stopped queue or a lost server takes every file after this one too.
            if printed.exitStatus == stoppedStatus || printed.exitStatus == unreachableStatus { break }
        }
        printer.close()
        if json { Inboxctl.write("{\"files\":[" + documents.joined(separator: ",") + "]}\n", to: 1) }
        let signal = Interruption.signal
        return signal != 0 ? 128 + signal : status
    }

    static func status(of error: PrintError) -> CInt {
        switch error {
        case .unreachable: unreachableStatus
        case .stopped, .notAccepting: stoppedStatus
        default: 1
        }
    }
}

/// `--pages`: `page-ranges` as lp takes it, checked before it is sent.
enum PageRanges {
    static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { part in
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            let numbers = bounds.map { Int($0) }
            guard (1...2).contains(bounds.count), numbers.allSatisfy({ ($0 ?? 0) >= 1 }) else { return false }
            return bounds.count == 1 || numbers[0]! <= numbers[1]!
        }
    }
}
