import Foundation
@testable import InboxCore
@testable import InboxSystem

/// A `Launcher` that runs nothing: it records each start (the delivery, the kind the dispatcher decided, the copy it
/// was given) and each stop request, and ends an attempt with the outcome the test says, when the test says.
final class FakeLauncher: Launcher {
    final class Attempt: LaunchedAttempt {
        let delivery: Delivery
        let kind: LaunchKind
        let pid: Int32
        let sandboxed = true
        /// When it started and each stop request, on the event loop's clock.
        let started = EventLoop.now()
        private(set) var stops: [(DeliveryLifecycle.StopSignal, Duration)] = []
        private(set) var isFinished = false
        fileprivate let ended: (DeliveryOutcome) -> Void
        fileprivate weak var launcher: FakeLauncher?

        fileprivate init(delivery: Delivery, kind: LaunchKind, pid: Int32, ended: @escaping (DeliveryOutcome) -> Void) {
            self.delivery = delivery
            self.kind = kind
            self.pid = pid
            self.ended = ended
        }

        var name: String { delivery.name }

        /// Ends the attempt as the handler would have.
        func finish(_ outcome: DeliveryOutcome) {
            precondition(!isFinished, "\(delivery.name) ended twice")
            isFinished = true
            ended(outcome)
        }

        func stop(_ signal: DeliveryLifecycle.StopSignal) {
            stops.append((signal, EventLoop.now()))
            launcher?.stopped(self, signal)
        }
    }

    /// What a start does: it runs, or is refused, or fails to start.
    enum Answer {
        case start
        case refuse(String)
        case fail(String)
    }

    private(set) var starts: [Attempt] = []
    private(set) var catalogs = 0
    private var nextPID: Int32 = 1000
    /// Asked for every start; `.start` unless the test says otherwise.
    var answer: (Delivery) -> Answer = { _ in .start }
    /// Called after each start that runs.
    var onStart: (Attempt) -> Void = { _ in }
    /// Called after each stop request.
    var onStop: (Attempt, DeliveryLifecycle.StopSignal) -> Void = { _, _ in }

    /// The attempts still running, oldest first.
    var running: [Attempt] { starts.filter { !$0.isFinished } }

    func start(_ delivery: Delivery, kind: LaunchKind, copy: FileDescriptor, registration: HandlerRegistration,
               container: Container, ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart {
        // The copy is the delivery's own Inbox file, open for reading.
        precondition(FileIdentity(copy) != nil, "the dispatcher gave no open copy")
        switch answer(delivery) {
        case .refuse(let reason): return .refused(reason)
        case .fail(let reason): return .failed(reason)
        case .start: break
        }
        nextPID += 1
        let attempt = Attempt(delivery: delivery, kind: kind, pid: nextPID, ended: ended)
        attempt.launcher = self
        starts.append(attempt)
        onStart(attempt)
        return .started(attempt)
    }

    func signal(_ attempt: LaunchedAttempt, _ signal: DeliveryLifecycle.StopSignal) {
        (attempt as! Attempt).stop(signal)
    }

    fileprivate func stopped(_ attempt: Attempt, _ signal: DeliveryLifecycle.StopSignal) {
        onStop(attempt, signal)
    }

    func use(_ catalog: HandlerCatalog) { catalogs += 1 }
}

/// A dispatcher on a real event loop, a real state directory in a temporary directory and a fake launcher: its
/// deliveries' files are real files in their containers' Inboxes.
final class DispatcherWorld {
    let root: URL
    let loop: EventLoop
    let state: StateDirectories
    let launcher = FakeLauncher()
    let dispatcher: Dispatcher
    private(set) var ended: [Delivery] = []
    private(set) var rerouted: [Delivery] = []
    private(set) var drained = 0
    private var nextID = 0

    init(_ registrations: [HandlerRegistration], maxConcurrent: Int = 4, retry: RetryPolicy = RetryPolicy(),
         defaultTimeout: Duration? = nil, killGrace: Duration = .seconds(5)) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-dispatcher-\(UUID().uuidString)")
        loop = try EventLoop()
        state = try StateDirectories(creating: root.path)
        let logger = Logger(target: .stderr, threshold: .error)
        var limits = Dispatcher.Limits(maxConcurrent: maxConcurrent, retryPolicy: retry, defaultTimeout: defaultTimeout)
        limits.killGrace = killGrace
        dispatcher = Dispatcher(loop: loop, logger: logger, state: state, quarantine: Quarantine(state: state, logger: logger),
                                launcher: launcher, catalog: Self.catalog(registrations), limits: limits)
        dispatcher.ended = { [unowned self] in self.ended.append($0) }
        dispatcher.reroute = { [unowned self] in self.rerouted.append($0) }
        dispatcher.drained = { [unowned self] in self.drained += 1 }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    static func catalog(_ registrations: [HandlerRegistration]) -> HandlerCatalog {
        HandlerCatalog(loaded: LoadedRegistrations(registrations: registrations), preferences: HandlerPreferences(),
                       identities: [:], problems: [], loadedAt: .zero)
    }

    /// A registration of the kind the tests need.
    static func handler(_ identifier: String, batchSize: Int = 1, maxConcurrent: Int? = nil, resident: Bool = false,
                        unit: Bool = false, timeout: Duration? = nil) -> HandlerRegistration {
        let exec = try! ExecCommand(parsing: batchSize > 1 ? "/bin/true %F" : "/bin/true %f")
        var registration = HandlerRegistration(identifier: identifier, exec: exec, timeout: timeout,
                                               maxConcurrent: maxConcurrent, path: "/test/\(identifier).handler")
        registration.batchSize = batchSize
        if unit { registration.unit = try! UnitTemplate(parsing: "\(identifier)@.service") }
        if resident {
            registration.activation = .resident
            registration.instances = 1
            registration.maxInFlight = 3
        }
        return registration
    }

    /// Places a file in `handler`'s container Inbox and enqueues its delivery; `enqueue` may change the file first, and
    /// returns its identity as intake placed it, if any.
    @discardableResult
    func deliver(_ name: String, to handler: String, before enqueue: (String) throws -> FileIdentity? = { _ in nil })
        throws -> Delivery {
        let container = try state.container(for: handler, identity: nil)
        let path = "\(root.path)/containers/\(handler)/Inbox/\(name)"
        // Written through a close-on-exec descriptor: a process another test spawns meanwhile must not inherit it
        // open for writing, which would make the dispatcher's read lease fail and the file look tampered with.
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let written = Array(name.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == name.utf8.count else { throw POSIXError(.EIO) }
        let placed = try enqueue(path)
        nextID += 1
        let delivery = Delivery(id: String(format: "%032x", nextID), handler: handler, name: name, path: path,
                                documents: container.documents, contentType: "public.plain-text",
                                contentTypes: ["public.plain-text"])
        dispatcher.enqueue(delivery, placed: placed)
        return delivery
    }

    func inboxHas(_ name: String, of handler: String) -> Bool {
        FileManager.default.fileExists(atPath: "\(root.path)/containers/\(handler)/Inbox/\(name)")
    }

    /// Whether failed/ holds the file, kept under its name or moved aside unopened (`rejected-` and its name).
    func failedHas(_ name: String) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(root.path)/failed")) ?? []).contains {
            $0.hasPrefix(name) || $0.hasPrefix("rejected-\(name)")
        }
    }

    /// Runs the event loop until `loop.exit(code: 0)`, or fails (code 1) once `timeout` passes.
    func run(timeout: Duration = .seconds(10)) throws -> Bool {
        let deadline = try loop.addTimer(after: timeout) { [loop] in loop.exit(code: 1) }
        defer { _ = deadline }
        return try loop.run() == 0
    }

    func exit() { loop.exit(code: 0) }
}
