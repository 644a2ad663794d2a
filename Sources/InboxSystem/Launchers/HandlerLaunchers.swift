import Glibc
import InboxCore

/// The launcher the dispatcher is given: each attempt goes to the one its launch kind names (`LaunchKind`, which the
/// dispatcher's limits count by too) — a resident instance (`Activation=resident`), a batch (`%F`, `%U` in `Exec=`),
/// an instance of a systemd unit (`Unit=`), a print job (`Print=`), or a process of its own. It builds the five with
/// what they share: the spawner every handler process is started by, and the reaper that ends what any of them leaves
/// running.
final class HandlerLaunchers: Launcher {
    let spawner: HandlerSpawner
    let reaper: Reaper
    let processes: ProcessLauncher
    let batches: BatchLauncher
    let resident: ResidentLauncher
    let units: UnitLauncher
    let printers: PrintLauncher

    /// `ownChildren`: the agent's children that are not handlers (its content sniffer), never taken for leftovers.
    /// `maxProcesses`: the agent's MaxConcurrent=, which also bounds a batch handler's processes.
    init(loop: EventLoop, logger: Logger, catalog: HandlerCatalog, landlockABI: Int, landlockMode: LandlockMode,
         ownChildren: @escaping () -> [pid_t], maxProcesses: Int, runtimeDirectory: String) {
        reaper = Reaper(loop: loop, logger: logger, ownChildren: ownChildren)
        spawner = HandlerSpawner(loop: loop, logger: logger, catalog: catalog, landlockABI: landlockABI,
                                 landlockMode: landlockMode, reaper: reaper)
        processes = ProcessLauncher(spawner: spawner)
        batches = BatchLauncher(loop: loop, processes: processes, sandboxesHandlers: spawner.sandboxesHandlers,
                                maxProcesses: maxProcesses)
        resident = ResidentLauncher(loop: loop, logger: logger, spawner: spawner)
        units = UnitLauncher(loop: loop, logger: logger, runtimeDirectory: runtimeDirectory)
        printers = PrintLauncher(loop: loop, logger: logger, spawner: spawner, catalog: catalog)
    }

    func start(_ delivery: Delivery, kind: LaunchKind, copy: FileDescriptor, registration: HandlerRegistration,
               container: Container, ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        switch kind {
        case .print:
            printers.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
        case .unit:
            units.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
        case .resident:
            resident.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
        case .batch:
            batches.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
        case .process, .alone:
            processes.start(delivery, copy: copy, registration: registration, container: container, ended: ended)
        }
    }

    func use(_ catalog: HandlerCatalog) {
        spawner.use(catalog)
        resident.use(catalog)
        printers.use(catalog)
    }
}
