import Glibc
import InboxCore

/// Prints the deliveries of `Print=` registrations (print hot folders): each attempt is one `inboxd --print-job`
/// process (`PrintWorker`), started and watched by the spawner exactly as a handler's process is — the registration's
/// identity, Landlock ruleset and limits, stderr to the journal, death with the agent, the reaper after it — with the
/// Inbox copy, reopened read-only from the leased descriptor, as its standard input. libcups and the converters run
/// there, so nothing of the printing blocks the event loop: the job's reports come back through a pipe on its stdout,
/// read as they come. Each becomes a journal entry (`print-submitted`, `print-ended`, with INBOX_PRINTER and
/// INBOX_PRINT_JOB); the last, with the exit status, is the attempt's outcome: completed → done, deferred → tried again
/// without using an attempt, failed → a failed attempt with its reason.
final class PrintLauncher {
    /// One print job's process: a handler process's attempt (its pid, relay, stop), and what the job reports.
    final class Attempt: ProcessLauncher.Attempt {
        /// The agent's end of the report pipe, and its source while the process writes.
        fileprivate var reports: FileDescriptor?
        fileprivate var reportSource: EventSource?
        /// Bytes read that do not yet end a line; never more than a report's bound.
        fileprivate var partial: [UInt8] = []
        fileprivate var overlong = false
        /// The job, once it was submitted; the last deferral or failure it reported.
        fileprivate var job: String?
        fileprivate var verdict: PrintReport?
        fileprivate var completed = false
    }

    private let loop: EventLoop
    private let logger: Logger
    private let spawner: HandlerSpawner
    private var catalog: HandlerCatalog
    /// The agent's own program, which runs as the job (`PrintWorker`).
    private let executable: String
    /// CUPS_SERVER as the agent has it: the server its jobs go to, unless a registration's Environment= names another.
    private let passing: [String]
    private var running: [pid_t: Attempt] = [:]

    init(loop: EventLoop, logger: Logger, spawner: HandlerSpawner, catalog: HandlerCatalog) {
        self.loop = loop
        self.logger = logger
        self.spawner = spawner
        self.catalog = catalog
        executable = CurrentProcess.executablePath ?? "/proc/self/exe"
        passing = CurrentProcess.environment("CUPS_SERVER").map { ["CUPS_SERVER=" + $0] } ?? []
    }

    func use(_ catalog: HandlerCatalog) { self.catalog = catalog }

    func start(_ delivery: Delivery, copy: FileDescriptor, registration: HandlerRegistration, container: Container,
               ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        guard let printer = registration.printer else { return .refused("its registration names no printer") }
        let document: FileDescriptor
        do { document = try copy.reopenedReadOnly(directory: delivery.isPackage) } catch {
            return .failed("cannot reopen \(delivery.name) for its print job: \(SystemError("open", errno: error))")
        }
        defer { document.close() }
        var ends: [CInt] = [-1, -1]
        guard sys_pipe2(&ends, O_CLOEXEC) == 0 else { return .failed("\(SystemError("pipe2", errno: .current))") }
        let reader = FileDescriptor(rawValue: ends[0])
        let writer = FileDescriptor(rawValue: ends[1])
        defer { writer.close() }
        let mimeTypes = catalog.database.declaration(for: delivery.contentType)?.mimeTypes ?? []
        let generator = PreviewPlan.generator(chain: delivery.contentTypes, mimeTypes: mimeTypes,
                                              package: delivery.isPackage, thumbnailers: [])
        // The Quick Look generator that would preview it: what the job converts it with, when the destination does
        // not take it as it is (a desktop thumbnailer converts nothing a printer takes).
        let arguments = [executable, PrintWorker.argument, printer.description, generator.word ?? "facts"] + mimeTypes
        let spawned = spawner.spawn(registration, container: container, stdin: [], deliveryIDs: [delivery.id]) {
            identity, _, output in
            var request = SpawnRequest(handler: registration, delivery: delivery, tmp: container.tmp, identity: identity,
                                       passing: self.passing, standardInput: document, output: output)
            request.executablePath = self.executable
            request.arguments = arguments
            request.standardOutput = writer
            return request
        }
        let started: HandlerSpawner.Spawned
        switch spawned {
        case .failure(let failure):
            reader.close()
            return failure.launchStart
        case .success(let process): started = process
        }
        let attempt = Attempt(pid: started.process.pid, delivery: delivery, sandboxed: started.sandboxed)
        attempt.output = started.output
        attempt.reports = reader
        do {
            try reader.setNonBlocking()
            attempt.reportSource = try loop.addIO(reader) { [unowned self, unowned attempt] _ in self.read(attempt) }
        } catch {
            spawner.abandon(started)
            reader.close()
            return .failed("cannot read its print job's reports: \(error)")
        }
        switch spawner.watch(started, exited: { [unowned self, unowned attempt] status in
            self.exited(attempt, status: status, ended: ended)
        }) {
        case .success(let source): attempt.childSource = source
        case .failure(let failure):
            closeReports(attempt)
            return failure.launchStart
        }
        running[attempt.pid] = attempt
        return .started(attempt)
    }

    /// Reads what the job wrote; each whole line is a report.
    private func read(_ attempt: Attempt) {
        guard let reader = attempt.reports else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(Errno) in try reader.read(into: bytes) }
            }
            guard case .success(let count) = result, count > 0 else {
                // At its end (the job exited): nothing more will come.
                if case .success = result { attempt.reportSource = nil }
                return
            }
            for byte in buffer[..<count] {
                if byte == UInt8(ascii: "\n") {
                    if !attempt.overlong, let report = PrintReport.parse(attempt.partial) { take(report, of: attempt) }
                    attempt.partial.removeAll(keepingCapacity: true)
                    attempt.overlong = false
                } else if attempt.partial.count < PrintReport.maximumLine {
                    attempt.partial.append(byte)
                } else {
                    attempt.overlong = true
                }
            }
        }
    }

    /// A report: a journal entry for the job's steps; the attempt's verdict for the rest.
    private func take(_ report: PrintReport, of attempt: Attempt) {
        let delivery = attempt.delivery
        let printer = delivery.printer ?? "?"
        switch report {
        case .submitted(let job, let format, let converted):
            attempt.job = job
            let how = converted.map { " (converted to PDF by the \($0) generator)" } ?? ""
            logger.log(.info, "Printing \(delivery.name) on \(printer) as job \(job)\(how)", event: .printSubmitted,
                       fields: delivery.journalFields() + [("INBOX_PRINT_JOB", job), ("INBOX_PRINT_FORMAT", format),
                                                           ("INBOX_PRINT_CONVERTED", converted)])
        case .ended(let state, let pages, let reasons, let message):
            attempt.completed = PrintReport.isDone(state)
            let pagesText = pages.map { ", \($0) page\($0 == 1 ? "" : "s")" } ?? ""
            let why = (reasons + (message.map { [$0] } ?? [])).joined(separator: "; ")
            logger.log(state == "completed" ? .info : attempt.completed ? .notice : .warning,
                       "Job \(attempt.job ?? "?") (\(delivery.name)) on \(printer) \(state)\(pagesText)"
                       + (why.isEmpty ? "" : " (\(why))"), event: .printEnded,
                       fields: delivery.journalFields() + [("INBOX_PRINT_JOB", attempt.job), ("INBOX_PRINT_STATE", state),
                                                           ("INBOX_PRINT_PAGES", pages.map(String.init)),
                                                           ("INBOX_PRINT_REASONS", reasons.isEmpty ? nil : reasons.joined(separator: " ")),
                                                           ("INBOX_PRINT_MESSAGE", message)])
        case .deferred, .failed:
            attempt.verdict = report
        }
    }

    /// The job exited: what is left in the pipe is read, then its end reported as the attempt's outcome.
    private func exited(_ attempt: Attempt, status: ExitStatus, ended: (DeliveryOutcome) -> Void) {
        running[attempt.pid] = nil
        attempt.hasExited = true
        attempt.childSource = nil
        read(attempt)
        closeReports(attempt)
        if let output = attempt.output {
            attempt.output = nil
            spawner.finish(output, fields: attempt.delivery.journalFields())
        }
        ended(Self.outcome(status, verdict: attempt.verdict, completed: attempt.completed))
    }

    /// Exit 0 is done only when the job said it completed; 75 with a deferral is deferred; 1 with a failure fails
    /// with its reason; anything else is the process's own end.
    static func outcome(_ status: ExitStatus, verdict: PrintReport?, completed: Bool) -> DeliveryOutcome {
        switch (status, verdict) {
        case (.exited(0), _):
            return completed ? .exited(0) : .printFailed("the print job exited without its job completing")
        case (.exited(RetryPolicy.temporaryFailureStatus), .deferred(let why)?): return .deferred(why)
        case (.exited(1), .failed(let why)?): return .printFailed(why)
        default: return DeliveryOutcome(status)
        }
    }

    private func closeReports(_ attempt: Attempt) {
        attempt.reportSource = nil
        attempt.reports?.close()
        attempt.reports = nil
    }
}
