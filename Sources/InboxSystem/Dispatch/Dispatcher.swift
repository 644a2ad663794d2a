import InboxCore

/// Schedules the deliveries between a file's move into its container and its end: one table of them, each with its
/// `DeliveryLifecycle` (whose state is the delivery's state), the queue order, what runs counted by launch kind
/// (`LaunchSlots`), the retry and timeout timers. It feeds each lifecycle what happens and carries out the actions it
/// returns: the file's part through `InboxCopies`, starting handlers through a `Launcher`.
final class Dispatcher {
    /// One delivery from its enqueueing to its end; in the table while its lifecycle has not ended.
    final class Record: Queueable {
        var delivery: Delivery
        var lifecycle: DeliveryLifecycle
        /// The Inbox copy as intake placed it (its identity taken after the move); nil for a retry or a recovered file.
        var placed: FileIdentity?
        var sequence: UInt64
        /// While the lifecycle is running: the attempt.
        var run: Run?
        /// While the lifecycle waits for a retry: its timer, when it is due (the event loop's clock) and why the last
        /// attempt failed.
        var retry: (timer: EventSource, due: Duration, reason: String)?
        /// When it was last queued (by `enqueue`, or again when its retry was due): where its queue latency starts.
        var queuedAt: Duration
        var handler: String { delivery.handler }

        init(delivery: Delivery, lifecycle: DeliveryLifecycle, placed: FileIdentity?, sequence: UInt64) {
            self.delivery = delivery
            self.lifecycle = lifecycle
            self.placed = placed
            self.sequence = sequence
            queuedAt = EventLoop.now()
        }
    }

    /// A running attempt: how it runs and what it holds.
    struct Run {
        let attempt: LaunchedAttempt
        /// The kind it started as, which it is counted as until it ends.
        let kind: LaunchKind
        let started: Duration
        let copy: InboxCopies.Held
        var timer: EventSource?
    }

    /// Limits and policy, from the agent's settings.
    struct Limits {
        var maxConcurrent: Int
        var retryPolicy: RetryPolicy
        var defaultTimeout: Duration?
        /// Past `highWater` queued deliveries intake pauses; below `lowWater` it resumes.
        var highWater = 4096
        var lowWater = 1024
        /// How long a handler told to stop at its timeout has before it is killed.
        var killGrace: Duration = .seconds(5)
        /// What a package's checks at the start and the end of an attempt walk within (MaxPackage*=).
        var packages = PackageLimits()
    }

    private let loop: EventLoop
    private let logger: Logger
    private let state: StateDirectories
    private let copies: InboxCopies
    private let launcher: Launcher
    private let limits: Limits
    private var catalog: HandlerCatalog
    /// Every delivery not ended, by id.
    private var table: [String: Record] = [:]
    /// The queued ones, in the order they start.
    private var queue = DeliveryQueue<Record>()
    private var slots: LaunchSlots
    private var nextSequence: UInt64 = 0
    private var draining = false
    /// Deliveries ended and attempts started by handler, and how long they waited and ran (the status's `metrics`).
    private(set) var metrics = DeliveryMetrics()

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
    /// A delivery that came through the cluster ended here: how its message is to be answered. Its file has been
    /// handled, kept in failed/, or removed from its container (the server gives it out again).
    var clusterEnded: (Delivery, ClusterVerdict) -> Void = { _, _ in }

    init(loop: EventLoop, logger: Logger, state: StateDirectories, quarantine: Quarantine, launcher: Launcher,
         catalog: HandlerCatalog, limits: Limits) {
        self.loop = loop
        self.logger = logger
        self.state = state
        copies = InboxCopies(logger: logger, state: state, quarantine: quarantine, packageLimits: limits.packages)
        self.launcher = launcher
        self.catalog = catalog
        self.limits = limits
        slots = LaunchSlots(maxProcesses: limits.maxConcurrent)
    }

    var queuedCount: Int { queue.count }
    var runningCount: Int { slots.running }
    /// The rest of the table waits for a retry.
    var retryingCount: Int { table.count - queue.count - slots.running }
    var isIdle: Bool { slots.running == 0 && queue.count == 0 }
    var isFull: Bool { queue.count >= limits.highWater }

    /// Takes a delivery whose file lies in its container Inbox; `placed` when intake just moved it there.
    func enqueue(_ delivery: Delivery, placed: FileIdentity?) {
        nextSequence += 1
        let record = Record(delivery: delivery, lifecycle: DeliveryLifecycle(policy: limits.retryPolicy,
                                                                             attempts: delivery.attempt),
                            placed: placed, sequence: nextSequence)
        table[delivery.id] = record
        queue.append(record)
    }

    /// What the limits say of a queued delivery: it starts as `kind`, or its handler is gone.
    private enum Admission {
        case start(HandlerRegistration, LaunchKind)
        case handlerGone
    }

    /// Starts queued deliveries while the limits allow, oldest first. The launch kind of each attempt is decided here,
    /// once, and is what both the limits and the launcher go by.
    func launchReady() {
        guard !draining else { return }
        while let (record, admission) = queue.popNext(admitting: { record -> Admission? in
            guard let registration = catalog.registration(record.handler) else { return .handlerGone }
            let kind = LaunchKind(registration, alone: record.delivery.alone)
            return slots.admits(kind, of: registration) ? .start(registration, kind) : nil
        }) {
            switch admission {
            case .start(let registration, let kind): start(record, registration: registration, kind: kind)
            case .handlerGone: perform(record.lifecycle.handlerRemoved(), for: record)
            }
        }
        if queue.count <= limits.lowWater { roomForIntake() }
        changed()
    }

    private func start(_ record: Record, registration: HandlerRegistration, kind: LaunchKind) {
        let handler = record.handler
        guard let container = try? state.container(for: handler, identity: catalog.identity(for: handler)) else {
            perform(record.lifecycle.handlerRemoved(), for: record)
            return
        }
        let placed = record.placed
        record.placed = nil
        let copy: InboxCopies.Held
        switch copies.open(record.delivery, attempt: record.lifecycle.nextAttempt, placed: placed, in: container) {
        case .gone: return perform(record.lifecycle.fileGone(), for: record)
        case .tampered(let reason): return perform(record.lifecycle.tampered(reason), for: record)
        case .opened(let held): copy = held
        }
        let action = record.lifecycle.start()
        guard case .launch(let attempt) = action else {
            // Not started after all (a drain): the copy is let go, and the action carried out like any other.
            copy.close()
            return perform(action, for: record)
        }
        record.delivery.attempt = attempt
        record.delivery.contentTypes = catalog.conformanceChain(of: record.delivery.contentType)
        record.delivery.unit = registration.unit?.instance(record.delivery.id)
        record.delivery.printer = registration.printer?.description
        let started = EventLoop.now()
        let id = record.delivery.id
        switch launcher.start(record.delivery, kind: kind, copy: copy.descriptor, registration: registration,
                              container: container, ended: { [unowned self] outcome in self.ended(id, outcome: outcome) }) {
        case .refused(let reason):
            copy.close()
            perform(record.lifecycle.refused(reason), for: record)
        case .failed(let reason):
            copy.close()
            perform(record.lifecycle.startFailed(reason), for: record, duration: EventLoop.now() - started)
        case .started(let launched):
            copy.handlerStarted(sandboxed: launched.sandboxed)
            record.run = Run(attempt: launched, kind: kind, started: started, copy: copy)
            slots.take(kind, handler: handler)
            metrics.attemptStarted(handler, queuedFor: started - record.queuedAt)
            // TimeoutSec=infinity in the registration turns the agent's default off for this handler.
            if let timeout = registration.timeoutDisabled ? nil : registration.timeout ?? limits.defaultTimeout {
                record.run?.timer = try? loop.addTimer(after: timeout) { [unowned self, weak record] in
                    if let record { self.timedOut(record) }
                }
            }
            if logger.isEnabled(.debug) {
                logger.log(.debug, "Dispatched \(record.delivery.name) to \(handler)", event: .dispatched,
                           fields: record.delivery.journalFields() + [("INBOX_PID", String(launched.pid))])
            }
        }
    }

    /// TimeoutSec= passed: stop the handler, and kill it if it is still there `killGrace` later.
    private func timedOut(_ record: Record) {
        perform(record.lifecycle.timeoutPassed(), for: record)
        record.run?.timer = try? loop.addTimer(after: limits.killGrace) { [unowned self, weak record] in
            if let record { self.perform(record.lifecycle.graceExpired(), for: record) }
        }
    }

    private func ended(_ id: String, outcome: DeliveryOutcome) {
        guard let record = table[id], let run = record.run else { return }
        record.run = nil
        slots.release(run.kind, handler: record.handler)
        let (violation, interference) = run.copy.release(of: record.delivery)
        perform(record.lifecycle.exited(outcome, violation: violation, interference: interference), for: record,
                duration: EventLoop.now() - run.started)
        launchReady()
        if draining && slots.running == 0 { drained() }
    }

    /// Carries out what the lifecycle decided: the file's part through `InboxCopies`, the rest here.
    private func perform(_ action: DeliveryLifecycle.Action, for record: Record, duration: Duration? = nil) {
        let delivery = record.delivery
        metrics.settled(action, lifecycle: record.lifecycle, listed: table[delivery.id] === record,
                        handler: delivery.handler, duration: duration)
        if delivery.cluster != nil, let verdict = Self.verdict(action, draining: draining) {
            return conclude(record, action, verdict, duration: duration)
        }
        if record.lifecycle.hasEnded, table[delivery.id] === record {
            table[delivery.id] = nil
            // Told first, so that a delivery routed again below counts anew.
            ended(delivery)
        }
        copies.settle(action, of: delivery, duration: duration)
        switch action {
        case .retry(let delay?, let outcome):
            guard let timer = try? loop.addTimer(after: delay, accuracy: .milliseconds(10), { [unowned self] in
                self.retryDue(delivery.id)
            }) else {
                // No timer: the file stays in its container for the next start, like a retry while stopping.
                table[delivery.id] = nil
                ended(delivery)
                return
            }
            // The attempt that followed a cut-short one has ended: the next is an ordinary retry.
            record.delivery.redelivered = false
            record.retry = (timer, EventLoop.now() + delay, outcome.phrase)
        case .reroute:
            reroute(delivery)
        case .signal(let signal):
            record.run?.attempt.stop(signal)
        case .enqueue:
            queueAgain(record)
        case .requeueAlone(let outcome):
            if logger.isEnabled(.debug) {
                logger.log(.debug, "\(delivery.handler) \(outcome.phrase); \(delivery.name) goes again on its own",
                           fields: delivery.journalFields())
            }
            record.delivery.alone = true
            queueAgain(record)
        case .cancelRetry:
            record.retry = nil
        case .launch:
            preconditionFailure("a lifecycle asked to launch outside Dispatcher.start")
        case .retry(nil, _), .complete, .fail, .reportViolation, .withdraw, .keepForNextStart, .none:
            break
        }
    }

    /// How a cluster delivery's message is answered after `action`; nil for an action that does not end its time here
    /// (a start, a signal, queued again). A retry is the server's to schedule, on any host; what this host would keep
    /// for its next start or route again is given back at once.
    private static func verdict(_ action: DeliveryLifecycle.Action, draining: Bool) -> ClusterVerdict? {
        switch action {
        case .complete: .handled
        case .retry(let delay, _): .again(after: delay ?? .zero)
        case .keepForNextStart, .reroute: .again(after: .zero)
        case .fail(let reason, _): .givenUp(reason: reason)
        case .reportViolation(let change, _): .givenUp(reason: "its handler changed it (\(change))")
        case .withdraw(let reason, _): .givenUp(reason: reason)
        case .launch, .signal, .enqueue, .requeueAlone, .cancelRetry, .none: nil
        }
    }

    /// Ends a cluster delivery here: the file's part as for any delivery (the journal entry; failed/), the copy
    /// removed when the message goes back to the server, and the message answered.
    private func conclude(_ record: Record, _ action: DeliveryLifecycle.Action, _ verdict: ClusterVerdict,
                          duration: Duration?) {
        let delivery = record.delivery
        if table[delivery.id] === record { table[delivery.id] = nil }
        record.retry = nil
        switch action {
        case .retry, .keepForNextStart, .reroute:
            if case .retry = action { copies.settle(action, of: delivery, duration: duration) }
            copies.giveBack(delivery)
        default:
            copies.settle(action, of: delivery, duration: duration)
        }
        ended(delivery)
        clusterEnded(delivery, verdict)
    }

    /// Queues a record again, behind everything queued so far.
    private func queueAgain(_ record: Record) {
        nextSequence += 1
        record.sequence = nextSequence
        record.queuedAt = EventLoop.now()
        queue.append(record)
    }

    private func retryDue(_ id: String) {
        guard let record = table[id], record.retry != nil else { return }
        record.retry = nil
        perform(record.lifecycle.retryDue(), for: record)
        launchReady()
    }

    /// A reload swapped the catalog: queued deliveries of handlers that are gone find a new handler or go to
    /// unhandled/; running ones finish; a waiting one is looked at when its retry is due.
    func use(_ catalog: HandlerCatalog) {
        self.catalog = catalog
        launcher.use(catalog)
        for record in queue.removeAll(where: { catalog.registration($0) == nil }) {
            perform(record.lifecycle.handlerRemoved(), for: record)
        }
    }

    /// Stops taking work: queued files stay in their containers for the next start, retry timers are cancelled,
    /// running handlers are left to finish until the agent's stop sequence tells them to stop (`stopRunning`).
    /// `drained` is called when the last one ended (at once when none runs).
    func drain() {
        guard !draining else { return }
        draining = true
        for record in Array(table.values) {
            perform(record.lifecycle.drain(), for: record)
        }
        if slots.running == 0 { drained() }
    }

    /// Draining, the stop bound passed: every running handler is told to stop (SIGTERM, then SIGKILL).
    func stopRunning(_ signal: DeliveryLifecycle.StopSignal) {
        for record in table.values where record.run != nil {
            perform(record.lifecycle.stopRequested(signal), for: record)
        }
    }

    // MARK: What the status shows

    /// Every sender's files that are queued, running or waiting for a retry, by the sender's uid (a delivery whose
    /// sender is not known is left out). `wallClockOffset` turns the event loop's clock into wall-clock time.
    func senderFiles(wallClockOffset: Int64) -> [UInt32: [SenderStatus.File]] {
        var files: [UInt32: [SenderStatus.File]] = [:]
        func wall(_ time: Duration) -> Int64 { wallClockOffset + Int64(time.microseconds) }
        for record in table.values {
            let delivery = record.delivery
            guard let uid = delivery.sourceUID else { continue }
            let file: SenderStatus.File
            if let run = record.run {
                file = .init(deliveryID: delivery.id, name: delivery.name, state: .running, handler: delivery.handler,
                             attempt: delivery.attempt, sinceUSec: wall(run.started))
            } else if let retry = record.retry {
                file = .init(deliveryID: delivery.id, name: delivery.name, state: .retrying, handler: delivery.handler,
                             reason: retry.reason, attempt: delivery.attempt, nextAttemptUSec: wall(retry.due))
            } else {
                file = .init(deliveryID: delivery.id, name: delivery.name, state: .queued, handler: delivery.handler,
                             attempt: delivery.attempt)
            }
            files[uid, default: []].append(file)
        }
        return files
    }

    /// The running deliveries for the status file, oldest first.
    func inFlight(now: Duration) -> [AgentStatus.InFlight] {
        table.values.compactMap { record in record.run.map { (record, $0) } }.sorted { $0.1.started < $1.1.started }
            .map { record, run in
                AgentStatus.InFlight(handler: record.handler, file: record.delivery.name, deliveryID: record.delivery.id,
                                     attempt: record.delivery.attempt, pid: run.attempt.pid,
                                     ageUSec: Int64((now - run.started).microseconds))
            }
    }

    /// The deliveries waiting for a retry for the status file, the soonest first: `wallClockUSec` is `now` as
    /// wall-clock time, so each next attempt is given as a time a reader can compare with its own clock.
    func retrying(now: Duration, wallClockUSec: Int64) -> [AgentStatus.Retrying] {
        table.values.compactMap { record in record.retry.map { (record.delivery, $0) } }.sorted { $0.1.due < $1.1.due }
            .map { delivery, retry in
                AgentStatus.Retrying(handler: delivery.handler, file: delivery.name, deliveryID: delivery.id,
                                     attempt: delivery.attempt, reason: retry.reason,
                                     nextAttemptUSec: wallClockUSec + Int64((retry.due - now).microseconds))
            }
    }
}
