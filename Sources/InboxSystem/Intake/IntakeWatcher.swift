import InboxCore

/// Watches the drop Inboxes, the handlers.d directories and defaults.conf, and turns what arrives into `Arrival`
/// values.
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
    /// How often a missing Inbox is looked for when no watch on its parent says it is back.
    private let missingRetryInterval = Duration.seconds(5)
    private var inboxes: InboxWatches
    private var handlerWatches: Set<CInt> = []
    /// defaults.conf's directory, and its name there: only events for that name are a change of the preferences.
    private var preferencesWatch: (watch: CInt, name: [UInt8])?
    private var missingTimer: EventSource?
    private var mountWatch: MountWatch?
    private var pendingNames = NameQueue<Directory>()
    /// Which of the pending names may have a sidecar, so that only those are looked for one (while a rescan is due,
    /// every one is).
    private var sidecars = SidecarSightings<ObjectIdentifier>()
    /// The directories made in place (IN_CREATE|IN_ISDIR) not taken yet, by Inbox and name: never taken as packages.
    private var madeInPlace: Set<String> = []
    private var rescanNeeded = true
    private var inotifyPaused = false
    private var stopped = false

    /// Each arrival, opened and checked; the file is closed when the call returns.
    var arrived: (Arrival) -> Void = { _ in }
    /// A handlers.d directory or defaults.conf changed.
    var handlersChanged: () -> Void = {}
    /// Whether the dispatcher has room for more (backpressure).
    var hasRoom: () -> Bool = { true }
    /// A batch was taken in.
    var batchDone: () -> Void = {}
    /// An Inbox went missing or came back.
    var inboxesChanged: () -> Void = {}

    init(loop: EventLoop, logger: Logger, reader: ArrivalReader, quarantine: Quarantine,
         inboxes paths: [String]) throws(SystemError) {
        self.loop = loop
        self.logger = logger
        self.reader = reader
        self.quarantine = quarantine
        inotify = try Inotify()
        inboxes = InboxWatches(paths: paths, inotify: inotify, logger: logger)
        inboxes.isShared = { [unowned self] watch in
            self.handlerWatches.contains(watch) || self.preferencesWatch?.watch == watch
        }
    }

    var pendingCount: Int { pendingNames.count }
    /// The drop Inboxes watched now.
    var watchedCount: Int { inboxes.watched.count }
    /// The drop Inboxes that are gone (deleted, moved away, unmounted, never there) and waited for.
    var missingInboxes: [String] { inboxes.missing }
    /// The Inboxes watched now, with their directories.
    var watchedInboxes: [(path: String, directory: Directory)] {
        inboxes.all.compactMap { inbox in inbox.directory.map { (inbox.path, $0) } }
    }
    /// The drop Inboxes on another mount than the state directory, as `checkMounts` found them.
    private(set) var crossMountInboxes: [String] = []

    /// One warning per drop Inbox that is on another mount than `staging`, the state directory's (by mount id: a bind
    /// mount of the same filesystem, as a unit's ReadWritePaths= makes, counts), with what it costs: rename(2) cannot
    /// cross it. At start-up, once the Inboxes are watched.
    func checkMounts(against staging: Directory, stateDirectory: String) {
        crossMountInboxes = watchedInboxes.filter { $0.directory.isOnAnotherMount(than: staging) }.map(\.path)
        for inbox in crossMountInboxes {
            logger.log(.warning, "Inbox \(inbox) is on another mount than the state directory \(stateDirectory): "
                       + "rename(2) cannot cross it, so every file is copied instead of moved by inode (twice the disk "
                       + "while it is copied), and links, FIFOs and other entries that are not regular files cannot be "
                       + "moved aside and are left in place; keep drop Inboxes inside the state directory's mount "
                       + "(README, Inboxes elsewhere)",
                       fields: ["INBOX_INBOX": inbox, "INBOX_STATE_DIRECTORY": stateDirectory,
                                "INBOX_REASON": "another mount"])
        }
    }

    /// Starts reading inotify and makes the pump (off until there is work).
    func start() throws(SystemError) {
        inotifySource = try loop.addIO(inotify.descriptor) { [unowned self] _ in self.readEvents() }
        mountWatch = MountWatch(loop: loop) { [unowned self] in self.verifyInboxes() }
        let pump = try loop.addDefer { [unowned self] in self.pumpIntake() }
        pump.setPriority(EventPriority.intake)
        pump.setEnabled(.off)
        self.pump = pump
    }

    /// Watches each drop Inbox, creating one that is missing (as root with the drop mode); one that cannot be made is
    /// waited for. Files already there are taken by the first rescan.
    func watchInboxes(asRoot: Bool) throws(SystemError) {
        try inboxes.watchAtStart { path throws(SystemError) in try InboxWatches.create(path, asRoot: asRoot) }
        rescanNeeded = true
        armMissingTimer()
    }

    /// Watches each existing handlers.d directory again (after a reload, one may have appeared or gone), and the
    /// directory of `preferences` (defaults.conf) for that name, so that an edit (in place, or an editor's new file
    /// renamed over it), a new file and a removed one are each seen.
    func watch(handlerDirectories paths: [String], preferences: String?) {
        // The new watches first, the old ones not among them removed after: a directory watched before keeps its
        // watch (inotify_add_watch returns the same one), so a change queued under it while the registrations are
        // reloaded is still seen and reloads them again, instead of being dropped with a removed watch.
        var watches: Set<Int32> = []
        for path in paths {
            do {
                watches.insert(try inotify.addWatch(path, mask: [.closeWrite, .movedTo, .movedFrom, .create, .delete,
                                                                .attrib]))
            } catch where error.errno != .noSuchFile && error.errno != .notDirectory {
                // A missing directory is usual (the search path lists several); running out of watches is not.
                logger.log(.warning, "Cannot watch \(path) for registration changes: \(error)")
            } catch {}
        }
        watchPreferences(preferences)
        for watch in handlerWatches.subtracting(watches) where watch != preferencesWatch?.watch { inotify.removeWatch(watch) }
        handlerWatches = watches
    }

    /// The directory of defaults.conf, watched for its name; added to whatever else watches that directory (an Inbox's
    /// parent, say: one inode has one watch). A directory that does not exist yet is looked for again at each reload.
    private func watchPreferences(_ path: String?) {
        guard let path, let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return }
        let directory = slash == path.utf8.startIndex ? "/" : String(path[..<slash])
        let name = Array(path.utf8[path.utf8.index(after: slash)...])
        do {
            let watch = try inotify.addWatch(directory, mask: [.closeWrite, .movedTo, .movedFrom, .create, .delete,
                                                                .attrib, .maskAdd])
            preferencesWatch = (watch, name)
        } catch where error.errno != .noSuchFile && error.errno != .notDirectory {
            logger.log(.warning, "Cannot watch \(directory) for changes of \(path): \(error)")
        } catch {}
    }

    /// No more intake: drop Inboxes keep what arrives for the next start.
    func stop() {
        stopped = true
        inotifySource?.setEnabled(.off)
        mountWatch?.stop()
        pump?.setEnabled(.off)
    }

    /// Reads what inotify has queued: names go to the pending queue, looked at by the pump.
    private func readEvents() {
        let events: [InotifyEvent]
        do { events = try inotify.read() } catch {
            logger.log(.error, "Reading inotify events failed: \(error)")
            return
        }
        var handlersChanged = false, inboxesChanged = false
        for event in events {
            if event.mask.contains(.queueOverflow) {
                // inotify(7): events were dropped; the directories still hold every file.
                logger.log(.notice, "Inotify queue overflowed; rescanning the inboxes", event: .overflow)
                rescanNeeded = true
                // The dropped events may have said that an Inbox went.
                if case .changed = inboxes.verify() { inboxesChanged = true }
                continue
            }
            // One inode has one watch: a handlers.d directory may also be a missing Inbox's parent.
            if handlerWatches.contains(event.watch) { handlersChanged = true }
            if let preferences = preferencesWatch, event.watch == preferences.watch, event.name == preferences.name {
                handlersChanged = true
            }
            switch inboxes.handle(event) {
            case .notOurs, .nothing:
                break
            case .entry(let inbox, let name, let created, let isDirectory):
                guard !FileNames.isHidden(name) else {
                    sidecars.saw(name, in: ObjectIdentifier(inbox))
                    break
                }
                // A directory made in place (mkdir) cannot have arrived complete, whatever its name: it is moved aside
                // when taken. One renamed in (IN_MOVED_TO, also over the one made) may be a package document.
                if isDirectory {
                    let key = Self.key(name, in: inbox)
                    if created { madeInPlace.insert(key) } else { madeInPlace.remove(key) }
                } else if created, let st = try? inbox.status(of: name), EntryKind(mode: st.st_mode) == .regular,
                          st.st_nlink == 1 {
                    // A regular file made in place is still being written: IN_CLOSE_WRITE brings it. Anything else
                    // made in place (a link, FIFO, device, socket) brings no other event, and is looked at now.
                    break
                }
                pendingNames.append(inbox, name)
            case .changed(let rescan):
                inboxesChanged = true
                if rescan { rescanNeeded = true }
            }
        }
        if handlersChanged { self.handlersChanged() }
        if inboxesChanged {
            armMissingTimer()
            self.inboxesChanged()
        }
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

    /// Opens one entry without following it: a regular file or a package document becomes an arrival, anything
    /// else is moved aside.
    private func take(_ name: [UInt8], from inbox: Directory) {
        let made = !madeInPlace.isEmpty && madeInPlace.remove(Self.key(name, in: inbox)) != nil
        // Queued before its Inbox was lost: the old directory may be elsewhere now; a rescan finds what is there.
        guard inboxes.isCurrent(inbox) else { return }
        let sighted = sidecars.mayHaveSidecar(name, in: ObjectIdentifier(inbox))
        switch reader.take(name, in: inbox, origin: .dropped, lookForSidecar: sighted || rescanNeeded, madeInPlace: made) {
        case .gone:
            break
        case .notADocument(let kind, let why):
            quarantine.moveAside(name, from: inbox, kind: kind, why: why)
        case .failed(let error):
            logger.log(.warning, "Cannot take \(displayName(name)): \(error)", event: .rejected,
                       fields: ["INBOX_FILE": inbox.child(displayName(name))])
        case .arrival(let arrival):
            defer { arrival.file.descriptor.close() }
            arrived(arrival)
        }
    }

    private static func key(_ name: [UInt8], in inbox: Directory) -> String { inbox.child(displayName(name)) }

    /// Queues every visible name in the drop Inboxes, as many as fit; the rest wait for the next rescan.
    private func rescan() {
        rescanNeeded = false
        sidecars.rescanStarts()
        for inbox in inboxes.watched {
            guard let names = try? inbox.entries() else { continue }
            // The sidecars first: a file listed is taken only after the whole listing.
            for name in names where FileNames.isHidden(name) { sidecars.saw(name, in: ObjectIdentifier(inbox)) }
            for name in names where !FileNames.isHidden(name) {
                if pendingNames.count >= maxPendingNames {
                    rescanNeeded = true
                    sidecars.rescanIncomplete()
                    return
                }
                pendingNames.append(inbox, name)
            }
        }
    }

    /// The mount table changed: each Inbox is checked against its path.
    private func verifyInboxes() {
        guard !stopped, case .changed(let rescan) = inboxes.verify() else { return }
        if rescan { rescanNeeded = true }
        armMissingTimer()
        inboxesChanged()
        resume()
    }

    /// While an Inbox is missing, looks for it every few seconds: its parent's watch may be gone too, or may never
    /// have been possible.
    private func armMissingTimer() {
        guard missingTimer == nil, !stopped, !inboxes.missing.isEmpty else { return }
        missingTimer = try? loop.addTimer(after: missingRetryInterval, accuracy: .seconds(1)) { [unowned self] in
            self.missingTimer = nil
            guard !self.stopped else { return }
            if self.inboxes.retryMissing() {
                self.rescanNeeded = true
                self.inboxesChanged()
                self.resume()
            }
            self.armMissingTimer()
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
