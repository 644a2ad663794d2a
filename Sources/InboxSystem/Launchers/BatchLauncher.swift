import InboxCore

/// Starts one process for many files when `Exec=` takes a list (`%F`, `%U`). The deliveries of a handler wait
/// together; at the end of the loop's turn (once the dispatcher has started what it can), or once `BatchWindowSec=`
/// has passed since the first of them when the registration asks to wait for more, up to `BatchSize=` of them go to one
/// process, while fewer than the handler's process limit (`MaxConcurrent=`, else the agent's) run; the rest wait for
/// one to end, and so form larger batches under load. Exit 0: every file is done. Any other end: every file goes
/// again on its own (`DeliveryOutcome.batchFailed`), so that one bad file cannot fail the others. A delivery whose batch
/// failed (`Delivery.alone`) is an ordinary launch, and so is a batch of one.
final class BatchLauncher {
    /// One file of a batch, as the dispatcher knows it.
    final class Attempt: LaunchedAttempt {
        let delivery: Delivery
        fileprivate let ended: (DeliveryOutcome) -> Void
        private unowned let launcher: BatchLauncher
        /// The batch's process once it runs.
        fileprivate(set) var process: LaunchedAttempt?
        private(set) var isFinished = false

        /// Its batch's process runs under Landlock: known from the start, before the process exists.
        let sandboxed: Bool

        fileprivate init(delivery: Delivery, launcher: BatchLauncher, sandboxed: Bool,
                         ended: @escaping (DeliveryOutcome) -> Void) {
            self.delivery = delivery
            self.launcher = launcher
            self.sandboxed = sandboxed
            self.ended = ended
        }

        var pid: Int32 { process?.pid ?? 0 }

        /// A file whose batch runs stops with its batch (the other files of it too: they go again on their own); one
        /// still waiting for its batch leaves and ends at once, from the loop.
        func stop(_ signal: DeliveryLifecycle.StopSignal) {
            guard !isFinished else { return }
            if let process {
                process.stop(signal)
            } else {
                launcher.withdraw(self, signal)
            }
        }

        fileprivate func finish(_ outcome: DeliveryOutcome) {
            guard !isFinished else { return }
            isFinished = true
            ended(outcome)
        }
    }

    /// One handler's files waiting for a process, and its processes.
    private final class Handler {
        var registration: HandlerRegistration
        var container: Container
        var waiting: [Attempt] = []
        var running = 0
        /// Set while the first waiting file's BatchWindowSec= runs.
        var window: EventSource?

        init(registration: HandlerRegistration, container: Container) {
            self.registration = registration
            self.container = container
        }
    }

    private let loop: EventLoop
    private let processes: ProcessLauncher
    private let sandboxesHandlers: Bool
    private let maxProcesses: Int
    private var handlers: [String: Handler] = [:]
    private var due: Set<String> = []
    private var flushSource: EventSource?
    private let later: LaterFinishes<Attempt>
    /// The agent stops (`drain`): nothing is launched any more.
    private var stopping = false

    /// `maxProcesses`: the agent's limit, for handlers without MaxConcurrent=.
    /// `processes` starts each batch's process; `sandboxesHandlers`: whether they run under Landlock.
    init(loop: EventLoop, processes: ProcessLauncher, sandboxesHandlers: Bool, maxProcesses: Int) {
        self.loop = loop
        later = LaterFinishes(loop: loop) { attempt, outcome in attempt.finish(outcome) }
        self.processes = processes
        self.sandboxesHandlers = sandboxesHandlers
        self.maxProcesses = maxProcesses
    }

    func start(_ delivery: Delivery, copy: FileDescriptor, registration: HandlerRegistration, container: Container,
               ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        let handler = handlers[delivery.handler] ?? Handler(registration: registration, container: container)
        handlers[delivery.handler] = handler
        handler.registration = registration
        handler.container = container
        let attempt = Attempt(delivery: delivery, launcher: self, sandboxed: sandboxesHandlers, ended: ended)
        handler.waiting.append(attempt)
        if handler.waiting.count == 1 && registration.batchWindow > .zero && handler.window == nil {
            handler.window = try? loop.addTimer(after: registration.batchWindow, accuracy: .milliseconds(5)) {
                [unowned self, unowned handler] in
                handler.window = nil
                self.launchWaiting(delivery.handler)
            }
        }
        if handler.window == nil || handler.waiting.count >= registration.batchSize { scheduleFlush(delivery.handler) }
        return .started(attempt)
    }

    /// Each start brings its registration; a waiting handler's batch takes the latest.
    func use(_ catalog: HandlerCatalog) {}

    /// At the end of this turn of the loop, after the dispatcher has started all it can.
    private func scheduleFlush(_ handler: String) {
        due.insert(handler)
        guard flushSource == nil else { return }
        flushSource = try? loop.addDefer { [unowned self] in
            self.flushSource = nil
            let handlers = self.due
            self.due.removeAll()
            for handler in handlers { self.launchWaiting(handler) }
        }
    }

    /// Starts batches of the waiting files while the handler has a process slot: full ones whatever the window, the
    /// rest once its window has passed.
    private func launchWaiting(_ identifier: String) {
        guard let handler = handlers[identifier], !stopping else { return }
        let size = handler.registration.batchSize
        let limit = handler.registration.maxConcurrent ?? maxProcesses
        handler.waiting.removeAll { $0.isFinished }
        while handler.running < limit && !handler.waiting.isEmpty
                && (handler.window == nil || handler.waiting.count >= size) {
            let batch = Array(handler.waiting.prefix(size))
            handler.waiting.removeFirst(batch.count)
            launch(batch, of: handler, identifier: identifier)
        }
        if handler.waiting.isEmpty && handler.running == 0 { handlers[identifier] = nil }
    }

    private func launch(_ batch: [Attempt], of handler: Handler, identifier: String) {
        let started = processes.startProcess(for: batch.map(\.delivery), registration: handler.registration,
                                             container: handler.container) { [unowned self, unowned handler] status in
            handler.running -= 1
            let outcome = DeliveryOutcome(status)
            for attempt in batch {
                attempt.finish(batch.count > 1 && outcome != .exited(0) ? .batchFailed(outcome) : outcome)
            }
            self.launchWaiting(identifier)
        }
        switch started {
        case .started(let process):
            handler.running += 1
            for attempt in batch { attempt.process = process }
        case .refused(let reason), .failed(let reason):
            for attempt in batch { attempt.finish(.spawnFailed(reason)) }
        }
    }

    /// The agent stops: no batch is started any more, and the files still waiting for one end at once (they stay in
    /// their containers for the next start); running batches finish, or are stopped with the running deliveries.
    func drain() {
        stopping = true
        for handler in handlers.values {
            handler.window = nil
            for attempt in handler.waiting { later.add(attempt, .stopped(.terminate)) }
            handler.waiting.removeAll()
        }
    }

    /// A file still waiting for its batch was told to stop: it leaves, and ends from the loop, not from inside the
    /// dispatcher's own call.
    private func withdraw(_ attempt: Attempt, _ signal: DeliveryLifecycle.StopSignal) {
        handlers[attempt.delivery.handler]?.waiting.removeAll { $0 === attempt }
        later.add(attempt, .stopped(signal))
    }
}
