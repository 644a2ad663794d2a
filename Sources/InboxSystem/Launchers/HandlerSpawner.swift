import Glibc
import InboxCore

/// The one way a handler process is started and watched, for a file, a batch or a resident instance: its identity, its
/// Landlock ruleset (or the refusal when one is required and missing), its Documents/ as working directory, its stdout
/// and stderr into an `OutputRelay`, its stdin as a sealed memory file, and death with the agent. It watches each
/// process through the event loop and, when one exits, hands it to the `Reaper` before its launcher hears of it, so
/// that what any handler leaves running is ended the same way. It owns the Landlock ruleset per handler and the relays
/// of exited processes still writing to a journal that pushed back; the processes themselves are their launchers'.
final class HandlerSpawner {
    /// A handler process `spawn` started: the caller watches it (`watch`) and finishes its output (`finish`).
    struct Spawned {
        let process: SpawnedProcess
        let output: OutputRelay
        /// It runs under its Landlock ruleset (read and remove only in its Inbox).
        let sandboxed: Bool
        /// Whose it is and the uid it runs as: what it leaves running is judged by them (`Reaper`).
        let handler: String
        let uid: UInt32
        let deliveryIDs: [String]
    }

    /// Why `spawn` started nothing: as `LaunchStart.refused` and `.failed`.
    enum Failure: Error {
        case refused(String)
        case failed(String)

        var reason: String {
            switch self {
            case .refused(let reason), .failed(let reason): reason
            }
        }

        /// What a launcher's `start` returns for it.
        var launchStart: LaunchStart {
            switch self {
            case .refused(let reason): .refused(reason)
            case .failed(let reason): .failed(reason)
            }
        }
    }

    private let loop: EventLoop
    private let logger: Logger
    let landlockABI: Int
    private let landlockMode: LandlockMode
    /// Ends what each process leaves running.
    let reaper: Reaper
    private var catalog: HandlerCatalog
    /// One ruleset per handler, applied by each of its children; rebuilt after a reload.
    private var rulesets: [String: LandlockRuleset] = [:]
    /// Relays of exited handlers still writing to a journal that pushed back.
    private var flushing: [ObjectIdentifier: OutputRelay] = [:]

    init(loop: EventLoop, logger: Logger, catalog: HandlerCatalog, landlockABI: Int, landlockMode: LandlockMode,
         reaper: Reaper) {
        self.loop = loop
        self.logger = logger
        self.catalog = catalog
        self.landlockABI = landlockABI
        self.landlockMode = landlockMode
        self.reaper = reaper
    }

    /// Says once, at start-up, how handlers will be confined.
    func reportConfinement() {
        if landlockABI > 0 {
            logger.log(.info, "Handlers are sandboxed with Landlock ABI \(landlockABI)",
                       fields: ["INBOX_LANDLOCK_ABI": String(landlockABI)])
            return
        }
        let why = landlockMode == .off ? "Landlock is switched off (Landlock=off)" : "the kernel offers no Landlock"
        let consequence = landlockMode == .require
            ? "handlers are refused (Landlock=require)"
            : "handlers are confined by permissions and the after-exit check only; those with RequireLandlock=yes are refused"
        logger.log(.warning, "\(why): \(consequence)", fields: ["INBOX_LANDLOCK_ABI": "0"])
    }

    /// A reload swapped the catalog: identities are looked up in the new one, rulesets built again.
    func use(_ catalog: HandlerCatalog) {
        self.catalog = catalog
        rulesets.removeAll()
    }

    /// Every handler process it starts runs under Landlock (a ruleset that cannot be built fails the start), so an
    /// attempt of a batch or a resident instance is known to be sandboxed before its process exists.
    var sandboxesHandlers: Bool { landlockABI > 0 }

    /// Starts a handler process: `stdin` as its standard input, its lines naming `deliveryIDs` and the process.
    /// `request` makes the rest of the request from the identity and the two descriptors (stdin, the output's end).
    func spawn(_ registration: HandlerRegistration, container: Container, stdin stdinDocument: [UInt8],
               deliveryIDs: [String], request makeRequest: (Identity?, FileDescriptor, FileDescriptor) -> SpawnRequest)
        -> Result<Spawned, Failure> {
        var identity: Identity?
        switch catalog.identities[registration.identifier] {
        case .success(let resolved)?: identity = resolved
        case .failure(let error)?: return .failure(.failed(error.description))
        case nil: break
        }
        var ruleset: LandlockRuleset?
        if landlockABI > 0 {
            do throws(SystemError) {
                ruleset = try sandbox(for: registration, in: container)
            } catch {
                return .failure(.failed("cannot build its Landlock ruleset: \(error)"))
            }
        } else if landlockMode == .require || registration.requiresLandlock {
            let why = registration.requiresLandlock ? "its registration says RequireLandlock=yes" : "Landlock=require"
            return .failure(.refused("refused: \(why), and Landlock is not available"))
        }
        let output: OutputRelay
        do {
            output = try OutputRelay(loop: loop, logger: logger, handler: registration.identifier, deliveryIDs: deliveryIDs,
                                     destination: logger.handlerOutput(), limit: registration.outputLimit)
        } catch {
            return .failure(.failed("\(error)"))
        }
        // The handler has its end; once it runs (or could not be started), the agent closes its copy.
        defer { output.handlerEnd.close() }
        let process: SpawnedProcess
        do {
            let stdin = try makeStandardInput(name: "inboxd-delivery", contents: stdinDocument)
            defer { stdin.close() }
            var request = makeRequest(identity, stdin, output.handlerEnd)
            request.workingDirectory = container.documents
            request.landlockRuleset = ruleset?.descriptor
            // A handler dies with the agent, so a crash cannot leave it running beside the redelivery of its file.
            // PR_SET_PDEATHSIG fires when the spawning *thread* exits; the agent is single-threaded (its one thread
            // lives as long as it does). The child sets it after its credential change and checks the parent is still
            // there (spawn.c); what the handler starts itself is stopped at the next start (Reaper.stopEarlierRun).
            request.parentDeathSignal = Signal.kill.rawValue
            process = try InboxSystem.spawn(request)
        } catch {
            output.finish(fields: [], closed: { _ in })
            return .failure(.failed("\(error)"))
        }
        // The event loop watches the child through a pidfd of its own; ours is not needed.
        process.pidfd.close()
        output.attribute(pid: process.pid)
        return .success(Spawned(process: process, output: output, sandboxed: ruleset != nil,
                                handler: registration.identifier, uid: identity?.uid ?? CurrentProcess.effectiveUserID,
                                deliveryIDs: deliveryIDs))
    }

    /// Watches a process `spawn` started: when it ends, the reaper ends what it left running, then `exited` is called,
    /// from the event loop. Without a child source its end could never be learnt, so it is stopped at once (`abandon`)
    /// and the start counts as failed.
    func watch(_ started: Spawned, exited: @escaping (ExitStatus) -> Void) -> Result<EventSource, Failure> {
        let pid = started.process.pid
        do throws(SystemError) {
            let source = try loop.addChild(pid: pid) { [unowned self] status in
                self.reaper.exited(pid)
                exited(status)
            }
            source.setPriority(EventPriority.childExit)
            reaper.track(pid, handler: started.handler, uid: started.uid,
                         deliveryID: started.deliveryIDs.count == 1 ? started.deliveryIDs[0] : nil)
            return .success(source)
        } catch {
            abandon(started)
            return .failure(.failed("\(error)"))
        }
    }

    /// Stops a process `spawn` started that cannot be watched or used: killed, reaped, its output finished.
    func abandon(_ started: Spawned) {
        _ = Signals.send(.kill, to: started.process.pid)
        _ = waitForExit(pid: started.process.pid)
        started.output.finish(fields: [], closed: { _ in })
    }

    /// Finishes the relay of a process that exited: reads what it left in its pipe and says what was dropped, keeping
    /// the relay until the journal took the rest.
    func finish(_ output: OutputRelay, fields: @autoclosure () -> JournalFields) {
        flushing[ObjectIdentifier(output)] = output
        output.finish(fields: fields()) { [unowned self] relay in self.flushing[ObjectIdentifier(relay)] = nil }
    }

    /// The handler's Landlock ruleset: read and run everything, read and remove in its Inbox, full access to its
    /// Documents/ and tmp/ (each on its own: the container root holds the Inbox) and to ReadWritePaths=; for a print
    /// job, sockets in /tmp.
    private func sandbox(for registration: HandlerRegistration, in container: Container) throws(SystemError) -> LandlockRuleset {
        if let ruleset = rulesets[registration.identifier] { return ruleset }
        let ruleset = try LandlockRuleset(abi: landlockABI)
        let all = LandlockAccess.all(abi: landlockABI)
        try ruleset.allow(.readExecute, beneath: "/")
        // Scripts say 2>/dev/null; writing there harms nobody.
        try ruleset.allow([.readFile, .writeFile], beneath: "/dev/null")
        try ruleset.allow(.readRemove, beneath: container.inbox.path)
        try ruleset.allow(all, beneath: container.documents)
        try ruleset.allow(all, beneath: container.tmp)
        for path in registration.readWritePaths { try ruleset.allow(all, beneath: path) }
        // A print job converts Office documents with LibreOffice, whose one-instance pipe is a socket in /tmp (never
        // $TMPDIR), made and removed there: only that, and /tmp's sticky bit keeps it to the job's own entries.
        if registration.printer != nil { try ruleset.allow([.makeSock, .removeFile], beneath: "/tmp") }
        rulesets[registration.identifier] = ruleset
        return ruleset
    }
}
