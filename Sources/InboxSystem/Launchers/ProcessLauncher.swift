import Glibc
import InboxCore

/// Starts one handler process per delivery: `Exec=` expanded for the file, the delivery on stdin and in the
/// environment, its identity, limits and Landlock ruleset, stdout and stderr to the journal through an `OutputRelay`
/// (at most the registration's OutputLimit=). It owns its processes: it watches each through the event loop, and
/// when one exits it stops what that handler left running.
final class ProcessLauncher: Launcher {
    /// One handler process.
    final class Attempt: LaunchedAttempt {
        let pid: Int32
        /// What it delivers (its journal fields name the relay's entry, built only if there is one); the first file of
        /// a batch.
        let delivery: Delivery
        var childSource: EventSource?
        /// Its stdout and stderr; finished when it exits.
        var output: OutputRelay?

        /// It runs under Landlock rules that refuse it any write to its Inbox copy.
        let sandboxed: Bool

        init(pid: Int32, delivery: Delivery, sandboxed: Bool) {
            self.pid = pid
            self.delivery = delivery
            self.sandboxed = sandboxed
        }

        var handler: String { delivery.handler }
        var deliveryID: String { delivery.id }

        /// Signals the handler's whole process group: it was made a session leader, so its descendants share its pid
        /// as group id. Safe from pid reuse while the leader is unreaped.
        func signalGroup(_ signal: CInt) {
            if Signals.send(signal, toGroup: pid) != nil { _ = Signals.send(signal, to: pid) }
        }
    }

    private let loop: EventLoop
    private let logger: Logger
    private let landlockABI: Int
    private let landlockMode: LandlockMode
    /// The agent's own children that are not handlers (its content sniffer): never taken for leftovers.
    private let ownChildren: () -> [pid_t]
    /// Resident handlers' instances: children of the agent that the resident launcher watches and reaps.
    var residentChildren: () -> [pid_t] = { [] }
    private var catalog: HandlerCatalog
    private var running: [pid_t: Attempt] = [:]
    /// Child sources that only reap orphans the agent inherited as a subreaper and killed.
    private var orphans: [pid_t: EventSource] = [:]
    /// The agent's own children that are not handlers (its content sniffer).
    func isOwnChild(_ pid: pid_t) -> Bool { ownChildren().contains(pid) }

    /// Sweeping at the agent's stop (`endLeftovers`): called once no leftover is left.
    private var leftoversEnded: (() -> Void)?
    private var leftoverUIDs: Set<UInt32> = []
    private var sweepSource: EventSource?
    /// One ruleset per handler, applied by each of its children; rebuilt after a reload.
    private var rulesets: [String: LandlockRuleset] = [:]
    /// Relays of exited handlers still writing to a journal that pushed back.
    private var flushing: [ObjectIdentifier: OutputRelay] = [:]

    init(loop: EventLoop, logger: Logger, catalog: HandlerCatalog, landlockABI: Int, landlockMode: LandlockMode,
         ownChildren: @escaping () -> [pid_t]) {
        self.loop = loop
        self.logger = logger
        self.catalog = catalog
        self.landlockABI = landlockABI
        self.landlockMode = landlockMode
        self.ownChildren = ownChildren
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

    /// At start-up, before anything is relaunched: stops what an earlier run's handlers may still be running. After a
    /// crash PR_SET_PDEATHSIG has killed each handler, but not what it started (a child of a shell script, a daemon),
    /// which would go on working on a file while it is delivered again. Every process of an identity of its own
    /// (`uids`: the owners of the containers) is such a leftover. Processes of a named `User=`, or of the agent's own
    /// uid when it is not root, cannot be told from that user's others and are left alone: for those handlers only
    /// the direct child is sure to be gone (docs/design.md, Reliability).
    func stopEarlierRun(uids: Set<UInt32>) {
        let killed = Leftovers.kill(uids: uids)
        if killed > 0 {
            logger.log(.notice, "Killed \(killed) process(es) that handlers of an earlier run left running",
                       fields: ["INBOX_KILLED": String(killed)])
        }
    }

    func use(_ catalog: HandlerCatalog) {
        self.catalog = catalog
        rulesets.removeAll()
    }

    func start(_ delivery: Delivery, copy: FileDescriptor, registration: HandlerRegistration, container: Container,
               ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        startProcess(for: [delivery], registration: registration, container: container) { status in
            ended(DeliveryOutcome(status))
        }
    }

    /// Starts one process for a file, or for a batch (Exec= with %F or %U): then the files are its arguments, stdin is
    /// a JSON array, and its environment has no file's INBOX_* variables (INBOX_BATCH_SIZE instead). `ended` is called
    /// once.
    func startProcess(for deliveries: [Delivery], registration: HandlerRegistration, container: Container,
                      ended: @escaping (ExitStatus) -> Void) -> LaunchStart {
        let delivery = deliveries[0]
        let single = deliveries.count == 1 && !registration.exec.takesFileList
        let stdinDocument = single ? delivery.stdinDocument() : Delivery.batchDocument(deliveries)
        let spawned = spawnHandler(registration, container: container, stdin: stdinDocument,
                                   deliveryIDs: deliveries.map(\.id)) { identity, stdin, output in
            if single {
                return SpawnRequest(handler: registration, delivery: delivery, tmp: container.tmp, identity: identity,
                                    standardInput: stdin, output: output)
            }
            return SpawnRequest(handler: registration, batch: deliveries, container: container, identity: identity,
                                standardInput: stdin, output: output)
        }
        let started: SpawnedHandler
        switch spawned {
        case .failure(.refused(let reason)): return .refused(reason)
        case .failure(.failed(let reason)): return .failed(reason)
        case .success(let handler): started = handler
        }
        let attempt = Attempt(pid: started.process.pid, delivery: delivery, sandboxed: started.sandboxed)
        attempt.output = started.output
        switch watch(started, exited: { [unowned self, unowned attempt] status in
            self.exited(attempt, status: status, ended: ended)
        }) {
        case .success(let source): attempt.childSource = source
        case .failure(let failure): return .failed(failure.reason)
        }
        running[started.process.pid] = attempt
        return .started(attempt)
    }

    /// Watches a process `spawnHandler` started: `exited` is called from the event loop when it ends. Without a child
    /// source its end could never be learnt, so it is stopped at once (`abandon`) and the start counts as failed.
    func watch(_ started: SpawnedHandler, exited: @escaping (ExitStatus) -> Void) -> Result<EventSource, SpawnFailure> {
        do throws(SystemError) {
            let source = try loop.addChild(pid: started.process.pid, exited)
            source.setPriority(EventPriority.childExit)
            return .success(source)
        } catch {
            abandon(started)
            return .failure(.failed("\(error)"))
        }
    }

    /// Stops a process `spawnHandler` started that cannot be watched or used: killed, reaped, its output finished.
    func abandon(_ started: SpawnedHandler) {
        _ = Signals.send(SIGKILL, to: started.process.pid)
        _ = waitForExit(pid: started.process.pid)
        started.output.finish(fields: [], closed: { _ in })
    }

    /// A handler process `spawnHandler` started: the caller watches it and finishes its output.
    struct SpawnedHandler {
        let process: SpawnedProcess
        let output: OutputRelay
        /// It runs under its Landlock ruleset (read and remove only in its Inbox).
        let sandboxed: Bool
    }

    /// Why `spawnHandler` started nothing: as `LaunchStart.refused` and `.failed`.
    enum SpawnFailure: Error {
        case refused(String)
        case failed(String)

        var reason: String {
            switch self {
            case .refused(let reason), .failed(let reason): reason
            }
        }
    }

    /// The one way a handler process is started, for a file, a batch or a resident instance: its identity, its
    /// Landlock ruleset (or the refusal when one is required and missing), its Documents/ as working directory, its
    /// stdout and stderr into a new `OutputRelay` (its lines naming `deliveryIDs` and the process), `stdin` as a sealed
    /// memory file, and death with the agent. `request` makes the rest of the request from the identity and the two
    /// descriptors. The child source is the caller's.
    func spawnHandler(_ registration: HandlerRegistration, container: Container, stdin stdinDocument: [UInt8],
                      deliveryIDs: [String], request makeRequest: (Identity?, FileDescriptor, FileDescriptor) -> SpawnRequest)
        -> Result<SpawnedHandler, SpawnFailure> {
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
            // there (spawn.c); what the handler starts itself is stopped at the next start (stopEarlierRun).
            request.parentDeathSignal = SIGKILL
            process = try spawn(request)
        } catch {
            output.finish(fields: [], closed: { _ in })
            return .failure(.failed("\(error)"))
        }
        // The event loop watches the child through a pidfd of its own; ours is not needed.
        process.pidfd.close()
        output.attribute(pid: process.pid)
        return .success(SpawnedHandler(process: process, output: output, sandboxed: ruleset != nil))
    }

    /// Every handler process it starts runs under Landlock (a ruleset that cannot be built fails the start), so an
    /// attempt of a batch or a resident instance is known to be sandboxed before its process exists.
    var sandboxesHandlers: Bool { landlockABI > 0 }

    /// Pids of handler processes that are the launcher's own (its child sources reap them).
    var pids: [pid_t] { Array(running.keys) }

    func signal(_ attempt: LaunchedAttempt, _ signal: DeliveryLifecycle.StopSignal) {
        guard let attempt = attempt as? Attempt else { return }
        attempt.signalGroup(signal == .terminate ? SIGTERM : SIGKILL)
    }

    private func exited(_ attempt: Attempt, status: ExitStatus, ended: (ExitStatus) -> Void) {
        running[attempt.pid] = nil
        // Whatever the handler left running in its group goes with it; with an identity of its own and no other
        // delivery of it running, so does every process of that identity (a daemon too).
        attempt.signalGroup(SIGKILL)
        killLeftovers(of: attempt)
        attempt.childSource = nil
        finishOutput(of: attempt)
        ended(status)
    }

    /// Reads what the handler left in its pipe and says what was dropped; a relay the journal still pushes back on
    /// is kept until it has written the rest.
    private func finishOutput(of attempt: Attempt) {
        guard let output = attempt.output else { return }
        attempt.output = nil
        finish(output, fields: attempt.delivery.journalFields())
    }

    /// Finishes a relay of a process that exited, keeping it until the journal took the rest.
    func finish(_ output: OutputRelay, fields: @autoclosure () -> JournalFields) {
        flushing[ObjectIdentifier(output)] = output
        output.finish(fields: fields()) { [unowned self] relay in self.flushing[ObjectIdentifier(relay)] = nil }
    }

    /// Stops what a finished handler left running once nothing else of its identity runs: with an identity of its
    /// own, every process of that uid; otherwise the orphans the agent inherited (as a subreaper) that run as its
    /// user. Those orphans are then reaped through the event loop.
    private func killLeftovers(of attempt: Attempt) {
        killLeftovers(of: attempt.handler, pid: attempt.pid, othersRunning: false,
                      fields: ["INBOX_HANDLER": attempt.handler, "INBOX_DELIVERY_ID": attempt.deliveryID])
    }

    /// The same when a resident instance ended (`ResidentLauncher`): what it left running goes with it, as for a
    /// launched handler. `othersRunning`: other instances of the handler still run under the same identity, and what
    /// one of them started cannot be told from what this one left, so nothing is killed now; it goes when the last
    /// instance ends.
    func instanceEnded(_ handler: String, pid: pid_t, othersRunning: Bool) {
        killLeftovers(of: handler, pid: pid, othersRunning: othersRunning,
                      fields: ["INBOX_HANDLER": handler, "INBOX_PID": String(pid)])
    }

    private func killLeftovers(of handler: String, pid: pid_t, othersRunning: Bool,
                               fields: KeyValuePairs<String, String?>) {
        // Anything a handler left running has an ancestor that is now the agent's child (it is a subreaper): with no
        // such child, nothing was left, and no /proc scan is needed.
        let tracked = Set(running.keys).union([pid]).union(ownChildren()).union(residentChildren())
        let inherited = Leftovers.children().filter { !tracked.contains($0) }
        guard !inherited.isEmpty else { return }
        let uid = uid(of: handler)
        let sharing = othersRunning || running.values.contains { self.uid(of: $0.handler) == uid }
        var killed = 0
        if !sharing {
            if DynamicIdentity.contains(uid) {
                killed = Leftovers.kill(uid: uid)
            } else {
                for pid in inherited where Leftovers.realUID(of: pid) == uid && Signals.send(SIGKILL, to: pid) == nil { killed += 1 }
            }
        }
        // Reaped through the event loop, whoever they belonged to.
        for pid in inherited { reap(orphan: pid) }
        if killed > 0 {
            logger.log(.notice, "Killed \(killed) process(es) \(handler) left running", fields: fields)
        }
    }

    private func reap(orphan pid: pid_t) {
        guard orphans[pid] == nil else { return }
        do throws(SystemError) {
            orphans[pid] = try loop.addChild(pid: pid) { [unowned self] _ in
                self.orphans[pid] = nil
                if self.orphans.isEmpty && self.leftoversEnded != nil { self.sweepSoon() }
            }
        } catch {
            // No source to wait with: it was sent SIGKILL, so the wait is short.
            _ = Signals.send(SIGKILL, to: pid)
            _ = waitForExit(pid: pid)
        }
    }

    /// The agent stops and no handler runs any more: every process of the handlers' own identities (`uids`) is
    /// killed, and so is every child the agent has left but its own (`ownChildren`): what handlers left running,
    /// inherited as a subreaper. Each is reaped, and what they leave in turn becomes the agent's child and goes the
    /// same way; `done` is called once there is nothing left.
    func endLeftovers(uids: Set<UInt32>, _ done: @escaping () -> Void) {
        leftoversEnded = done
        leftoverUIDs = uids
        sweepSoon()
    }

    /// The next round of `endLeftovers`, from the loop: a child source hands over its process before sd-event reaps
    /// it, so a round run inside one would take the ending process for a leftover.
    private func sweepSoon() {
        guard sweepSource == nil else { return }
        sweepSource = try? loop.addDefer { [unowned self] in
            self.sweepSource = nil
            self.sweep()
        }
        if sweepSource == nil { sweep() }
    }

    private func sweep() {
        guard let done = leftoversEnded else { return }
        var killed = Leftovers.kill(uids: leftoverUIDs)
        let own = Set(ownChildren()).union(residentChildren())
        for pid in Leftovers.children() where !own.contains(pid) {
            if Signals.send(SIGKILL, to: pid) == nil { killed += 1 }
            reap(orphan: pid)
        }
        if killed > 0 {
            logger.log(.notice, "Killed \(killed) process(es) that handlers left running", fields: ["INBOX_KILLED": String(killed)])
        }
        if orphans.isEmpty {
            leftoversEnded = nil
            done()
        }
    }

    private func uid(of handler: String) -> UInt32 {
        catalog.identity(for: handler)?.uid ?? CurrentProcess.effectiveUserID
    }

    /// The handler's Landlock ruleset: read and run everything, read and remove in its Inbox, full access to its
    /// Documents/ and tmp/ (each on its own: the container root holds the Inbox) and to ReadWritePaths=.
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
        rulesets[registration.identifier] = ruleset
        return ruleset
    }
}
