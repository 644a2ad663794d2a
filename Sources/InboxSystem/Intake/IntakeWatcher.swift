import InboxCore

/// Watches the drop Inboxes and the handlers.d directories, and turns what arrives into `Arrival` values.
///
/// It owns the inotify descriptor and its watches, the queue of names seen but not yet looked at, and the pump that
/// works through that queue a batch per event-loop iteration (so handler exits are never kept waiting behind a burst).
/// Backpressure: while the dispatcher is full, neither the pump nor inotify is read; files wait in the drop Inbox,
/// where they already are safe, and the kernel queue holds the rest — its overflow means a rescan, never a loss.
final class IntakeWatcher {
    /// A name is looked at per pump step, as many as `batch` per loop iteration.
    private let batch = 32
    /// Past this many pending names inotify is not read.
    private let maxPendingNames = 16384

    private let loop: EventLoop
    private let logger: Logger
    private let inotify: Inotify
    private let reader: ArrivalReader
    private let quarantine: Quarantine
    private var inotifySource: EventSource?
    private var pump: EventSource?
    private var inboxWatches: [CInt: Directory] = [:]
    private var handlerWatches: Set<CInt> = []
    private(set) var inboxes: [Directory] = []
    private var pendingNames = NameQueue<Directory>()
    private var rescanNeeded = true
    private var inotifyPaused = false
    private var stopped = false

    /// Each arrival, opened and checked; the file is closed when the call returns.
    var arrived: (Arrival) -> Void = { _ in }
    /// A handlers.d directory changed.
    var handlersChanged: () -> Void = {}
    /// Whether the dispatcher has room for more (backpressure).
    var hasRoom: () -> Bool = { true }
    /// A batch was taken in.
    var batchDone: () -> Void = {}

    init(loop: EventLoop, logger: Logger, reader: ArrivalReader, quarantine: Quarantine) throws(SystemError) {
        self.loop = loop
        self.logger = logger
        self.reader = reader
        self.quarantine = quarantine
        inotify = try Inotify()
    }

    var pendingCount: Int { pendingNames.count }

    /// Starts reading inotify and makes the pump (off until there is work).
    func start() throws(SystemError) {
        inotifySource = try loop.addIO(inotify.descriptor) { [unowned self] _ in self.readEvents() }
        let pump = try loop.addDefer { [unowned self] in self.pumpIntake() }
        pump.setPriority(EventPriority.intake)
        pump.setEnabled(.off)
        self.pump = pump
    }

    /// Creates and watches each drop Inbox. Files already there are taken by the first rescan.
    func watch(inboxes paths: [String]) throws(SystemError) {
        for path in paths {
            let inbox = try Directory.create(path: path, mode: 0o755)
            let watch = try inotify.addWatch(path, mask: [.closeWrite, .movedTo])
            inboxWatches[watch] = inbox
            inboxes.append(inbox)
        }
        rescanNeeded = true
    }

    /// Watches each existing handlers.d directory again (after a reload, one may have appeared or gone).
    func watch(handlerDirectories paths: [String]) {
        for watch in handlerWatches { inotify.removeWatch(watch) }
        handlerWatches.removeAll()
        for path in paths {
            if let watch = try? inotify.addWatch(path, mask: [.closeWrite, .movedTo, .movedFrom, .create, .delete, .attrib]) {
                handlerWatches.insert(watch)
            }
        }
    }

    /// No more intake: drop Inboxes keep what arrives for the next start.
    func stop() {
        stopped = true
        inotifySource?.setEnabled(.off)
        pump?.setEnabled(.off)
    }

    /// Reads what inotify has queued: names go to the pending queue, looked at by the pump.
    private func readEvents() {
        let events: [InotifyEvent]
        do { events = try inotify.read() } catch {
            logger.log(.error, "Reading inotify events failed: \(error)")
            return
        }
        var handlersChanged = false
        for event in events {
            if event.mask.contains(.queueOverflow) {
                // inotify(7): events were dropped; the directories still hold every file.
                logger.log(.notice, "Inotify queue overflowed; rescanning the inboxes", event: .overflow)
                rescanNeeded = true
            } else if handlerWatches.contains(event.watch) {
                handlersChanged = true
            } else if let inbox = inboxWatches[event.watch], !event.name.isEmpty, !FileNames.isHidden(event.name) {
                pendingNames.append(inbox, event.name)
            }
        }
        if handlersChanged { self.handlersChanged() }
        // A few arrivals (the usual case) are taken right away, saving a loop iteration of latency; a burst goes
        // through the pump, batch by batch, between handler exits.
        if pendingNames.count <= batch && !rescanNeeded {
            pumpIntake()
        } else {
            resume()
        }
    }

    /// Looks at a batch of pending names, refilling from a rescan when one is due.
    private func pumpIntake() {
        guard !stopped else { return }
        var budget = batch
        // `stopped` is checked per name: taking one may stop the agent (its content sniffer could not be restarted),
        // and nothing is taken after that.
        while budget > 0 && !stopped && hasRoom() {
            guard let (inbox, name) = pendingNames.popFirst() else {
                guard rescanNeeded else { break }
                rescan()
                if pendingNames.isEmpty { break }
                continue
            }
            take(name, from: inbox)
            budget -= 1
        }
        batchDone()
        resume()
    }

    /// Opens one entry without following it: a regular file becomes an arrival, anything else is moved aside.
    private func take(_ name: [UInt8], from inbox: Directory) {
        switch inbox.openRegular(name) {
        case .gone:
            break
        case .refused(let kind):
            quarantine.moveAside(name, from: inbox, kind: kind)
        case .failed(let error):
            logger.log(.warning, "Cannot take \(displayName(name)): \(error)", event: .rejected,
                       fields: ["INBOX_FILE": inbox.child(displayName(name))])
        case .opened(let file):
            defer { file.descriptor.close() }
            arrived(reader.arrival(of: file, named: name, in: inbox, origin: .dropped))
        }
    }

    /// Queues every visible name in the drop Inboxes, as many as fit; the rest wait for the next rescan.
    private func rescan() {
        rescanNeeded = false
        for inbox in inboxes {
            guard let names = try? inbox.entries() else { continue }
            for name in names where !FileNames.isHidden(name) {
                if pendingNames.count >= maxPendingNames {
                    rescanNeeded = true
                    return
                }
                pendingNames.append(inbox, name)
            }
        }
    }

    /// Runs the pump while there is work and room; reads inotify while there is room for names. Called again when
    /// the dispatcher's queue falls.
    func resume() {
        guard !stopped else { return }
        let work = !pendingNames.isEmpty || rescanNeeded
        pump?.setEnabled(work && hasRoom() ? .on : .off)
        // Reading pauses at the limit and resumes once half of it is worked off, not at every name.
        if !inotifyPaused && pendingNames.count >= maxPendingNames {
            inotifyPaused = true
            inotifySource?.setEnabled(.off)
        } else if inotifyPaused && pendingNames.count < maxPendingNames / 2 {
            inotifyPaused = false
            inotifySource?.setEnabled(.on)
        }
    }
}
