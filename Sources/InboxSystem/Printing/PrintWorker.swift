import Glibc
import InboxCore

/// The agent's print job for a print hot folder (`Print=DEST` in a registration): `inboxd --print-job DEST GENERATOR
/// [MIME-TYPE...]`, started by `PrintLauncher` for each attempt in place of a handler program, under the
/// registration's identity and Landlock ruleset like one.
///
/// Its standard input is the Inbox copy, reopened read-only from the descriptor the agent holds leased (never opened
/// by name); its environment is a handler's (`INBOX_NAME` is the job's title); GENERATOR is the word of the Quick
/// Look generator that would preview the document (`PreviewGenerator.word`), the MIME types those of its type. It
/// finds DEST, decides how the document goes (`PrintPlan`), converts it to PDF with the preview generators when it
/// must, submits it, and follows the job to its end, reporting each step on stdout as `PrintReport` lines; stderr is
/// the handler's output (the journal). libcups and the converters run here, never in the agent.
///
/// Exit status: 0 when the job completed; 75 when the destination could not take it now (deferred: stopped, holding
/// the job, not accepting jobs, no server); 1 when it cannot be printed or its job was canceled or aborted; 2 for a
/// command line the agent never gives; 128 + the signal when stopped (its job, if not yet ended, is canceled).
public enum PrintWorker {
    /// The hidden command-line argument that runs the job instead of the agent.
    public static let argument = "--print-job"

    /// How long between two looks at the job: short at first (most jobs end within a second), then longer.
    static let firstPause: Duration = .milliseconds(100)
    static let longestPause: Duration = .seconds(2)

    /// The signals that stop it: blocked, and taken while it waits between two looks.
    static let stopSignals = [SIGTERM, SIGINT, SIGHUP]

    public static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2, let generator = PreviewGenerator(word: arguments[1]) else {
            return finish(.failed("usage: inboxd \(argument) DEST GENERATOR [MIME-TYPE...]"), status: 2)
        }
        Signals.block(stopSignals)
        let destinationName = arguments[0]
        let mimeTypes = Array(arguments.dropFirst(2))
        let title = CurrentProcess.environment("INBOX_NAME") ?? "document"
        let document = FileDescriptor(rawValue: 0)
        let size: Int64
        do { size = Int64(try document.status().st_size) } catch {
            return finish(.failed("cannot read its document: \(SystemError("fstat", errno: error))"), status: 1)
        }

        let destination: PrintDestination
        switch PrintDestination.find(destinationName) {
        case .success(let found): destination = found
        case .failure(let error): return finish(error)
        }
        if let error = destination.checkReady() { return finish(error) }

        var sent = document
        var format: String
        var convertedBy: String?
        var renderer: PreviewRenderer?
        defer { renderer?.close() }
        switch PrintPlan.decide(generator: generator, mimeTypes: mimeTypes, takes: destination.supports(format:)) {
        case .send(let taken):
            format = taken
        case .convert(let with):
            let made: PreviewRenderer
            do {
                made = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity, landlockABI: LandlockRuleset.abi(),
                                           options: PreviewRenderer.Options(), thumbnailers: [])
            } catch {
                return finish(.failed("cannot prepare the conversion to PDF: \(error)"), status: 1)
            }
            renderer = made
            let item = PreviewDocument(descriptor: document, name: title,
                                       contentType: CurrentProcess.environment("INBOX_CONTENT_TYPE") ?? "public.data",
                                       mimeTypes: mimeTypes, size: size,
                                       package: CurrentProcess.environment("INBOX_PACKAGE") == "1")
            switch made.pdf(of: item, with: with) {
            case .success(let pdf): sent = pdf
            case .failure(let error): return finish(.failed("cannot make a PDF of it: \(error)"), status: 1)
            }
            format = "application/pdf"
            convertedBy = with.word
        case .noConverter:
            return finish(.failed("nothing converts \(CurrentProcess.environment("INBOX_CONTENT_TYPE") ?? "its type") "
                                  + "into a document a printer takes"), status: 1)
        case .formatNotTaken(let taken):
            return finish(.failed("\(PrintError.unsupportedFormat(destination: destination.name, format: taken))"),
                          status: 1)
        }

        let jobID: CInt
        switch destination.submit(sent, documentName: title, format: format, request: PrintRequest(title: title)) {
        case .success(let id): jobID = id
        case .failure(let error): return finish(error)
        }
        let job = "\(destination.queue)-\(jobID)"
        report(.submitted(job: job, format: format, converted: convertedBy))
        return follow(jobID, job: job, on: destination)
    }

    /// Looks at the job until it ends: completed → 0; canceled or aborted → 1; its queue stopped or the job held →
    /// canceled (nothing of it printed yet, or the rest is printed again) and 75; a stop signal → canceled, 128 + it.
    /// A job the server no longer knows ended and was purged (a server that keeps no job history): done, said so.
    /// A server that stops answering is asked again until it does: the job is in its spool, and goes on when it is
    /// back (the agent's TimeoutSec= bounds the wait).
    static func follow(_ jobID: CInt, job: String, on destination: PrintDestination) -> Int32 {
        var pause = firstPause
        var lastStatus: PrintJobStatus?
        while true {
            let looked = destination.status(ofJob: jobID)
            if case .failure(.jobGone) = looked {
                // Ended and purged between two looks: the server took the document, and what became of it is its own.
                report(.ended(state: PrintReport.purged, pages: lastStatus?.pagesCompleted, reasons: [],
                              message: "\(PrintError.jobGone(jobID))"))
                return 0
            }
            if case .success(let status) = looked {
                lastStatus = status
                if status.state.isFinal {
                    report(.ended(state: status.state.name, pages: status.pagesCompleted, reasons: status.reasons,
                                  message: status.message))
                    if status.state == .completed { return 0 }
                    let why = ([status.state.name] + status.reasons + (status.message.map { [$0] } ?? []))
                        .joined(separator: "; ")
                    return finish(.failed("\(job) ended \(why)"), status: 1)
                }
                if status.printerStopped || status.state == .held {
                    _ = destination.cancel(jobID)
                    report(.ended(state: "canceled", pages: status.pagesCompleted, reasons: status.reasons,
                                  message: status.message))
                    let what = status.state == .held ? "held \(job)" : "stopped with \(job) on it"
                    let said = ([status.message].compactMap { $0 } + status.reasons).joined(separator: "; ")
                    return finish(.deferred("\(destination.name) \(what)\(said.isEmpty ? "" : " (\(said))"); "
                                            + "the job was canceled, to be sent again"), status: 75)
                }
            }
            if let signal = Signals.wait(for: stopSignals, upTo: pause) {
                _ = destination.cancel(jobID)
                report(.ended(state: "canceled", pages: lastStatus?.pagesCompleted, reasons: ["stopped by inboxd"],
                              message: nil))
                return 128 + signal
            }
            pause = min(pause * 2, longestPause)
        }
    }

    /// Ends with what a CUPS error calls for: a stopped or refusing destination and a server that does not answer
    /// are deferred (75), everything else fails the attempt (1).
    static func finish(_ error: PrintError) -> Int32 {
        switch error {
        case .unreachable, .stopped, .notAccepting: finish(.deferred("\(error)"), status: 75)
        default: finish(.failed("\(error)"), status: 1)
        }
    }

    static func finish(_ last: PrintReport, status: Int32) -> Int32 {
        report(last)
        return status
    }

    /// One line on stdout, written whole (the agent reads it through a pipe).
    static func report(_ report: PrintReport) {
        let bytes = Array(report.line.utf8)
        _ = FileDescriptor(rawValue: 1).write(all: bytes)
    }
}
