import Glibc
import InboxCore

/// Runs deliveries of `Unit=NAME@.service` registrations as instances of that template, `NAME@<delivery id>.service`,
/// started by the service manager (docs/handler-protocol.md, "A systemd unit as the handler"). One of the `Launcher`s
/// behind `HandlerLaunchers`: the delivery lifecycle, MaxConcurrent=, TimeoutSec= and the after-exit check of the copy
/// are the dispatcher's as for a process; only the start, the stop and the end go through systemd.
///
/// Nothing waits: the bus is attached to the event loop, StartUnit, StopUnit and KillUnit are asynchronous calls, and
/// the end of a run is read from the unit's PropertiesChanged signals. systemd sends a unit's type-specific properties
/// (Result, ExecMainCode, ExecMainStatus) before its generic ones (ActiveState, Job) in each change, so when a
/// generic change says the unit is inactive or failed with no job pending, the service's values read just before are
/// that run's. A start job is installed before StartUnit replies, so no change read after the reply can be an earlier
/// run's end.
///
/// The delivery reaches the unit as files in the agent's runtime directory: `units/<instance>.env` (the INBOX_*
/// variables, for `EnvironmentFile=`) and `units/<instance>.json` (the JSON a launched handler reads on stdin, for
/// `StandardInput=file:`), written before the start and removed at the end.
final class UnitLauncher {
    final class Attempt: LaunchedAttempt {
        let delivery: Delivery
        let unit: String
        let objectPath: String
        let ended: (DeliveryOutcome) -> Void
        private unowned let launcher: UnitLauncher
        /// StartUnit replied: the unit's changes from now on are this run's.
        var started = false
        var finished = false
        var result: String?
        var exitCode: Int64 = 0
        var exitStatus: Int64 = 0
        var mainPID: Int64 = 0

        fileprivate init(delivery: Delivery, unit: String, launcher: UnitLauncher,
                         ended: @escaping (DeliveryOutcome) -> Void) {
            self.delivery = delivery
            self.unit = unit
            self.launcher = launcher
            self.objectPath = UnitTemplate.objectPath(of: unit)
            self.ended = ended
        }

        var pid: Int32 { Int32(clamping: mainPID) }
        /// It runs under the unit's sandbox, not the agent's Landlock rules: a write to its copy may be its own.
        var sandboxed: Bool { false }

        /// TimeoutSec= passed or the agent stops: `.terminate` is StopUnit (the unit's own KillSignal= and
        /// TimeoutStopSec=), `.kill` KillUnit with SIGKILL for every process of it. Its end comes as for any run.
        func stop(_ signal: DeliveryLifecycle.StopSignal) {
            guard !finished else { return }
            launcher.stop(self, signal)
        }
    }

    private let loop: EventLoop
    private let logger: Logger
    private let runtimeDirectory: String
    private var bus: Bus?
    private var units: Directory?
    /// Running attempts by their unit's object path.
    private var attempts: [String: Attempt] = [:]
    private let later: LaterFinishes<Attempt>
    /// Why units cannot be started here at all (no systemd as PID 1), asked once: sd_booted(3) is a stat.
    private let refusal: String?
    /// The service manager's private socket.
    private let address: String?
    /// With no unit running, the connection is closed after this long: the manager signals every unit's changes to
    /// it, and an idle agent should not wake for them.
    private static let idleDisconnect = Duration.seconds(10)
    private var idleTimer: EventSource?

    /// `address` and `refusal` are the running system's unless a test puts a manager of its own there.
    init(loop: EventLoop, logger: Logger, runtimeDirectory: String, address: String? = ServiceManager.privateAddress,
         refusal: String? = ServiceManager.unitRefusal) {
        self.loop = loop
        self.logger = logger
        self.runtimeDirectory = runtimeDirectory
        self.address = address
        self.refusal = refusal
        later = LaterFinishes(loop: loop) { attempt, outcome in attempt.ended(outcome) }
    }

    func start(_ delivery: Delivery, copy: FileDescriptor, registration: HandlerRegistration, container: Container,
               ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        guard let template = registration.unit else { return .refused("its registration names no unit") }
        if let refusal { return .refused(refusal) }
        let unit = template.instance(delivery.id)
        let bus: Bus
        let directory: Directory
        do throws(SystemError) {
            bus = try connected()
            directory = try unitsDirectory()
        } catch {
            return .failed("cannot start \(unit): \(error)")
        }
        let instance = UnitTemplate.escape(delivery.id)
        let environment = ["TMPDIR=\(container.tmp)"]
            + registration.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            + delivery.environment()
        do throws(SystemError) {
            try directory.writeFile(instance + ".json", bytes: delivery.stdinDocument(), mode: 0o600)
            try directory.writeFile(instance + ".env", bytes: EnvironmentFile.render(environment), mode: 0o600)
        } catch {
            removeFiles(of: instance)
            return .failed("cannot write the delivery for \(unit): \(error)")
        }
        let attempt = Attempt(delivery: delivery, unit: unit, launcher: self, ended: ended)
        attempts[attempt.objectPath] = attempt
        idleTimer = nil
        do throws(SystemError) {
            try bus.call(ServiceManager.destination, path: ServiceManager.managerPath,
                         interface: ServiceManager.managerInterface, member: "StartUnit", arguments: [.string(unit), "replace"]) {
                [unowned self, unowned attempt] reply in
                switch reply {
                case .success: attempt.started = true
                case .failure(let error): self.finish(attempt, .spawnFailed("systemd did not start \(unit): \(error)"))
                }
            }
        } catch {
            attempts[attempt.objectPath] = nil
            removeFiles(of: instance)
            return .failed("cannot ask systemd to start \(unit): \(error)")
        }
        return .started(attempt)
    }

    /// Asks the manager to stop a running unit (`Attempt.stop`).
    private func stop(_ attempt: Attempt, _ signal: DeliveryLifecycle.StopSignal) {
        guard let bus else { return }
        // KillUnit(name, whom, signal): every process of the unit, as SIGKILL of a launched handler's group.
        let (member, arguments): (String, [BusArgument]) = switch signal {
        case .terminate: ("StopUnit", [.string(attempt.unit), "replace"])
        case .kill: ("KillUnit", [.string(attempt.unit), "all", .int32(Signal(signal).rawValue)])
        }
        do throws(SystemError) {
            try bus.call(ServiceManager.destination, path: ServiceManager.managerPath,
                         interface: ServiceManager.managerInterface, member: member, arguments: arguments) {
                [unowned self] reply in
                if case .failure(let error) = reply { self.logStopFailure(attempt.unit, member, error) }
            }
        } catch {
            logger.log(.warning, "Cannot ask systemd to stop \(attempt.unit): \(error)",
                       fields: attempt.delivery.journalFields())
        }
    }

    func use(_ catalog: HandlerCatalog) {}

    private func logStopFailure(_ unit: String, _ member: String, _ error: BusError) {
        logger.log(.warning, "systemd refused \(member) of \(unit): \(error)", fields: ["INBOX_UNIT": unit])
    }

    /// The connection to the service manager, made on the first delivery and again after it broke.
    private func connected() throws(SystemError) -> Bus {
        if let bus, bus.isOpen { return bus }
        guard let address else {
            throw SystemError("connect", path: "$XDG_RUNTIME_DIR/systemd/private", errno: .noSuchFile)
        }
        let bus = try Bus(address: address, description: "inboxd-units", loop: loop)
        try bus.addMatch("type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                         + "path_namespace='/org/freedesktop/systemd1/unit'") { [unowned self] message in
            self.propertiesChanged(message)
        }
        bus.disconnected = { [unowned self, unowned bus] in self.lost(bus) }
        self.bus = bus
        return bus
    }

    private func unitsDirectory() throws(SystemError) -> Directory {
        if let units { return units }
        let directory = try Directory(path: runtimeDirectory).subdirectory("units", mode: 0o700)
        units = directory
        return directory
    }

    private static let serviceProperties: Set<String> = ["Result", "ExecMainCode", "ExecMainStatus", "ExecMainPID"]
    private static let unitProperties: Set<String> = ["ActiveState", "Job"]

    private func propertiesChanged(_ message: borrowing BusMessage) {
        guard let path = message.path, let attempt = attempts[path], attempt.started, !attempt.finished,
              let interface = message.readString() else { return }
        switch interface {
        case "org.freedesktop.systemd1.Service":
            let properties = message.readProperties(Self.serviceProperties)
            if let result = properties["Result"]?.string { attempt.result = result }
            if let code = properties["ExecMainCode"]?.integer { attempt.exitCode = code }
            if let status = properties["ExecMainStatus"]?.integer { attempt.exitStatus = status }
            if let pid = properties["ExecMainPID"]?.integer, pid != 0 { attempt.mainPID = pid }
        case "org.freedesktop.systemd1.Unit":
            let properties = message.readProperties(Self.unitProperties)
            guard let state = properties["ActiveState"]?.string, state == "inactive" || state == "failed",
                  (properties["Job"]?.integer ?? 0) == 0 else { return }
            finish(attempt, outcome(of: attempt), failed: state == "failed")
        default:
            break
        }
    }

    /// How the run ended, from the service's ExecMainCode (a CLD_* code, 0 when no main process ran) and its status.
    private func outcome(of attempt: Attempt) -> DeliveryOutcome {
        switch attempt.exitCode {
        case Int64(CLD_EXITED): return .exited(Int32(clamping: attempt.exitStatus))
        case Int64(CLD_KILLED), Int64(CLD_DUMPED): return .signaled(Int32(clamping: attempt.exitStatus))
        default:
            let result = attempt.result ?? "unknown"
            return result == "success" ? .exited(0) : .spawnFailed("\(attempt.unit) ended with result '\(result)' before its process ran")
        }
    }

    /// Ends an attempt once: its files go, and a failed unit is reset so that failures do not pile up in the manager.
    private func finish(_ attempt: Attempt, _ outcome: DeliveryOutcome, failed: Bool = false) {
        guard !attempt.finished else { return }
        attempt.finished = true
        attempts[attempt.objectPath] = nil
        disconnectWhenIdle()
        removeFiles(of: UnitTemplate.escape(attempt.delivery.id))
        if failed, let bus, bus.isOpen {
            try? bus.call(ServiceManager.destination, path: ServiceManager.managerPath,
                          interface: ServiceManager.managerInterface, member: "ResetFailedUnit",
                          arguments: [.string(attempt.unit)]) { _ in }
        }
        attempt.ended(outcome)
    }

    private func disconnectWhenIdle() {
        guard attempts.isEmpty, bus != nil else { return }
        // From the event loop, never inside one of the connection's own callbacks.
        idleTimer = try? loop.addTimer(after: Self.idleDisconnect, accuracy: .seconds(1)) { [unowned self] in
            self.idleTimer = nil
            if self.attempts.isEmpty { self.bus = nil }
        }
    }

    private func removeFiles(of instance: String) {
        units?.remove(instance + ".env")
        units?.remove(instance + ".json")
    }

    /// The connection broke: what runs cannot be followed any more. Each attempt ends as failed to start, and its
    /// retry asks again on a new connection (a unit still running is then the one it follows: the same instance).
    private func lost(_ broken: Bus) {
        guard broken === bus else { return }
        logger.log(.warning, "Lost the connection to systemd; \(attempts.count) unit run(s) are tried again",
                   fields: ["INBOX_UNITS": String(attempts.count)])
        for attempt in attempts.values where !attempt.finished {
            attempt.finished = true
            removeFiles(of: UnitTemplate.escape(attempt.delivery.id))
            later.add(attempt, .spawnFailed("lost the connection to systemd while \(attempt.unit) ran"))
        }
        attempts.removeAll()
    }
}
