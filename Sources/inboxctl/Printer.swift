import InboxCore
import InboxSystem

/// What became of one file given to `inboxctl print`.
struct PrintedFile {
    let file: String
    var destination: String
    /// `DEST-N` once a job was created.
    var job: String?
    /// The job as last seen, when it was followed.
    var state: PrintJobStatus?
    /// Why it did not print; nil when its job completed (or was queued, with --no-wait).
    var error: String?
    /// The exit status it calls for.
    var exitStatus: CInt = 0

    var json: String {
        JSONText.object([
            ("file", JSON.quote(file)), ("destination", JSON.quote(destination)),
            ("job", job.map(JSON.quote) ?? "null"), ("state", state.map { JSON.quote($0.state.name) } ?? "null"),
            ("reasons", JSONText.array(state?.reasons ?? [])),
            ("pages", state?.pagesCompleted.map(String.init) ?? "null"), ("error", error.map(JSON.quote) ?? "null"),
        ])
    }
}

/// Prints files on one destination: opens each once with the no-link rules, types it as the agent would, decides how
/// it goes (`PrintPlan`), converts it with the preview generators when it must, sends it and follows its job.
final class Printer {
    let inspection: Inspection
    let destination: PrintDestination
    let settings: AgentSettings
    let follow: Bool
    /// Progress as a line updated in place on stderr (a terminal).
    let progress: Bool
    /// Made at the first file that needs converting: its scratch directory holds the PDFs until `close`.
    private var renderer: PreviewRenderer?

    init(inspection: Inspection, destination: PrintDestination, settings: AgentSettings, follow: Bool, progress: Bool) {
        self.inspection = inspection
        self.destination = destination
        self.settings = settings
        self.follow = follow
        self.progress = progress
    }

    func close() { renderer?.close() }

    func print(_ file: String, request: PrintRequest) -> PrintedFile {
        var printed = PrintedFile(file: file, destination: destination.name)
        func fail(_ message: String, _ status: CInt = 1) -> PrintedFile {
            printed.error = message
            printed.exitStatus = status
            return printed
        }
        let held: Inspection.HeldDocument
        switch Inspection.open(file) {
        case .success(let opened): held = opened
        case .failure(let error): return fail("\(error)")
        }
        defer { held.descriptor.close() }
        let report: FileReport
        switch inspection.inspect(held, path: file) {
        case .success(let inspected): report = inspected
        case .failure(let error): return fail("\(error)")
        }
        let type = report.resolved.identifier
        var mimeTypes = inspection.catalog.database.declaration(for: type)?.mimeTypes ?? []
        if let sniffed = report.sniffed, !mimeTypes.contains(sniffed) { mimeTypes.append(sniffed) }
        let generator = PreviewPlan.generator(chain: inspection.catalog.conformanceChain(of: type), mimeTypes: mimeTypes,
                                              package: report.package != nil, thumbnailers: [])
        let document = PreviewDocument(descriptor: held.descriptor, name: report.name, contentType: type,
                                       mimeTypes: mimeTypes, size: Int64(held.status.st_size),
                                       package: report.package != nil)
        let sent: FileDescriptor, format: String
        var converted: FileDescriptor?
        defer { converted?.close() }
        switch PrintPlan.decide(generator: generator, mimeTypes: mimeTypes, takes: destination.supports(format:)) {
        case .send(let taken):
            sent = held.descriptor
            format = taken
        case .convert(let with):
            let renderer: PreviewRenderer
            switch makeRenderer() {
            case .success(let made): renderer = made
            case .failure(let error): return fail("cannot prepare the conversion: \(error)")
            }
            switch renderer.pdf(of: document, with: with) {
            case .success(let pdf): converted = pdf
            case .failure(let error): return fail("cannot make a PDF of it: \(error)")
            }
            sent = converted!
            format = "application/pdf"
        case .noConverter:
            return fail("nothing converts \(type) into a document a printer takes; nothing was sent")
        case .formatNotTaken(let taken):
            return fail("\(PrintError.unsupportedFormat(destination: destination.name, format: taken)); nothing was sent")
        }
        let jobID: CInt
        switch destination.submit(sent, documentName: report.name, format: format, request: request) {
        case .success(let id): jobID = id
        case .failure(let error): return fail("\(error)", PrintCommand.status(of: error))
        }
        let job = "\(destination.queue)-\(jobID)"
        printed.job = job
        guard follow else { return printed }
        return self.follow(jobID, job: job, title: request.title, printed: printed)
    }

    /// Follows a job until it ends, its queue stops, or a signal; its progress on a terminal.
    private func follow(_ jobID: CInt, job: String, title: String, printed: PrintedFile) -> PrintedFile {
        var printed = printed
        var shown = false
        defer { if shown { Inboxctl.write("\r\u{1B}[K", to: 2) } }
        while true {
            let status: PrintJobStatus
            switch destination.status(ofJob: jobID) {
            case .success(let now): status = now
            case .failure(.jobGone(let id)):
                // Ended and purged between two looks (a server that keeps no job history): the server took it.
                if progress {
                    Inboxctl.write("\r\u{1B}[K\(title): sent to \(destination.name) (\(job)); "
                                   + "\(PrintError.jobGone(id))\n", to: 2)
                    shown = false
                }
                return printed
            case .failure(let error):
                printed.error = "\(error) while following \(job)"
                printed.exitStatus = PrintCommand.status(of: error)
                return printed
            }
            printed.state = status
            if status.state.isFinal || status.printerStopped || Interruption.signal != 0 {
                break
            }
            if progress {
                Inboxctl.write("\r\u{1B}[K" + Self.progressLine(title, destination: destination.name, status), to: 2)
                shown = true
            }
            PrintDestination.pause(.milliseconds(200))
        }
        guard let status = printed.state else { return printed }
        if Interruption.signal != 0 {
            printed.error = "stopped following \(job), which goes on"
            return printed
        }
        if status.printerStopped {
            printed.error = "\(PrintError.stopped(destination: destination.name, reasons: [], message: status.message)); "
                + "\(job) stays queued"
            printed.exitStatus = PrintCommand.stoppedStatus
            return printed
        }
        if status.state != .completed {
            var why = status.reasons
            if let message = status.message { why.append(message) }
            printed.error = "\(job) was \(status.state.name)" + (why.isEmpty ? "" : " (" + why.joined(separator: "; ") + ")")
            printed.exitStatus = 1
        } else if progress {
            shown = false
            let pages = status.pagesCompleted.map { ", \($0) page\($0 == 1 ? "" : "s")" } ?? ""
            Inboxctl.write("\r\u{1B}[K\(title): printed on \(destination.name) (\(job))\(pages)\n", to: 2)
        }
        return printed
    }

    /// "report.pdf: printing on office-laser, page 2 of 3".
    static func progressLine(_ title: String, destination: String, _ status: PrintJobStatus) -> String {
        switch status.state {
        case .processing:
            var line = "\(title): printing on \(destination)"
            if let done = status.pagesCompleted, done > 0 {
                line += ", page \(done)" + (status.pages.map { " of \($0)" } ?? "")
            }
            return line
        case .held: return "\(title): held on \(destination)"
        default: return "\(title): waiting on \(destination)"
        }
    }

    private func makeRenderer() -> Result<PreviewRenderer, SystemError> {
        if let renderer { return .success(renderer) }
        var options = PreviewRenderer.Options()
        options.timeout = PreviewRenderer.Options.timeout(agent: settings.defaultTimeout)
        do {
            let made = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity, landlockABI: LandlockRuleset.abi(),
                                           options: options, thumbnailers: [])
            renderer = made
            return .success(made)
        } catch {
            return .failure(error)
        }
    }
}
