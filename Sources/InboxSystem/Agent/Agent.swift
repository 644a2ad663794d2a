import Glibc
import InboxCore

/// The inboxd agent: builds the owners of the work and wires them together — the intake watcher yields arrivals,
/// the router decides and moves them, the dispatcher runs their deliveries through the launcher — then runs them on
/// one sd-event loop until stopped. It owns only the start-up order, the signals, the phase and reloads.
/// Single-threaded: everything runs in callbacks of that loop.
public final class Agent {
    public enum Phase: String, Sendable { case starting, running, draining, stopped }

    private let settings: AgentSettings
    private let logger: Logger
    private let loop: EventLoop
    /// sd_notify(3) over a socket of its own that never waits (a manager that does not read stops nothing).
    private let notifier: ServiceNotifier
    private let state: StateDirectories
    private var catalog: HandlerCatalog
    /// libmagic in a sandboxed child; nil with ContentSniffing=no.
    private let sniffer: SnifferSupervisor?
    private let watcher: IntakeWatcher
    /// The launcher the dispatcher uses: processes, batches, resident instances and units; its spawner and reaper.
    private let launchers: HandlerLaunchers
    private let dispatcher: Dispatcher
    private let router: Router
    /// Takes again what the agent holds: an earlier run's files at start-up, unhandled/ after a reload.
    private let recovery: Recovery
    /// What waits in pending/ for a person's choice of handler (`ChooseHandler=ask`).
    private let choices: PendingChoices
    private let status: StatusReporter
    /// Ends every process the agent started before it exits (SIGTERM and the like).
    private let stop: StopSequence
    private var phase = Phase.starting
    /// When the agent started (the event loop's clock): the status's `startedAtUSec`, from which its counters count.
    private let startedAt = EventLoop.now()
    /// The status `run()` returns; set when the agent stops because something it needs broke.
    private var exitCode: CInt = 0
    private var signalSources: [EventSource] = []
    /// A change in handlers.d or of defaults.conf reloads after a short pause, so an editor's save (write, rename,
    /// chmod) is one reload.
    private let reloadSoon: DeferredAction
    /// After a burst the heap holds memory the queue no longer needs; a second after the agent falls idle it is given
    /// back (malloc_trim(3)), so an idle agent stays small. Once per idle spell, never in the middle of work.
    private let trimWhenIdle: DeferredAction
    /// A cluster's ingest side (`[Cluster] Inboxes=`) and work side (`Work=yes`); nil without a `[Cluster]`.
    private let publisher: ClusterPublisher?
    private let worker: ClusterWorker?
    private let clusterChildren = ClusterChildren()

    public init(settings: AgentSettings, logger: Logger) throws(SystemError) {
        self.settings = settings
        self.logger = logger
        loop = try EventLoop()
        logger.attach(to: loop)
        notifier = ServiceNotifier(logger: logger)
        notifier.attach(to: loop)
        state = try StateDirectories(creating: settings.stateDirectory)
        // What removes the entries failed/ and unhandled/ kept past KeepFailedSec=/KeepUnhandledSec= (none when both
        // keep forever) is the state directory's, which every owner that adds to them already holds.
        state.retention = settings.retention.isEnabled
            ? Retention(loop: loop, logger: logger, state: state, settings: settings.retention) : nil
        catalog = Self.loadCatalog(settings, state: state)
        sniffer = settings.contentSniffing ? SnifferSupervisor(logger: logger, isRoot: CurrentProcess.isRoot,
                                                               mimeDirectories: settings.mimeDirectories) : nil
        let reader = ArrivalReader(logger: logger)
        reader.packageLimits = settings.packageLimits
        let quarantine = Quarantine(state: state, logger: logger)
        launchers = HandlerLaunchers(loop: loop, logger: logger, catalog: catalog,
                                     landlockABI: settings.landlock == .off ? 0 : LandlockRuleset.abi(),
                                     landlockMode: settings.landlock,
                                     ownChildren: { [sniffer, clusterChildren] in
                                         (sniffer?.pid.map { [$0] } ?? []) + clusterChildren.pids },
                                     maxProcesses: settings.maxConcurrent, runtimeDirectory: settings.runtimeDirectory)
        dispatcher = Dispatcher(loop: loop, logger: logger, state: state, quarantine: quarantine, launcher: launchers,
                                catalog: catalog, limits: .init(maxConcurrent: settings.maxConcurrent,
                                                                retryPolicy: settings.retryPolicy,
                                                                defaultTimeout: settings.defaultTimeout,
                                                                packages: settings.packageLimits))
        router = Router(loop: loop, logger: logger, state: state, quarantine: quarantine,
                        inspector: TypeInspector(sniffer: sniffer), reader: reader, dispatcher: dispatcher, catalog: catalog)
        recovery = Recovery(state: state, reader: reader, router: router, quarantine: quarantine)
        choices = PendingChoices(loop: loop, logger: logger, pending: state.pending, settings: settings.choices)
        router.choices = choices
        watcher = try IntakeWatcher(loop: loop, logger: logger, reader: reader, quarantine: quarantine,
                                    inboxes: settings.inboxes)
        if !settings.inboxBounds.isEmpty {
            let quotas = InboxQuotas(bounds: settings.inboxBounds, inboxes: settings.inboxes)
            router.quotas = quotas
            dispatcher.ended = { quotas.release($0.id) }
        }
        (publisher, worker) = Self.cluster(settings, loop: loop, logger: logger, state: state, catalog: catalog)
        clusterChildren.publisher = publisher
        clusterChildren.worker = worker
        router.publisher = publisher
        recovery.logger = logger
        status = StatusReporter(loop: loop, notifier: notifier, runtimeDirectory: settings.runtimeDirectory)
        stop = StopSequence(loop: loop, logger: logger, dispatcher: dispatcher, launchers: launchers) { [state] in
            state.containerOwners()
        }
        reloadSoon = DeferredAction(loop: loop, after: .milliseconds(100), accuracy: .milliseconds(10))
        trimWhenIdle = DeferredAction(loop: loop, after: .seconds(1), accuracy: .milliseconds(250))
        wire()
    }

    private static func loadCatalog(_ settings: AgentSettings, state: StateDirectories) -> HandlerCatalog {
        HandlerCatalog.load(settings, identities: .resolve(isRoot: CurrentProcess.isRoot,
                                                           containersPath: StateDirectories.paths(of: state.root.path).containers),
                            view: ServiceView.own(), at: EventLoop.now())
    }

    /// The owners of a `[Cluster]`: a publisher when this host feeds it, a worker when it works for it; each runs a
    /// child of its own (`inboxd-cluster`), which alone talks to NATS.
    private static func cluster(_ settings: AgentSettings, loop: EventLoop, logger: Logger, state: StateDirectories,
                                catalog: HandlerCatalog) -> (ClusterPublisher?, ClusterWorker?) {
        guard let cluster = settings.cluster else { return (nil, nil) }
        let host = cluster.host ?? CurrentProcess.hostName
        let abi = settings.landlock == .off ? 0 : LandlockRuleset.abi()
        func options(_ role: ClusterLink.Role, spool: String?) -> ClusterLink.Options {
            ClusterLink.Options(executable: ClusterLink.defaultExecutable(), role: role, settings: cluster,
                                hostName: host, version: inboxdVersion, ackWait: cluster.ackWait, spool: spool,
                                landlockABI: abi)
        }
        let publisher = cluster.inboxes.isEmpty ? nil : ClusterPublisher(
            loop: loop, logger: logger, settings: cluster, state: state, hostName: host,
            makeLink: { () throws(SystemError) in
                try ClusterLink(loop: loop, logger: logger, options: options(.ingest, spool: nil)) })
        let worker = !cluster.work ? nil : ClusterWorker(
            loop: loop, logger: logger, settings: cluster, state: state, catalog: catalog,
            maxConcurrent: settings.maxConcurrent, makeLink: { () throws(SystemError) in
                try ClusterLink(loop: loop, logger: logger, options: options(.work, spool: state.intake?.path)) })
        return (publisher, worker)
    }

    /// Who tells whom: arrivals to the router, its deliveries to the dispatcher, room in the queue back to intake.
    private func wire() {
        watcher.arrived = { [unowned self] arrival in self.router.route(arrival) }
        watcher.hasRoom = { [unowned self] in !self.dispatcher.isFull }
        watcher.batchDone = { [unowned self] in self.dispatcher.launchReady() }
        watcher.handlersChanged = { [unowned self] in self.reloadSoon.schedule() }
        reloadSoon.action = { [unowned self] in self.reload(reason: "handlers.d or defaults.conf changed") }
        trimWhenIdle.action = { [unowned self] in
            if self.dispatcher.isIdle && self.watcher.pendingCount == 0 { CurrentProcess.releaseFreeMemory() }
        }
        watcher.inboxesChanged = { [unowned self] in self.status.updateSoon() }
        dispatcher.reroute = { [unowned self] delivery in self.recovery.reroute(delivery) }
        choices.retake = { [unowned self] name in
            guard self.phase == .running else { return }
            self.recovery.takePending(name)
            self.dispatcher.launchReady()
        }
        dispatcher.roomForIntake = { [unowned self] in self.watcher.resume() }
        dispatcher.changed = { [unowned self] in
            self.status.updateSoon()
            if self.dispatcher.isIdle { self.trimWhenIdle.schedule() }
        }
        stop.finished = { [unowned self] in self.loop.exit(code: self.exitCode) }
        launchers.resident.changed = { [unowned self] in self.status.updateSoon() }
        sniffer?.lost = { [unowned self] in
            self.exitCode = EXIT_FAILURE
            self.beginDraining(reason: "no content sniffer")
        }
        status.senders.live = { [unowned self] offset in self.dispatcher.senderFiles(wallClockOffset: offset) }
        status.senders.changed = { [unowned self] in self.status.updateSoon() }
        logger.observer = { [unowned self] event, message, fields in
            self.status.senders.observe(event, message: message, fields: fields)
        }
        status.line = { [unowned self] in self.statusLine() }
        if let worker {
            worker.take = { [unowned self] arrival in self.router.route(arrival) }
            worker.launchReady = { [unowned self] in self.dispatcher.launchReady() }
            worker.changed = { [unowned self] in self.status.updateSoon() }
            router.clusterRefused = { [unowned worker] ticket, reason in worker.refused(ticket, reason) }
            dispatcher.clusterEnded = { [unowned worker] delivery, verdict in worker.ended(delivery, verdict) }
        }
        publisher?.changed = { [unowned self] in self.status.updateSoon() }
        status.snapshot = { [unowned self] now, wallClock in self.snapshot(now: now, wallClock: wallClock) }
    }

    /// Sets everything up, announces READY=1 and runs until stopped; returns the exit status.
    public func run() throws(SystemError) -> CInt {
        // SIGIO: a broken read lease (ReadLease) signals its holder, and would kill it; the router asks F_GETLEASE.
        Signals.block([SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGIO])
        for (signal, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signalSources.append(try loop.addSignal(signal) { [unowned self] in self.beginDraining(reason: name) })
        }
        signalSources.append(try loop.addSignal(SIGHUP) { [unowned self] in self.reload(reason: "SIGHUP") })
        notifier.startWatchdog()
        // A handler's daemonized descendants become our children when their parents exit, so that they can be found
        // and stopped with it (prctl(2), PR_SET_CHILD_SUBREAPER).
        CurrentProcess.becomeChildSubreaper()
        launchers.spawner.reportConfinement()
        if let sniffer {
            guard sniffer.startReporting() else { return EXIT_FAILURE }
        } else {
            logger.log(.warning, "Content sniffing is off (ContentSniffing=no): names and attributes alone decide types")
        }
        try watcher.start()
        catalog.report(to: logger)
        watcher.watch(handlerDirectories: settings.handlerDirectories + catalog.loaded.bundleDirectories,
                      preferences: settings.defaultsFile)
        try watcher.watchInboxes(asRoot: CurrentProcess.isRoot)
        watcher.checkMounts(against: state.intake ?? state.root, stateDirectory: settings.stateDirectory)
        state.leftInPlace.prune()
        phase = .running
        // What handlers of a crashed run still run goes before their files are delivered again.
        launchers.reaper.stopEarlierRun(uids: state.containerOwners())
        // What earlier runs left aside is each sender's to see, before what this run does is recorded over it.
        status.senders.recover(state)
        // Files already there, or left over from a previous run, are taken now that the watches exist.
        recovery.recoverContainers()
        // What waits for a choice: chosen while the agent was down, its time up meanwhile, or waiting on (before
        // unhandled/, whose files may go to pending/ now).
        choices.watch()
        recovery.redispatchPending()
        recovery.redispatchUnhandled()
        // What expired while the agent was down goes now; the rest is timed.
        state.retention?.start()
        publisher?.start()
        worker?.start()
        watcher.resume()
        logger.log(.info, "Watching \(Self.inboxes(settings.inboxes.count))", event: .started, fields: [
            "INBOX_INBOXES": settings.inboxes.joined(separator: " "), "INBOX_STATE_DIRECTORY": settings.stateDirectory])
        // The status file first: whoever waits for READY=1 (systemctl start) may ask `inboxctl status` at once.
        status.writeFile()
        notifier.ready(status: statusLine())
        // Started by hand, the agent says once that it is ready and where its entries go (a service's stderr is the
        // journal, where the started entry says it).
        logger.announce("Ready: watching \(settings.inboxes.joined(separator: ", ")), "
                        + "\(catalog.registrations.count) registration(s); "
                        + (logger.target == .journal ? "logging to the journal (journalctl -f -t inboxd)" : "logging here"))
        dispatcher.launchReady()
        let code = try loop.run()
        phase = .stopped
        notifier.finish()
        logger.finish()
        sniffer?.stop()
        publisher?.stop()
        worker?.stop()
        logger.observer = nil
        status.removeFile()
        return code
    }

    // MARK: Reloading

    /// Reads handlers.d and defaults.conf again and swaps the catalog whole; what waits for handlers that changed is
    /// routed again.
    private func reload(reason: String) {
        guard phase == .running else { return }
        notifier.reloading()
        logger.log(.debug, "Reloading registrations (\(reason))")
        catalog = Self.loadCatalog(settings, state: state)
        catalog.report(to: logger)
        router.use(catalog)
        dispatcher.use(catalog)
        worker?.use(catalog)
        watcher.watch(handlerDirectories: settings.handlerDirectories + catalog.loaded.bundleDirectories,
                      preferences: settings.defaultsFile)
        recovery.redispatchUnhandled()
        recovery.redispatchPending()
        notifier.ready(status: statusLine())
        dispatcher.launchReady()
    }

    // MARK: Stopping

    /// SIGTERM: stop intake, let running handlers finish within the stop timeout, then stop them, end resident
    /// instances and what handlers left running; exit when every process the agent started has been reaped
    /// (`StopSequence`).
    private func beginDraining(reason: String) {
        guard phase == .running || phase == .starting else { return }
        phase = .draining
        watcher.stop()
        worker?.stopFetching()
        let instances = launchers.resident.runningCount
        logger.log(.info, "Stopping on \(reason); waiting for \(dispatcher.runningCount) running handler(s)"
                   + (instances > 0 ? " and \(instances) resident instance(s)" : ""), event: .stopping)
        notifier.stopping(status: statusLine())
        status.writeFile()
        stop.begin(timeout: settings.stopTimeout)
    }

    // MARK: Status

    private static func inboxes(_ count: Int) -> String { "\(count) inbox\(count == 1 ? "" : "es")" }

    /// "Watching 1 inbox; 3 queued, 2 running", with "1 inbox missing" when one is gone.
    private func statusLine() -> String {
        if phase == .draining { return "Stopping; \(dispatcher.runningCount) running" }
        let missing = watcher.missingInboxes.count
        let line = "Watching \(Self.inboxes(watcher.watchedCount)); "
            + (missing > 0 ? "\(Self.inboxes(missing)) missing; " : "")
            + "\(dispatcher.queuedCount) queued, \(dispatcher.runningCount) running"
            + (dispatcher.retryingCount > 0 ? ", \(dispatcher.retryingCount) to retry" : "")
            + clusterStatus()
        return launchers.spawner.landlockABI == 0 ? line + "; no Landlock" : line
    }

    /// What the children last reported, the worker's first (it sees the consumers), the connection as the worse of
    /// the two.
    private var clusterState: ClusterState? {
        guard var state = worker?.state ?? publisher?.state else { return nil }
        for other in [publisher?.state, worker?.state].compactMap({ $0 }) where !other.connected {
            state.connected = false
            state.error = state.error ?? other.error
        }
        return state
    }

    /// "; cluster office unreachable, 12 waiting to be published" — what the status line says of a cluster.
    private func clusterStatus() -> String {
        guard let cluster = settings.cluster else { return "" }
        var parts: [String] = []
        let connected = (publisher == nil || publisher?.state?.connected == true)
            && (worker == nil || worker?.state?.connected == true)
        if !connected { parts.append("cluster \(cluster.names.name) unreachable") }
        if let publisher, publisher.waitingCount > 0 { parts.append("\(publisher.waitingCount) to publish") }
        if let worker, worker.holdingCount > 0 { parts.append("\(worker.holdingCount) from the cluster") }
        return parts.isEmpty ? "" : "; " + parts.joined(separator: ", ")
    }

    private func snapshot(now: Duration, wallClock: Int64) -> AgentStatus {
        var status = AgentStatus()
        status.pid = CurrentProcess.id
        status.startedAtUSec = wallClock - Int64((now - startedAt).microseconds)
        status.phase = phase.rawValue
        status.inboxes = settings.inboxes
        status.missingInboxes = watcher.missingInboxes
        status.stateDirectory = settings.stateDirectory
        status.handlerDirectories = settings.handlerDirectories
        status.queued = dispatcher.queuedCount
        status.inFlight = dispatcher.inFlight(now: now)
        status.retrying = dispatcher.retrying(now: now, wallClockUSec: wallClock)
        status.instances = launchers.resident.instances(now: now)
        status.failed = StateDirectories.visibleCount(state.failed)
        status.unhandled = StateDirectories.visibleCount(state.unhandled)
        status.pending = StateDirectories.visibleCount(state.pending)
        status.crossMountInboxes = watcher.crossMountInboxes
        status.leftInPlace = state.leftInPlace.entries.count
        status.landlockABI = launchers.spawner.landlockABI
        status.registrations = catalog.registrations.count
        status.registrationsLoadedAtUSec = wallClock - Int64((now - catalog.loadedAt).microseconds)
        status.contentSniffing = settings.contentSniffing
        status.limits = HeldFileLimitsStatus(retention: settings.retention, bounds: settings.inboxBounds,
                                             use: router.quotas.map { quotas in settings.inboxes.map { inbox in
            let use = quotas.usage(of: inbox)
            return .init(inbox: inbox, files: use.files, bytes: use.bytes)
        } } ?? [], packages: settings.packageLimits)
        status.sniffer = sniffer?.status
        status.stalls = logger.stalls
        status.stalls.notificationsCoalesced = notifier.coalescedCount
        status.stalls.notificationsDropped = notifier.droppedCount
        if let cluster = settings.cluster {
            status.cluster = ClusterStatus(name: cluster.names.name, host: cluster.host ?? CurrentProcess.hostName,
                                           roles: (publisher == nil ? [] : [.ingest]) + (worker == nil ? [] : [.work]),
                                           toPublish: publisher?.waitingCount ?? 0, fromCluster: worker?.holdingCount ?? 0,
                                           state: clusterState)
        }
        status.metrics = dispatcher.metrics
        return status
    }
}
