import Glibc
import InboxCore

/// The launcher the dispatcher is given: each delivery goes to the one its registration asks for — a resident
/// instance (`Activation=resident`), a batch (`%F`, `%U` in `Exec=`), an instance of a systemd unit (`Unit=`), or a
/// process of its own.
final class HandlerLaunchers: Launcher {
    let processes: ProcessLauncher
    let batches: BatchLauncher
    let resident: ResidentLauncher
    let units: UnitLauncher

    /// `maxProcesses`: the agent's MaxConcurrent=, which also bounds a batch handler's processes.
    init(loop: EventLoop, logger: Logger, processes: ProcessLauncher, maxProcesses: Int, runtimeDirectory: String) {
        self.processes = processes
        batches = BatchLauncher(loop: loop, processes: processes, maxProcesses: maxProcesses)
        resident = ResidentLauncher(loop: loop, logger: logger, processes: processes)
        units = UnitLauncher(loop: loop, logger: logger, runtimeDirectory: runtimeDirectory)
        processes.residentChildren = { [unowned resident] in resident.pids }
    }

    func start(_ delivery: Delivery, copy: FileDescriptor, registration: HandlerRegistration, container: Container,
               ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        if registration.unit != nil {
            return units.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
        }
        if registration.activation == .resident {
            return resident.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
        }
        if registration.batchSize > 1 && !delivery.alone {
            return batches.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
        }
        return processes.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
    }

    func signal(_ attempt: LaunchedAttempt, _ signal: DeliveryLifecycle.StopSignal) {
        switch attempt {
        case let attempt as ResidentAttempt: resident.signal(attempt, signal)
        case let attempt as BatchLauncher.Attempt: batches.signal(attempt, signal)
        case let attempt as UnitLauncher.Attempt: units.signal(attempt, signal)
        default: processes.signal(attempt, signal)
        }
    }

    func use(_ catalog: HandlerCatalog) {
        processes.use(catalog)
        resident.use(catalog)
    }
}
