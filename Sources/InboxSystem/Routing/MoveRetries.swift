import InboxCore

/// Files the router could not move yet, each tried again on a timer with back-off (`Backoff`): one whose move failed
/// for a reason that passes (a full disk...), or whose sender still had it open for writing, or a dropped package not
/// yet seen still (`settle`: the settle rule, docs/design.md, Package documents). The event loop is never
/// blocked, and nothing else needs to happen (a restart, a new event) for the file to move once the reason is gone.
/// Keyed by directory and name; an entry lasts until its file is routed without a new wait (`forget`), so an outage
/// counts once per file. A retry that is due opens and checks the name again, as intake does, and routes it.
final class MoveRetries {
    private final class Entry {
        let directory: Directory
        let name: [UInt8]
        let origin: Arrival.Origin
        let backoff: Backoff
        var retries = 0
        var timer: EventSource?
        /// A dropped package's tree as its last check found it: what the next check must find again for it to be
        /// taken. nil for a file, and for a package whose last check did not finish (it saw the tree change).
        var manifest: PackageManifest?

        init(directory: Directory, name: [UInt8], origin: Arrival.Origin, backoff: Backoff) {
            self.directory = directory
            self.name = name
            self.origin = origin
            self.backoff = backoff
        }
    }

    private let loop: EventLoop
    private let logger: Logger
    private let state: StateDirectories
    private let quarantine: Quarantine
    private let reader: ArrivalReader
    private var entries: [String: Entry] = [:]
    /// Routes an arrival a retry took again; set by the router.
    var route: (Arrival) -> Void = { _ in }

    init(loop: EventLoop, logger: Logger, state: StateDirectories, quarantine: Quarantine, reader: ArrivalReader) {
        self.loop = loop
        self.logger = logger
        self.state = state
        self.quarantine = quarantine
        self.reader = reader
    }

    /// How many files wait for a retry.
    var count: Int { entries.count }

    /// What the settle rule found for a dropped package (`settle`).
    enum Settling {
        /// The same tree as the check before, at least a wait ago: taken, as this check found it.
        case still
        /// Checked again after the next wait of `Backoff.writer`.
        case waiting
        /// Still changing when no wait was left: refused to failed/ with what changed.
        case refused
    }

    /// The settle rule: a package dropped in an Inbox is taken only once two checks at least the first wait of
    /// `Backoff.writer` apart find the same tree (`manifest`, this check's, against the one kept from the check
    /// before). On first sight, or when the tree differs, this manifest is kept and the package checked again after
    /// the next wait (doubling, as for a file still open for writing); once none is left it is refused with what
    /// changed. A sender that writes with pauses shorter than a wait is never taken in the middle of its work.
    func settle(_ arrival: Arrival, _ manifest: PackageManifest) -> Settling {
        let key = Self.key(arrival.name, in: arrival.directory)
        let earlier = entries[key]?.manifest
        let change = earlier.flatMap { manifest.change(since: $0, allowingRemoval: false) }
        if earlier != nil && change == nil { return .still }
        if schedule(arrival.name, in: arrival.directory, origin: arrival.origin, backoff: .writer) != nil {
            entries[key]?.manifest = manifest
            return .waiting
        }
        // No change known when the check before this one saw the tree change under it.
        let refusal = PackageRefusal.changing(path: change?.path ?? ".")
        quarantine.reject(arrival, reason: refusal.reason)
        return .refused
    }

    /// Its sender has the arrival open for writing, or (a package) its tree changed while it was checked: it is
    /// tried again after the next wait of `Backoff.writer`, and refused once none is left, with `refusal` for a
    /// package. Whether it waits.
    func waitForWriter(_ arrival: Arrival, refusal: String? = nil) -> Bool {
        if schedule(arrival.name, in: arrival.directory, origin: arrival.origin, backoff: .writer) != nil {
            // A package's tree seen changing is no tree to settle on: the next check is a first sight.
            entries[Self.key(arrival.name, in: arrival.directory)]?.manifest = nil
            return true
        }
        quarantine.reject(arrival, reason: refusal ?? "its sender (uid \(arrival.sourceUID)) kept it open for writing, "
                          + "so its content could still change")
        return false
    }

    /// The move failed and the file is untouched where it was: a reason that passes is waited out with back-off,
    /// logged once per file and outage; anything else is logged and the file stays. Whether it waits.
    func cannotMove(_ arrival: Arrival, _ error: SystemError, into target: String, handler: String?) -> Bool {
        let fields: JournalFields = [("INBOX_FILE", arrival.shown), ("INBOX_DELIVERY_ID", arrival.id),
                                     ("INBOX_ERRNO", String(error.errno.rawValue)), ("INBOX_HANDLER", handler)]
        guard error.errno.isTransient else {
            logger.log(.error, "Cannot move \(arrival.shown) into \(target): \(error); it stays where it is",
                       fields: fields)
            return false
        }
        let retry = schedule(arrival.name, in: arrival.directory, origin: arrival.origin, backoff: .transient)
        if retry == 1 {
            logger.log(.warning, "Cannot move \(arrival.shown) into \(target): \(error); it stays where it is and is "
                       + "tried again", fields: fields)
        }
        return retry != nil
    }

    /// The file is the agent's, in intake/ as `name`, but could not go on: tried again from there (or at the next
    /// start). Never a wait of the arrival's own name, which is gone.
    func cannotMoveOn(_ arrival: Arrival, staged name: String, _ error: SystemError, into target: String) {
        guard let staging = state.intake else { return }
        let fields: JournalFields = [("INBOX_FILE", staging.child(name)), ("INBOX_DELIVERY_ID", arrival.id),
                                     ("INBOX_ERRNO", String(error.errno.rawValue))]
        if error.errno.isTransient {
            if schedule(Array(name.utf8), in: staging, origin: .held, backoff: .transient) == 1 {
                logger.log(.warning, "Cannot move \(arrival.shown) on into \(target): \(error); kept in "
                           + "\(staging.child(name)) and tried again", fields: fields)
            }
        } else {
            logger.log(.error, "Cannot move \(arrival.shown) on into \(target): \(error); kept in \(staging.child(name)) "
                       + "until the next start", fields: fields)
        }
    }

    /// The file was routed without a new wait (or is gone): its retries end. Called for every arrival, so nothing is
    /// built while nothing waits.
    func forget(_ name: [UInt8], in directory: Directory) {
        guard !entries.isEmpty else { return }
        entries[Self.key(name, in: directory)] = nil
    }

    private static func key(_ name: [UInt8], in directory: Directory) -> String { directory.child(displayName(name)) }

    /// Tries `name` again after the next wait of `backoff`. The retry number (1: the first of this outage, the one to
    /// log), or nil when `backoff` has no retries left (the entry is then forgotten).
    private func schedule(_ name: [UInt8], in directory: Directory, origin: Arrival.Origin, backoff: Backoff) -> Int? {
        let key = Self.key(name, in: directory)
        let entry: Entry
        if let existing = entries[key], existing.backoff == backoff {
            entry = existing
        } else {
            entry = Entry(directory: directory, name: name, origin: origin, backoff: backoff)
            // A settled package whose move then waits keeps its tree: unchanged at the retry, it is still settled.
            entry.manifest = entries[key]?.manifest
            entries[key] = entry
        }
        entry.retries += 1
        guard let delay = backoff.delay(before: entry.retries) else {
            entries[key] = nil
            return nil
        }
        entry.timer = try? loop.addTimer(after: delay, accuracy: delay / 10) { [unowned self, unowned entry] in
            entry.timer = nil
            self.retake(entry.name, from: entry.directory, origin: entry.origin)
        }
        return entry.retries
    }

    /// A retry is due: the name is opened and checked again (a package's tree too), as on arrival, and routed.
    private func retake(_ name: [UInt8], from directory: Directory, origin: Arrival.Origin) {
        switch reader.take(name, in: directory, origin: origin) {
        case .arrival(let arrival):
            defer { arrival.file.descriptor.close() }
            route(arrival)
        case .notADocument(let kind, let why):
            forget(name, in: directory)
            quarantine.moveAside(name, from: directory, kind: kind, why: why)
        case .gone:
            forget(name, in: directory)
        case .failed(let error):
            if !error.errno.isTransient || schedule(name, in: directory, origin: origin, backoff: .transient) == nil {
                forget(name, in: directory)
                logger.log(.warning, "Cannot take \(displayName(name)) again: \(error)",
                           fields: ["INBOX_FILE": directory.child(displayName(name))])
            }
        }
    }
}

extension Errno {
    /// A failure that passes by itself (a full disk or quota, too many open files, a disk error): worth retrying.
    var isTransient: Bool {
        [Errno.noSpace, .diskQuota, .tooManyOpenFiles, .tooManyOpenFilesInSystem, .ioError].contains(self)
    }
}
