import Glibc
import InboxCore

/// Starts one handler process per delivery: `Exec=` expanded for the file, the delivery on stdin and in the
/// environment, stdout and stderr to the journal (the spawner's `OutputRelay`, at most OutputLimit=). The batch
/// launcher starts its processes here too, one for many files. It owns its processes until they exit; the spawner
/// starts and watches them, and the reaper ends what they leave running.
final class ProcessLauncher {
    /// One handler process: the attempt of a launched delivery, or the process of a batch (and, with what it reports,
    /// a print job's: `PrintLauncher.Attempt`).
    class Attempt: LaunchedAttempt {
        let pid: Int32
        /// What it delivers (its journal fields name the relay's entry, built only if there is one); the first file of
        /// a batch.
        let delivery: Delivery
        var childSource: EventSource?
        /// Its stdout and stderr (a print job's stderr only); finished when it exits.
        var output: OutputRelay?
        /// It exited: its pid may be someone else's now, and is never signalled again.
        var hasExited = false

        /// It runs under Landlock rules that refuse it any write to its Inbox copy.
        let sandboxed: Bool

        init(pid: Int32, delivery: Delivery, sandboxed: Bool) {
            self.pid = pid
            self.delivery = delivery
            self.sandboxed = sandboxed
        }

        /// Signals the handler's whole process group: it was made a session leader, so its descendants share its pid
        /// as group id. Safe from pid reuse: its pid is unreaped until it has exited.
        final func stop(_ signal: DeliveryLifecycle.StopSignal) {
            guard !hasExited else { return }
            Signals.send(Signal(signal), toGroupOf: pid)
        }
    }

    private let spawner: HandlerSpawner
    private var running: [pid_t: Attempt] = [:]

    init(spawner: HandlerSpawner) {
        self.spawner = spawner
    }

    /// Processes that run.
    var runningCount: Int { running.count }

    func start(_ delivery: Delivery, copy: FileDescriptor, registration: HandlerRegistration, container: Container,
               ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        startProcess(for: [delivery], registration: registration, container: container) { status in
            ended(DeliveryOutcome(status))
        }
    }

    /// The spawner holds what a reload changes.
    func use(_ catalog: HandlerCatalog) {}

    /// Starts one process for a file, or for a batch (Exec= with %F or %U): then the files are its arguments, stdin is
    /// a JSON array, and its environment has no file's INBOX_* variables (INBOX_BATCH_SIZE instead). When `.started`,
    /// `ended` is called once, from the event loop.
    func startProcess(for deliveries: [Delivery], registration: HandlerRegistration, container: Container,
                      ended: @escaping (ExitStatus) -> Void) -> LaunchStart {
        let delivery = deliveries[0]
        let single = deliveries.count == 1 && !registration.exec.takesFileList
        let stdinDocument = single ? delivery.stdinDocument() : Delivery.batchDocument(deliveries)
        let spawned = spawner.spawn(registration, container: container, stdin: stdinDocument,
                                    deliveryIDs: deliveries.map(\.id)) { identity, stdin, output in
            if single {
                return SpawnRequest(handler: registration, delivery: delivery, tmp: container.tmp, identity: identity,
                                    standardInput: stdin, output: output)
            }
            return SpawnRequest(handler: registration, batch: deliveries, container: container, identity: identity,
                                standardInput: stdin, output: output)
        }
        let started: HandlerSpawner.Spawned
        switch spawned {
        case .failure(let failure): return failure.launchStart
        case .success(let handler): started = handler
        }
        let attempt = Attempt(pid: started.process.pid, delivery: delivery, sandboxed: started.sandboxed)
        attempt.output = started.output
        switch spawner.watch(started, exited: { [unowned self, unowned attempt] status in
            self.exited(attempt, status: status, ended: ended)
        }) {
        case .success(let source): attempt.childSource = source
        case .failure(let failure): return failure.launchStart
        }
        running[attempt.pid] = attempt
        return .started(attempt)
    }

    /// Its process exited (the reaper has ended what it left running): its output is finished, then its end reported.
    private func exited(_ attempt: Attempt, status: ExitStatus, ended: (ExitStatus) -> Void) {
        running[attempt.pid] = nil
        attempt.hasExited = true
        attempt.childSource = nil
        if let output = attempt.output {
            attempt.output = nil
            spawner.finish(output, fields: attempt.delivery.journalFields())
        }
        ended(status)
    }
}
