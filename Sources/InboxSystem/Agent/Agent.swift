import CShims
import CSystemd
import Glibc
import InboxCore

/// The inboxd agent: watches Inboxes, routes each arrival to a handler, launches it and cleans up.
/// Single-threaded: everything runs in callbacks of one sd-event loop.
public final class Agent {
    public enum Phase: Sendable { case starting, running, draining, stopped }

    let settings: AgentSettings
    let logger: Logger
    let loop: EventLoop
    let notifier = ServiceNotifier()
    let isRoot = geteuid() == 0
    var phase: Phase = .starting
    /// The status `run()` returns; set when the agent stops because something it needs broke.
    var exitCode: CInt = 0

    // Directories.
    var inboxes: [Directory] = []
    let state: Directory
    let containersRoot: Directory
    let failed: Directory
    let unhandled: Directory
    var containers: [String: Container] = [:]

    // Registrations.
    var registrations = LoadedRegistrations()
    var preferences = HandlerPreferences(byType: [:])
    var identities: [String: Result<Identity, Identity.LookupError>] = [:]
    var registrationsLoadedAt: Duration = .zero
    var chainCache: [String: [String]] = [:]

    // Types.
    /// libmagic, in a sandboxed child; nil with ContentSniffing=no.
    var sniffer: SnifferProcess?
    /// Mismatches where the claim was kept, each reported once per registration load (see reportMismatch).
    var reportedCarrierMismatches: Set<String> = []

    // Sandbox.
    /// The Landlock ABI handlers are sandboxed with; 0 when there is none (or Landlock=off).
    var landlockABI = 0
    /// One ruleset per handler, applied by each of its children; rebuilt after a reload.
    var rulesets: [String: LandlockRuleset] = [:]

    // Watching.
    let inotify: Inotify
    var inotifySource: EventSource?
    var inboxWatches: [CInt: Directory] = [:]
    var handlerWatches: Set<CInt> = []
    /// Names seen by inotify or a rescan, not yet looked at. Bounded by `maxPendingNames`: past it
    /// inotify is not read, so the kernel queue takes the rest (and an overflow means a rescan).
    var pendingNames = NameQueue()
    var intakePump: EventSource?
    var inotifyPaused = false
    var rescanNeeded = true
    var reloadTimer: EventSource?
    var signalSources: [EventSource] = []

    /// Room for the largest attribute read (the annotation), allocated once.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: MetadataLimits.annotationBytes + 1, alignment: 8)

    // Deliveries.
    var queue = DeliveryQueue()
    var running: [String: RunningDelivery] = [:]
    var runningPerHandler: [String: Int] = [:]
    var retryTimers: [String: EventSource] = [:]
    var nextSequence: UInt64 = 0
    var stopTimer: EventSource?
    /// Child sources that only reap orphans the agent inherited as a subreaper and killed.
    var orphans: [pid_t: EventSource] = [:]
    var statusTimer: EventSource?
    var trimTimer: EventSource?

    /// Backpressure: past `highWater` queued deliveries intake pauses (files wait in the drop
    /// Inbox, where they already are safe) and resumes below `lowWater`.
    let highWater = 4096
    let lowWater = 1024
    let maxPendingNames = 16384
    /// Arrivals looked at per loop iteration, so exits of running handlers are never kept waiting
    /// behind a burst (each iteration dispatches one source, by priority).
    let intakeBatch = 32

    public init(settings: AgentSettings, logger: Logger) throws(SystemError) {
        self.settings = settings
        self.logger = logger
        loop = try EventLoop()
        inotify = try Inotify()
        state = try Directory.create(path: settings.stateDirectory, mode: 0o755)
        containersRoot = try state.subdirectory("containers", mode: 0o711)
        failed = try state.subdirectory("failed", mode: 0o700)
        unhandled = try state.subdirectory("unhandled", mode: 0o700)
    }

    deinit { scratch.deallocate() }

    /// Sets everything up, announces READY=1 and runs until stopped; returns the exit status.
    public func run() throws(SystemError) -> CInt {
        Signals.block([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
        for (signal, action) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signalSources.append(try loop.addSignal(signal) { [unowned self] in self.beginDraining(reason: action) })
        }
        signalSources.append(try loop.addSignal(SIGHUP) { [unowned self] in self.reload(reason: "SIGHUP") })
        loop.enableWatchdog()
        // A handler's daemonized descendants become our children when their parents exit, so that
        // they can be found and stopped with it (prctl(2), PR_SET_CHILD_SUBREAPER).
        _ = inbox_set_child_subreaper()

        setUpLandlock()
        guard setUpSniffing() else { return EXIT_FAILURE }
        inotifySource = try loop.addIO(inotify.descriptor) { [unowned self] _ in self.readInotify() }
        let pump = try loop.addDefer { [unowned self] in self.pumpIntake() }
        pump.setPriority(Priority.intake)
        pump.setEnabled(.off)
        intakePump = pump
        reloadRegistrations()
        watchHandlerDirectories()
        for path in settings.inboxes {
            let inbox = try Directory.create(path: path, mode: 0o755)
            let watch = try inotify.addWatch(path, mask: [.closeWrite, .movedTo])
            inboxWatches[watch] = inbox
            inboxes.append(inbox)
        }
        phase = .running
        // Files already there, or left over from a previous run, are taken now that watches exist.
        recoverContainers()
        redispatchUnhandled()
        rescanNeeded = true
        updateIntakePump()
        logger.log(.info, "Watching \(inboxes.count) inbox\(inboxes.count == 1 ? "" : "es")", event: .started,
                   fields: ["INBOX_INBOXES": settings.inboxes.joined(separator: " "),
                            "INBOX_STATE_DIRECTORY": settings.stateDirectory])
        notifier.ready(status: statusLine())
        writeStatusSoon()
        launchReady()
        let code = try loop.run()
        phase = .stopped
        // A status file left behind would describe an agent that is gone.
        if let runtime = try? Directory(path: settings.runtimeDirectory) {
            _ = unlinkat(runtime.descriptor.rawValue, "status.json", 0)
        }
        return code
    }

    /// "Watching 1 inbox; 3 queued, 2 running"
    func statusLine() -> String {
        var base = "Watching \(inboxes.count) inbox\(inboxes.count == 1 ? "" : "es"); \(queue.count) queued, \(running.count) running"
        if landlockABI == 0 { base += "; no Landlock" }
        return phase == .draining ? "Stopping; \(running.count) running" : base
    }

    /// Says once, at start-up, how handlers will be confined.
    func setUpLandlock() {
        landlockABI = settings.landlock == .off ? 0 : LandlockRuleset.abi()
        if landlockABI > 0 {
            logger.log(.info, "Handlers are sandboxed with Landlock ABI \(landlockABI)",
                       fields: ["INBOX_LANDLOCK_ABI": String(landlockABI)])
            return
        }
        let why = settings.landlock == .off ? "Landlock is switched off (Landlock=off)" : "the kernel offers no Landlock"
        let consequence = settings.landlock == .require
            ? "handlers are refused (Landlock=require)"
            : "handlers are confined by permissions and the after-exit check only; those with RequireLandlock=yes are refused"
        logger.log(.warning, "\(why): \(consequence)", fields: ["INBOX_LANDLOCK_ABI": "0"])
    }

    /// Starts the content sniffer unless ContentSniffing=no. A sniffer that cannot start stops the agent: without
    /// it a file's name alone would decide, and an executable named .png would reach an image viewer.
    func setUpSniffing() -> Bool {
        guard settings.contentSniffing else {
            logger.log(.warning, "Content sniffing is off (ContentSniffing=no): names and attributes alone decide types")
            return true
        }
        do throws(SniffError) {
            let sniffer = try startSniffer()
            logger.log(.info, "Content sniffing with libmagic \(sniffer.version) in a sandboxed child (pid \(sniffer.process.pid)), "
                       + "first \(ContentSniffer.byteLimit) bytes")
            return true
        } catch {
            logger.log(.error, "Cannot start the content sniffer: \(error); install libmagic-mgc or set ContentSniffing=no")
            return false
        }
    }

    /// A new sniffer child: under an identity of its own when the agent is root (never as root), else as the
    /// agent's user.
    @discardableResult
    func startSniffer() throws(SniffError) -> SnifferProcess {
        let sniffer = try SnifferProcess(executable: Self.ownExecutable, identity: isRoot ? DynamicIdentity.sniffer : nil,
                                         landlockABI: LandlockRuleset.abi())
        self.sniffer = sniffer
        return sniffer
    }

    /// The running sniffer, started again if it died since the last file (which is then not to blame).
    func liveSniffer() -> SnifferProcess? {
        guard let current = sniffer else { return nil }
        if current.isAlive { return current }
        logger.log(.warning, "The content sniffer (pid \(current.process.pid)) exited; starting another")
        return restartSniffer()
    }

    /// Replaces the sniffer; if no new one starts, the agent stops (it never types files by name alone unasked).
    @discardableResult
    func restartSniffer() -> SnifferProcess? {
        sniffer?.stop()
        do throws(SniffError) {
            return try startSniffer()
        } catch {
            sniffer = nil
            logger.log(.error, "Cannot start the content sniffer again: \(error); stopping")
            exitCode = EXIT_FAILURE
            beginDraining(reason: "no content sniffer")
            return nil
        }
    }

    /// This program, to start its sniffer from (/proc/self/exe, read once).
    static let ownExecutable: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "/proc/self/exe" }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Coalesces STATUS= and status file updates to a few per second during bursts.
    func writeStatusSoon() {
        guard statusTimer == nil else { return }
        statusTimer = try? loop.addTimer(after: .milliseconds(250), accuracy: .milliseconds(50)) { [unowned self] in
            self.statusTimer = nil
            self.notifier.status(self.statusLine())
            self.writeStatusFile()
        }
    }

    /// Event source priorities: lower runs first.
    enum Priority {
        static let childExit: Int64 = -10
        static let intake: Int64 = 10
    }

    // MARK: Stopping

    func beginDraining(reason: String) {
        guard phase == .running || phase == .starting else { return }
        phase = .draining
        inotifySource?.setEnabled(.off)
        intakePump?.setEnabled(.off)
        for timer in retryTimers.values { timer.setEnabled(.off) }
        retryTimers.removeAll()
        logger.log(.info, "Stopping on \(reason); waiting for \(running.count) running handler(s)", event: .stopping)
        notifier.stopping(status: statusLine())
        writeStatusFile()
        if running.isEmpty {
            loop.exit(code: exitCode)
            return
        }
        // Running handlers get the stop timeout to finish, then SIGTERM, then SIGKILL.
        stopTimer = try? loop.addTimer(after: settings.stopTimeout) { [unowned self] in
            for delivery in self.running.values { delivery.signalGroup(SIGTERM) }
            self.stopTimer = try? self.loop.addTimer(after: .seconds(3)) { [unowned self] in
                for delivery in self.running.values { delivery.signalGroup(SIGKILL) }
            }
        }
    }

    func finishDrainingIfDone() {
        if phase == .draining && running.isEmpty {
            loop.exit(code: exitCode)
        }
    }
}
