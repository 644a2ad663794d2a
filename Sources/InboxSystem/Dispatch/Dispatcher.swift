import InboxCore

/// Owns the deliveries between a file's move into its container and its end: the queue, what runs, the per-handler
/// counts, the retry and timeout timers. Each delivery's course is its `DeliveryLifecycle`; the dispatcher feeds it
/// what happens and carries out the actions it returns, starting handlers through a `Launcher`.
final class Dispatcher {
    /// A delivery waiting for a slot or a retry.
    struct Entry: Queueable {
        var delivery: Delivery
        var lifecycle: DeliveryLifecycle
        /// The Inbox copy as intake placed it (its identity taken after the move); nil for a retry or a recovered file.
        var placed: FileIdentity?
        var sequence: UInt64
        var handler: String { delivery.handler }
    }

    /// A delivery whose handler runs.
    final class Running {
        var entry: Entry
        let attempt: LaunchedAttempt
        let started: Duration
        /// The Inbox copy as the handler was given it; compared when it exits.
        let identity: FileIdentity
        /// The Inbox copy, open for reading, through which the end of the attempt is checked; it holds a read lease
        /// when `leased`, so that another process's open for writing waits for the handler to end and is seen.
        let copy: FileDescriptor
        let leased: Bool
        var timer: EventSource?

        init(entry: Entry, attempt: LaunchedAttempt, started: Duration, copy: OpenedCopy) {
            self.entry = entry
            self.attempt = attempt
            self.started = started
            self.identity = copy.identity
            self.copy = copy.descriptor
            // Without Landlock the handler itself may be able to open its copy for writing (as root, or as the owner
            // after a chmod): its open would wait on the lease and then pass for another process's. So the lease is
            // given up, and a change is the after-exit check's to report, as the handler's.
            if copy.leased && !attempt.sandboxed { copy.descriptor.releaseLease() }
            self.leased = copy.leased && attempt.sandboxed
        }
    }

    /// The Inbox copy opened at the start of an attempt (`Dispatcher.openCopy`).
    struct OpenedCopy {
        let descriptor: FileDescriptor
        let identity: FileIdentity
        let leased: Bool
    }

    /// Limits and policy, from the agent's settings.
    struct Limits {
        var maxConcurrent: Int
        var retryPolicy: RetryPolicy
        var defaultTimeout: Duration?
        /// Past `highWater` queued deliveries intake pauses; below `lowWater` it resumes.
        var highWater = 4096
        var lowWater = 1024
    }

    private let loop: EventLoop
    private let logger: Logger
    private let state: StateDirectories
    private let quarantine: Quarantine
    private let launcher: Launcher
    private let limits: Limits
    private var catalog: HandlerCatalog
    private var queue = DeliveryQueue<Entry>()
    private var running: [String: Running] = [:]
    private var runningPerHandler: [String: Int] = [:]
    /// Running deliveries that share a process (a resident instance, a batch): MaxConcurrent= and the agent's limit
    /// count processes, so these count against their handler's delivery capacity only.
    private var sharing: Set<String> = []
    /// Deliveries waiting for a retry: when it is due (the event loop's clock) and why the last attempt failed.
    private var waiting: [String: (entry: Entry, timer: EventSource, due: Duration, reason: String)] = [:]
    private var nextSequence: UInt64 = 0
    private var draining = false

    /// A queued delivery's handler is gone: the file is routed again from its container.
    var reroute: (Delivery) -> Void = { _ in }
    /// The queue fell to `lowWater`: intake may take more.
    var roomForIntake: () -> Void = {}
    /// Something changed that the status shows.
    var changed: () -> Void = {}
    /// A delivery ended (handled, failed, withdrawn, released to be routed again or kept for the next start).
    var ended: (Delivery) -> Void = { _ in }
    /// Draining, and the last handler ended.
    var drained: () -> Void = {}

    init(loop: EventLoop, logger: Logger, state: StateDirectories, launcher: Launcher, catalog: HandlerCatalog,
         limits: Limits) {
        self.loop = loop
        self.logger = logger
        self.state = state
        self.quarantine = Quarantine(state: state, logger: logger)
        self.launcher = launcher
        self.catalog = catalog
        self.limits = limits
    }

    var queuedCount: Int { queue.count }
    var retryingCount: Int { waiting.count }
    var runningCount: Int { running.count }
    var isIdle: Bool { running.isEmpty && queue.count == 0 }
    var isFull: Bool { queue.count >= limits.highWater }

    /// Takes a delivery whose file lies in its container Inbox; `placed` when intake just moved it there.
    func enqueue(_ delivery: Delivery, placed: FileIdentity?) {
        nextSequence += 1
        queue.append(Entry(delivery: delivery, lifecycle: DeliveryLifecycle(policy: limits.retryPolicy, attempts: delivery.attempt),
                           placed: placed, sequence: nextSequence))
    }

    /// Starts queued deliveries while the global and per-handler limits allow, oldest first.
    func launchReady() {
        guard !draining else { return }
        while let entry = queue.popNext(where: { [unowned self] handler in
            self.runningPerHandler[handler, default: 0] < self.limit(for: handler)
                && (self.running.count - self.sharing.count < self.limits.maxConcurrent || self.sharesProcesses(handler))
        }) {
            start(entry)
        }
        if queue.count <= limits.lowWater { roomForIntake() }
        changed()
    }

    private func limit(for handler: String) -> Int {
        guard let registration = catalog.registration(handler) else { return limits.maxConcurrent }
        return registration.deliveryCapacity(processes: min(registration.maxConcurrent ?? .max, limits.maxConcurrent))
    }

    /// A resident handler, or one whose Exec= takes a list: its deliveries share processes.
    private func sharesProcesses(_ handler: String) -> Bool {
        guard let registration = catalog.registration(handler) else { return false }
        return registration.activation == .resident || registration.batchSize > 1
    }

    private func start(_ queued: Entry) {
        var entry = queued
        let handler = entry.handler
        guard let registration = catalog.registration(handler),
              let container = try? state.container(for: handler, identity: catalog.identity(for: handler)) else {
            perform(entry.lifecycle.handlerRemoved(), for: entry)
            return
        }
        guard let copy = openCopy(of: &entry, in: container) else { return }
        guard case .launch(let attempt) = entry.lifecycle.start() else { return }
        entry.delivery.attempt = attempt
        entry.delivery.contentTypes = catalog.conformanceChain(of: entry.delivery.contentType)
        entry.delivery.unit = registration.unit?.instance(entry.delivery.id)
        let started = EventLoop.now()
        let id = entry.delivery.id
        switch launcher.start(entry.delivery, copy: copy.descriptor, registration: registration, container: container, ended: { [unowned self] outcome in
            self.ended(id, outcome: outcome)
        }) {
        case .refused(let reason):
            copy.descriptor.close()
            perform(entry.lifecycle.refused(reason), for: entry)
        case .failed(let reason):
            copy.descriptor.close()
            perform(entry.lifecycle.startFailed(reason), for: entry, duration: EventLoop.now() - started)
        case .started(let launched):
            let run = Running(entry: entry, attempt: launched, started: started, copy: copy)
            running[id] = run
            runningPerHandler[handler, default: 0] += 1
            if sharesProcesses(handler) { sharing.insert(id) }
            // TimeoutSec=infinity in the registration turns the agent's default off for this handler.
            if let timeout = registration.timeoutDisabled ? nil : registration.timeout ?? limits.defaultTimeout {
                run.timer = try? loop.addTimer(after: timeout) { [unowned self, unowned run] in self.timedOut(run) }
            }
            if logger.isEnabled(.debug) {
                logger.log(.debug, "Dispatched \(entry.delivery.name) to \(handler)", event: .dispatched,
                           fields: entry.delivery.journalFields() + [("INBOX_PID", String(launched.pid))])
            }
        }
    }

    /// Opens the Inbox copy for an attempt, or ends the delivery and returns nil when it cannot be delivered. The
    /// attempt is recorded on the file before its handler can see it, so that one a crash cuts short is known at the
    /// next start (ArrivalReader). That write sets the change time, which the after-exit check compares, so the
    /// identity is taken after it. Then a read lease is taken on the same descriptor and held until the handler ends:
    /// while it is held, any open of the file for writing (or truncate) waits for the agent to let go, up to the
    /// kernel's lease-break-time, and breaks it, which the end of the attempt sees (fcntl(2), Leases). The handler
    /// itself cannot break it: its Landlock rules refuse it the write before the lease is consulted (a handler that
    /// runs without Landlock gets no lease: `Running`). So a file that another process holds open for writing now, or that changed since intake placed it,
    /// is not delivered, and the change is that process's (its sender's), never the handler's.
    private func openCopy(of entry: inout Entry, in container: Container) -> OpenedCopy? {
        let delivery = entry.delivery
        let name = Array(delivery.name.utf8)
        let file: FileDescriptor
        do {
            file = try container.inbox.openFile(name, .readOnly, options: [.noFollow, .nonBlocking, .noControllingTerminal])
        } catch .noSuchFile {
            logger.log(.warning, "\(delivery.path) vanished before its handler started", event: .removed,
                       fields: ["INBOX_FILE": delivery.path, "INBOX_HANDLER": delivery.handler,
                                "INBOX_DELIVERY_ID": delivery.id])
            perform(entry.lifecycle.fileGone(), for: entry)
            return nil
        } catch {
            // ELOOP: a symlink, which only root could have put in the agent's own directory; anything else that
            // cannot be opened is moved aside the same way, unopened.
            let kind = (try? container.inbox.status(of: name))?.map { EntryKind(mode: $0.st_mode) } ?? .symlink
            quarantine.moveAside(name, from: container.inbox, kind: kind)
            perform(entry.lifecycle.fileGone(), for: entry)
            return nil
        }
        ExtendedAttributes(file).write(AgentAttribute.started, String(entry.lifecycle.nextAttempt))
        let status = try? file.status()
        guard let st = status, EntryKind(mode: st.st_mode) == .regular else {
            let kind = status.map { EntryKind(mode: $0.st_mode) } ?? .symlink
            file.close()
            quarantine.moveAside(name, from: container.inbox, kind: kind)
            perform(entry.lifecycle.fileGone(), for: entry)
            return nil
        }
        let identity = FileIdentity(st)
        let placed = entry.placed
        entry.placed = nil
        var leased = false
        switch file.takeReadLease() {
        case .held:
            leased = true
        case .busy:
            file.close()
            perform(entry.lifecycle.tampered(Self.otherWriter(of: delivery) + " "
                                             + "held it open for writing before its handler started"), for: entry)
            return nil
        case .unavailable:
            break  // not the owner and no CAP_LEASE: as stable as its sender leaves it (README, Security model)
        }
        if let placed, !placed.sameContent(as: identity) {
            file.close()
            perform(entry.lifecycle.tampered(Self.otherWriter(of: delivery) + " "
                                             + "changed it after it was checked, before its handler started: "
                                             + placed.differences(from: identity)), for: entry)
            return nil
        }
        return OpenedCopy(descriptor: file, identity: identity, leased: leased)
    }

    /// TimeoutSec= passed: stop the handler, and kill it if it is still there 5 s later.
    private func timedOut(_ run: Running) {
        perform(run.entry.lifecycle.timeoutPassed(), for: run.entry, attempt: run.attempt)
        run.timer = try? loop.addTimer(after: .seconds(5)) { [unowned self, unowned run] in
            self.perform(run.entry.lifecycle.graceExpired(), for: run.entry, attempt: run.attempt)
        }
    }

    private func ended(_ id: String, outcome: DeliveryOutcome) {
        guard let run = running.removeValue(forKey: id) else { return }
        runningPerHandler[run.entry.handler, default: 1] -= 1
        sharing.remove(id)
        run.timer = nil
        let violation = integrityViolation(of: run)
        // A writer that broke the lease waits (up to the kernel's lease-break-time) until this close.
        let interference = run.leased && !run.copy.readLeaseIntact
            ? Self.otherWriter(of: run.entry.delivery) + " opened it for writing"
            : nil
        run.copy.close()
        perform(run.entry.lifecycle.exited(outcome, violation: violation, interference: interference), for: run.entry,
                duration: EventLoop.now() - run.started)
        launchReady()
        if draining && running.isEmpty { drained() }
    }

    /// Queues an entry again, behind everything queued so far.
    private func queueAgain(_ entry: Entry) {
        nextSequence += 1
        var again = entry
        again.sequence = nextSequence
        queue.append(again)
    }

    /// Who else can have written the copy: the agent's directories are closed to everyone but root, so its sender,
    /// through a descriptor or link it kept, or root.
    private static func otherWriter(of delivery: Delivery) -> String {
        "another process than its handler (its sender" + (delivery.sourceUID.map { ", uid \($0)," } ?? "") + " or root)"
    }

    /// How the Inbox copy changed while its handler ran, if it did: seen through the descriptor opened at the start,
    /// so a copy the handler removed is checked too (its removal alone changes only the link count and change time).
    private func integrityViolation(of run: Running) -> String? {
        let before = run.identity
        guard let st = try? run.copy.status() else { return nil }
        let after = FileIdentity(st)
        let intact = st.st_nlink == 0 ? before.sameContent(as: after) : after == before
        return intact ? nil : before.differences(from: after)
    }

    /// Carries out what the lifecycle decided.
    private func perform(_ action: DeliveryLifecycle.Action, for entry: Entry, duration: Duration? = nil,
                         attempt: LaunchedAttempt? = nil) {
        let delivery = entry.delivery
        let inbox = state.openedContainer(for: delivery.handler)?.inbox
        // Told first, so that a delivery routed again below counts anew.
        if case .ended = entry.lifecycle.state { ended(delivery) }
        switch action {
        case .complete(let outcome):
            let name = Array(delivery.name.utf8)
            let removeError = inbox?.remove(name) ?? nil
            if delivery.hasSidecar { inbox?.removeSidecar(of: name) }
            logger.log(.info, "\(delivery.handler) handled \(delivery.name)", event: .finished,
                       fields: delivery.journalFields() + [("INBOX_EXIT_STATUS", outcome.exitStatusField),
                                                           ("INBOX_DURATION_USEC", duration?.microsecondsField)])
            if let removeError {
                logger.log(.warning, "Cannot remove \(delivery.path) after its handler finished: \(removeError)",
                           fields: ["INBOX_FILE": delivery.path])
            }
        case .retry(let delay, let outcome):
            let when = delay.map { "retrying in \($0.shortDescription)" } ?? "retrying at the next start"
            logger.log(.warning, "\(delivery.handler) \(outcome.phrase) on \(delivery.name); \(when)", event: .retry,
                       fields: delivery.journalFields() + [
                ("INBOX_EXIT_STATUS", outcome.exitStatusField), ("INBOX_DURATION_USEC", duration?.microsecondsField),
                ("INBOX_REASON", outcome.phrase)])
            // Failed attempts survive a restart; the attempt count is only written when one fails.
            if let inbox, case .opened(let file) = inbox.openRegular(Array(delivery.name.utf8)) {
                ExtendedAttributes(file.descriptor).write(AgentAttribute.attempts, String(delivery.attempt))
                file.descriptor.close()
            }
            guard let delay, let timer = try? loop.addTimer(after: delay, accuracy: .milliseconds(10), { [unowned self] in
                self.retryDue(delivery.id)
            }) else { return }
            // The attempt that followed a cut-short one has ended: the next is an ordinary retry.
            var again = entry
            again.delivery.redelivered = false
            waiting[delivery.id] = (again, timer, EventLoop.now() + delay, outcome.phrase)
        case .fail(let reason, let outcome):
            quarantine.fail(delivery, reason: reason, outcome: outcome, duration: duration, from: inbox)
        case .reportViolation(let change, let outcome):
            quarantine.violation(delivery, change: change, outcome: outcome, duration: duration ?? .zero, from: inbox)
        case .withdraw(let reason, let outcome):
            quarantine.withdraw(delivery, reason: reason, outcome: outcome, duration: duration, from: inbox)
        case .reroute:
            reroute(delivery)
        case .signal(let signal):
            attempt?.stop(signal)
        case .enqueue:
            queueAgain(entry)
        case .requeueAlone(let outcome):
            if logger.isEnabled(.debug) {
                logger.log(.debug, "\(delivery.handler) \(outcome.phrase); \(delivery.name) goes again on its own",
                           fields: delivery.journalFields())
            }
            var alone = entry
            alone.delivery.alone = true
            queueAgain(alone)
        case .cancelRetry:
            waiting[delivery.id] = nil
        case .keepForNextStart:
            // Stopped by the agent's own shutdown: not counted as an attempt, but the handler is told at the next start.
            inbox?.setAttribute(AgentAttribute.started, "\(delivery.attempt) stopped", of: delivery.name)
        case .launch, .none:
            break
        }
    }

    private func retryDue(_ id: String) {
        guard var entry = waiting.removeValue(forKey: id)?.entry else { return }
        perform(entry.lifecycle.retryDue(), for: entry)
        launchReady()
    }

    /// A reload swapped the catalog: waiting deliveries of handlers that are gone find a new handler or go to
    /// unhandled/; running ones finish.
    func use(_ catalog: HandlerCatalog) {
        self.catalog = catalog
        launcher.use(catalog)
        for var entry in queue.removeAll(where: { catalog.registration($0) == nil }) {
            perform(entry.lifecycle.handlerRemoved(), for: entry)
        }
    }

    /// Stops taking work: queued files stay in their containers for the next start, retry timers are cancelled,
    /// running handlers are left to finish until the agent's stop sequence tells them to stop (`stopRunning`).
    /// `drained` is called when the last one ended (at once when none runs).
    func drain() {
        guard !draining else { return }
        draining = true
        for (_, waited) in waiting {
            var entry = waited.entry
            perform(entry.lifecycle.drain(), for: entry)
        }
        waiting.removeAll()
        for run in running.values { _ = run.entry.lifecycle.drain() }
        if running.isEmpty { drained() }
    }

    /// Draining, the stop bound passed: every running handler is told to stop (SIGTERM, then SIGKILL).
    func stopRunning(_ signal: DeliveryLifecycle.StopSignal) {
        for run in running.values { perform(run.entry.lifecycle.stopRequested(signal), for: run.entry, attempt: run.attempt) }
    }

    /// Every sender's files that are queued, running or waiting for a retry, by the sender's uid (a delivery whose
    /// sender is not known is left out). `wallClockOffset` turns the event loop's clock into wall-clock time.
    func senderFiles(wallClockOffset: Int64) -> [UInt32: [SenderStatus.File]] {
        var files: [UInt32: [SenderStatus.File]] = [:]
        func wall(_ time: Duration) -> Int64 { wallClockOffset + Int64(time.microseconds) }
        for run in running.values {
            let delivery = run.entry.delivery
            guard let uid = delivery.sourceUID else { continue }
            files[uid, default: []].append(.init(deliveryID: delivery.id, name: delivery.name, state: .running,
                                                 handler: delivery.handler, attempt: delivery.attempt,
                                                 sinceUSec: wall(run.started)))
        }
        for waited in waiting.values {
            let delivery = waited.entry.delivery
            guard let uid = delivery.sourceUID else { continue }
            files[uid, default: []].append(.init(deliveryID: delivery.id, name: delivery.name, state: .retrying,
                                                 handler: delivery.handler, reason: waited.reason,
                                                 attempt: delivery.attempt, nextAttemptUSec: wall(waited.due)))
        }
        queue.forEach { entry in
            let delivery = entry.delivery
            guard let uid = delivery.sourceUID else { return }
            files[uid, default: []].append(.init(deliveryID: delivery.id, name: delivery.name, state: .queued,
                                                 handler: delivery.handler, attempt: delivery.attempt))
        }
        return files
    }

    /// The running deliveries for the status file, oldest first.
    func inFlight(now: Duration) -> [AgentStatus.InFlight] {
        running.values.sorted { $0.started < $1.started }.map { run in
            AgentStatus.InFlight(handler: run.entry.handler, file: run.entry.delivery.name, deliveryID: run.entry.delivery.id,
                                 attempt: run.entry.delivery.attempt, pid: run.attempt.pid,
                                 ageUSec: Int64((now - run.started).microseconds))
        }
    }

    /// The deliveries waiting for a retry for the status file, the soonest first: `wallClockUSec` is `now` as wall-clock
    /// time, so each next attempt is given as a time a reader can compare with its own clock.
    func retrying(now: Duration, wallClockUSec: Int64) -> [AgentStatus.Retrying] {
        waiting.values.sorted { $0.due < $1.due }.map { waited in
            let delivery = waited.entry.delivery
            return AgentStatus.Retrying(handler: delivery.handler, file: delivery.name, deliveryID: delivery.id,
                                        attempt: delivery.attempt, reason: waited.reason,
                                        nextAttemptUSec: wallClockUSec + Int64((waited.due - now).microseconds))
        }
    }
}
