import InboxCore

/// Delivers to handlers that stay running (`Activation=resident`, docs/handler-protocol.md), one of the `Launcher`s
/// behind `HandlerLaunchers`. It starts an instance when a delivery is ready and none has room (at most `Instances=`),
/// through the same spawner as a launched handler plus a `SOCK_SEQPACKET` socket as fd 3; sends each delivery as one
/// message with the Inbox copy attached read-only; and ends the delivery when its answer comes, or when its instance ends
/// without one. Which instance takes a delivery, when one starts, stops or is started again is decided here; the
/// messages themselves are each `ResidentInstance`'s.
final class ResidentLauncher {
    /// What is known of one resident handler: its instances and the deliveries waiting for room in one.
    private final class Handler {
        var registration: HandlerRegistration
        var instances: [ResidentInstance] = []
        /// Accepted deliveries no instance holds yet, oldest first.
        var pending: [ResidentAttempt] = []
        /// Instances in a row that ended on their own with work left: the back-off before the next start.
        var failures = 0
        var restartTimer: EventSource?

        init(registration: HandlerRegistration) { self.registration = registration }

        var live: [ResidentInstance] { instances.filter { !$0.retired } }
    }

    private let loop: EventLoop
    private let logger: Logger
    private let spawner: HandlerSpawner
    private var handlers: [String: Handler] = [:]
    private var nextSequence: UInt64 = 0
    /// Deliveries whose end is reported from the event loop rather than inside `start` (the dispatcher learns of a
    /// started attempt only when `start` returns).
    private let later: LaterFinishes<ResidentAttempt>
    /// An instance started or ended: what the status shows changed.
    var changed: () -> Void = {}
    /// Draining, and the last instance has been reaped.
    var ended: () -> Void = {}
    /// The agent stops: no instance is started any more (`drain`).
    private var stopping = false

    init(loop: EventLoop, logger: Logger, spawner: HandlerSpawner) {
        self.loop = loop
        later = LaterFinishes(loop: loop) { attempt, outcome in attempt.finish(outcome) }
        self.logger = logger
        self.spawner = spawner
    }

    func start(_ delivery: Delivery, copy: FileDescriptor, registration: HandlerRegistration, container: Container,
               ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        let handler = handlers[delivery.handler] ?? Handler(registration: registration)
        handlers[delivery.handler] = handler
        // A descriptor of its own for the handler, opened read-only whatever the file's mode: it can read the copy
        // and never write it. Reopened from the dispatcher's, so it is the file the dispatcher checked and leased; for
        // a package, the directory whose manifest the dispatcher took, O_RDONLY|O_DIRECTORY (listed with fdopendir,
        // read with openat; what it may do inside is its Landlock rules', as for a path).
        let file: FileDescriptor
        do { file = try copy.reopenedReadOnly(directory: delivery.isPackage) } catch {
            return .failed("cannot open its Inbox copy: \(SystemError("open", path: delivery.path, errno: error))")
        }
        nextSequence += 1
        let attempt = ResidentAttempt(delivery: delivery, launcher: self, container: container, file: file,
                                      sequence: nextSequence, sandboxed: spawner.sandboxesHandlers, ended: ended)
        handler.pending.append(attempt)
        if let refusal = assign(handler) {
            // Refused outright: the dispatcher fails it without waiting for an end.
            later.cancel(attempt)
            return refusal
        }
        return .started(attempt)
    }

    /// Hands pending deliveries to instances with room, starting instances while fewer than Instances= run and every
    /// one is busy. A start that fails ends what waits with that failure; a refusal (no Landlock where it is
    /// required) is returned for the caller's own delivery.
    private func assign(_ handler: Handler) -> LaunchStart? {
        if stopping {
            failPending(handler, .stopped(.terminate))
            return nil
        }
        while let attempt = handler.pending.first {
            let live = handler.live
            var target = live.filter(\.hasRoom).min { $0.load < $1.load }
            if (target == nil || target!.load > 0) && live.count < handler.registration.instances
                && handler.restartTimer == nil {
                switch startInstance(handler, container: attempt.container) {
                case .success(let instance): target = instance
                case .failure(.refused(let reason)):
                    failPending(handler, .spawnFailed(reason))
                    return .refused(reason)
                case .failure(.failed(let reason)):
                    failPending(handler, .spawnFailed(reason))
                    return nil
                }
            }
            guard let target else { return nil }
            handler.pending.removeFirst()
            send(attempt, to: target, of: handler)
        }
        return nil
    }

    private func send(_ attempt: ResidentAttempt, to instance: ResidentInstance, of handler: Handler) {
        if !instance.send(attempt) {
            // Its socket broke: the delivery waits for another instance (or the one started when this one is gone).
            handler.pending.insert(attempt, at: 0)
        }
    }

    private func startInstance(_ handler: Handler, container: Container)
        -> Result<ResidentInstance, HandlerSpawner.Failure> {
        let registration = handler.registration
        let ends: (agent: MessageSocket, instance: FileDescriptor)
        do {
            ends = try MessageSocket.pair()
        } catch {
            return .failure(.failed("\(error)"))
        }
        defer { ends.instance.close() }
        let spawned = spawner.spawn(registration, container: container, stdin: [],
                                    deliveryIDs: []) { identity, stdin, output in
            SpawnRequest(resident: registration, container: container, identity: identity, socket: ends.instance,
                         standardInput: stdin, output: output)
        }
        let started: HandlerSpawner.Spawned
        switch spawned {
        case .failure(let failure):
            ends.agent.close()
            return .failure(failure)
        case .success(let handler): started = handler
        }
        let process = started.process
        let instance: ResidentInstance
        do {
            instance = try ResidentInstance(handler: registration.identifier, registration: registration, pid: process.pid,
                                            socket: ends.agent, loop: loop, logger: logger)
        } catch {
            spawner.abandon(started)
            return .failure(.failed("\(error)"))
        }
        switch spawner.watch(started, exited: { [unowned self, unowned instance] status in
            self.exited(instance, status: status)
        }) {
        case .success(let source): instance.childSource = source
        case .failure(let failure): return .failure(failure)
        }
        instance.output = started.output
        instance.answered = { [unowned self] instance, attempt, answer in self.answered(instance, attempt, answer) }
        instance.becameIdle = { [unowned self] instance in self.idle(instance) }
        handler.instances.append(instance)
        changed()
        logger.log(.info, "Started \(registration.identifier) (pid \(process.pid)) for its deliveries",
                   event: .instanceStarted,
                   fields: ["INBOX_HANDLER": registration.identifier, "INBOX_PID": String(process.pid),
                            "INBOX_INSTANCES": String(handler.instances.count)])
        return .success(instance)
    }

    private func answered(_ instance: ResidentInstance, _ attempt: ResidentAttempt, _ answer: HandlerAnswer) {
        handlers[instance.handler]?.failures = 0
        attempt.finish(answer.outcome)
        if let handler = handlers[instance.handler] { _ = assign(handler) }
    }

    /// Nothing in flight: a retired instance goes now; another after IdleExitSec=.
    private func idle(_ instance: ResidentInstance) {
        guard instance.stopReason == nil else { return }
        if stopping {
            instance.stop(reason: Self.agentStopping, grace: .seconds(1))
        } else if instance.retired {
            instance.stop(reason: "its registration changed")
        } else if let idleExit = instance.registration.idleExit {
            instance.stopWhenIdle(after: idleExit, reason: "idle for \(idleExit.shortDescription)")
        }
    }

    /// Its process exited; the reaper has ended what it left running, in its session and (once no other process of
    /// its identity runs) outside it, as for a launched handler.
    private func exited(_ instance: ResidentInstance, status: ExitStatus) {
        let unanswered = instance.exited()
        if let output = instance.output {
            instance.output = nil
            spawner.finish(output, fields: [("INBOX_HANDLER", instance.handler), ("INBOX_PID", String(instance.pid))])
        }
        let handler = handlers[instance.handler]
        handler?.instances.removeAll { $0 === instance }
        let fields: KeyValuePairs<String, String?> = [
            "INBOX_HANDLER": instance.handler, "INBOX_PID": String(instance.pid), "INBOX_EXIT_STATUS": status.exitCode,
            "INBOX_SERVED": String(instance.served), "INBOX_UNANSWERED": String(unanswered.count)]
        let outcome: DeliveryOutcome
        switch status {
        case .signaled(let signal): outcome = .signaled(signal)
        case .exited(let code): outcome = .unanswered("its instance exited with status \(code)")
        }
        if let reason = instance.stopReason, instance.stoppedByAgent {
            logger.log(.info, "Stopped \(instance.handler) (pid \(instance.pid)): \(reason); it \(status)",
                       event: .instanceStopped, fields: fields)
        } else {
            let left = unanswered.isEmpty ? "" : "; \(unanswered.count) unanswered deliver\(unanswered.count == 1 ? "y" : "ies") go again"
            let how = instance.stopReason.map { " (\($0))" } ?? ""
            // An instance that exits 0 with nothing left unanswered merely chose to go.
            let clean = unanswered.isEmpty && status == .exited(0)
            logger.log(clean ? .info : .warning, "\(instance.handler) (pid \(instance.pid)) \(status) on its own\(how)\(left)",
                       event: .instanceCrashed, fields: fields)
            if let handler, !stopping, !unanswered.isEmpty || !handler.pending.isEmpty {
                handler.failures += 1
                scheduleRestart(handler)
            }
        }
        for attempt in unanswered { attempt.finish(outcome) }
        changed()
        if let handler {
            if handler.instances.isEmpty && handler.pending.isEmpty && handler.restartTimer == nil,
               handlers[instance.handler] === handler {
                handlers[instance.handler] = nil
            } else {
                _ = assign(handler)
            }
        }
        if stopping && runningCount == 0 { ended() }
    }

    /// After instances ended on their own with work left, the next starts after 100 ms, doubling to at most 30 s.
    private func scheduleRestart(_ handler: Handler) {
        guard handler.restartTimer == nil else { return }
        let delay = Duration.milliseconds(100 * (1 << min(handler.failures - 1, 9)))
        handler.restartTimer = try? loop.addTimer(after: min(delay, .seconds(30)), accuracy: .milliseconds(10)) {
            [unowned self, unowned handler] in
            handler.restartTimer = nil
            _ = self.assign(handler)
        }
    }

    private func failPending(_ handler: Handler, _ outcome: DeliveryOutcome) {
        let failing = handler.pending
        handler.pending.removeAll()
        for attempt in failing { finishLater(attempt, outcome) }
    }

    private func finishLater(_ attempt: ResidentAttempt, _ outcome: DeliveryOutcome) {
        later.add(attempt, outcome)
    }

    /// A delivery still waiting for an instance was told to stop (`ResidentAttempt.stop`): it leaves, and ends from
    /// the loop.
    func withdraw(_ attempt: ResidentAttempt, _ signal: DeliveryLifecycle.StopSignal) {
        handlers[attempt.delivery.handler]?.pending.removeAll { $0 === attempt }
        finishLater(attempt, .stopped(signal))
    }

    /// A reload: instances of a registration that changed take no more deliveries and stop once they have answered
    /// what they hold; new deliveries start new instances. Those of a registration that is gone do the same, and
    /// what waits for them ends (to be routed again).
    func use(_ catalog: HandlerCatalog) {
        for (identifier, handler) in handlers {
            let current = catalog.registration(identifier)
            guard current != handler.registration else { continue }
            for instance in handler.instances where !instance.retired {
                instance.retire()
                if instance.load == 0 { instance.stop(reason: "its registration changed") }
            }
            if let current, current.activation == .resident {
                handler.registration = current
                _ = assign(handler)
            } else {
                failPending(handler, .unanswered("its registration changed"))
            }
        }
    }

    /// The agent stops (`StopSequence`): no instance is started again, deliveries that wait for one end at once (they
    /// stay in their containers for the next start), and every instance with nothing in flight is stopped now: end of
    /// file on its socket, SIGTERM 1 s later, SIGKILL 1 s after that. A busy one is stopped the same way once it has
    /// answered what it holds, or told to stop with the running deliveries (`terminateAll`). `ended` is called once
    /// the last instance has exited and been reaped (at once when none runs).
    func drain() {
        stopping = true
        for handler in handlers.values {
            handler.restartTimer = nil
            failPending(handler, .stopped(.terminate))
            for instance in handler.instances {
                instance.retire()
                if instance.load == 0 { instance.stop(reason: Self.agentStopping, grace: .seconds(1)) }
            }
        }
        if runningCount == 0 { ended() }
    }

    /// The stop bound passed: every instance still running gets `signal`, idle or not.
    func terminateAll(_ signal: DeliveryLifecycle.StopSignal) {
        for handler in handlers.values {
            for instance in handler.instances { instance.terminate(reason: Self.agentStopping, signal: signal) }
        }
    }

    /// Instances that run (or have not been reaped yet).
    var runningCount: Int { handlers.values.reduce(0) { $0 + $1.instances.count } }

    private static let agentStopping = "the agent is stopping"

    /// Instances for the status file, oldest first.
    func instances(now: Duration) -> [AgentStatus.Instance] {
        handlers.values.flatMap(\.instances).sorted { $0.started < $1.started }.map { $0.status(now: now) }
    }
}

extension ExitStatus {
    /// INBOX_EXIT_STATUS: the code, when it exited.
    fileprivate var exitCode: String? {
        if case .exited(let code) = self { String(code) } else { nil }
    }
}
