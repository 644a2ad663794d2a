import Glibc
import InboxCore

/// Starts one process for many files when `Exec=` takes a list (`%F`, `%U`): the deliveries the dispatcher starts in
/// one turn of the event loop form a batch of up to `BatchSize=`, started at the end of that turn, or once
/// `BatchWindowSec=` has passed since the first one when the registration asks to wait for more. Exit 0: every file is
/// done. Any other end: every file goes again on its own (`DeliveryOutcome.batchFailed`), so one bad file cannot fail
/// the others. A delivery whose batch failed (`Delivery.alone`), or a batch of one, is an ordinary launch.
final class BatchLauncher {
    /// One file of a batch, as the dispatcher knows it.
    final class Attempt: LaunchedAttempt {
        let delivery: Delivery
        fileprivate let ended: (DeliveryOutcome) -> Void
        /// The batch's process once it runs.
        fileprivate(set) var process: LaunchedAttempt?
        private(set) var isFinished = false

        init(delivery: Delivery, ended: @escaping (DeliveryOutcome) -> Void) {
            self.delivery = delivery
            self.ended = ended
        }

        var pid: Int32 { process?.pid ?? 0 }

        fileprivate func finish(_ outcome: DeliveryOutcome) {
            guard !isFinished else { return }
            isFinished = true
            ended(outcome)
        }
    }

    /// Files of one handler gathering into a batch.
    private final class Forming {
        let registration: HandlerRegistration
        let container: Container
        var attempts: [Attempt] = []
        var timer: EventSource?

        init(registration: HandlerRegistration, container: Container) {
            self.registration = registration
            self.container = container
        }
    }

    private let loop: EventLoop
    private let processes: ProcessLauncher
    /// The batch each handler is gathering, and full ones waiting for the end of the turn.
    private var forming: [String: Forming] = [:]
    private var full: [Forming] = []
    private var flushSource: EventSource?
    private var ending: [(Attempt, DeliveryOutcome)] = []
    private var endingSource: EventSource?

    init(loop: EventLoop, processes: ProcessLauncher) {
        self.loop = loop
        self.processes = processes
    }

    func start(_ delivery: Delivery, registration: HandlerRegistration, container: Container,
               ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        let batch: Forming
        if let current = forming[delivery.handler], current.registration == registration {
            batch = current
        } else {
            if let earlier = forming[delivery.handler] { full.append(earlier) }
            batch = Forming(registration: registration, container: container)
            forming[delivery.handler] = batch
            if registration.batchWindow > .zero {
                batch.timer = try? loop.addTimer(after: registration.batchWindow, accuracy: .milliseconds(5)) {
                    [unowned self, unowned batch] in self.windowPassed(batch)
                }
            }
        }
        let attempt = Attempt(delivery: delivery, ended: ended)
        batch.attempts.append(attempt)
        if batch.attempts.count >= registration.batchSize || batch.timer == nil {
            if batch.attempts.count >= registration.batchSize {
                forming[delivery.handler] = nil
                full.append(batch)
            }
            scheduleFlush()
        }
        return .started(attempt)
    }

    private func windowPassed(_ batch: Forming) {
        batch.timer = nil
        if let handler = batch.attempts.first?.delivery.handler, forming[handler] === batch { forming[handler] = nil }
        launch(batch)
    }

    /// At the end of this turn of the loop, after the dispatcher has started all it can.
    private func scheduleFlush() {
        guard flushSource == nil else { return }
        flushSource = try? loop.addDefer { [unowned self] in
            self.flushSource = nil
            let ready = self.full + self.forming.values.filter { $0.timer == nil }
            self.full.removeAll()
            for batch in ready {
                if let handler = batch.attempts.first?.delivery.handler, self.forming[handler] === batch {
                    self.forming[handler] = nil
                }
                self.launch(batch)
            }
        }
    }

    private func launch(_ batch: Forming) {
        let attempts = batch.attempts.filter { !$0.isFinished }
        guard !attempts.isEmpty else { return }
        let started = processes.startBatch(attempts.map(\.delivery), registration: batch.registration,
                                           container: batch.container) { status in
            let outcome: DeliveryOutcome = switch status {
            case .exited(let code): .exited(code)
            case .signaled(let signal): .signaled(signal)
            }
            for attempt in attempts {
                attempt.finish(attempts.count > 1 && outcome != .exited(0) ? .batchFailed(outcome) : outcome)
            }
        }
        switch started {
        case .started(let process):
            for attempt in attempts { attempt.process = process }
        case .refused(let reason), .failed(let reason):
            for attempt in attempts { attempt.finish(.spawnFailed(reason)) }
        }
    }

    /// A file whose batch runs stops with its batch; one still gathering leaves it and ends at once.
    func signal(_ attempt: Attempt, _ signal: DeliveryLifecycle.StopSignal) {
        guard !attempt.isFinished else { return }
        if let process = attempt.process {
            processes.signal(process, signal)
            return
        }
        for batch in Array(forming.values) + full { batch.attempts.removeAll { $0 === attempt } }
        // From the loop, not from inside the dispatcher's own call.
        let number = signal == .terminate ? SIGTERM : SIGKILL
        ending.append((attempt, .signaled(number)))
        if endingSource == nil {
            endingSource = try? loop.addDefer { [unowned self] in
                self.endingSource = nil
                let due = self.ending
                self.ending.removeAll()
                for (attempt, outcome) in due { attempt.finish(outcome) }
            }
        }
    }
}
