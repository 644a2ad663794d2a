import Glibc
import InboxCore

/// Removes what failed/ and unhandled/ have kept past `KeepFailedSec=`/`KeepUnhandledSec=` (`RetentionPolicy`
/// decides each entry's time). It keeps, for each directory, the entries it was told of in the order they expire, and
/// one timer of the event loop armed for the first of them only: an idle agent with nothing to expire is never woken.
/// At start-up each directory is read once, what expired while the agent was down is removed, and the rest is queued.
/// Entries are put there in time order, so a new one goes at the end of its queue (a wall clock set back is the
/// exception, and is sorted in). An entry that left by other means (`inboxctl retry`, `discard`, a new registration)
/// costs at most one look at its name when its time comes. Never on the per-file path: an arrival that ends in one of
/// these directories only appends a name to a queue.
public final class Retention {
    /// failed/ or unhandled/.
    public enum Place: String, Sendable, CaseIterable {
        case failed, unhandled

        var setting: String { self == .failed ? "KeepFailedSec" : "KeepUnhandledSec" }
    }

    /// An entry waiting for its time; `inode` tells it from a later entry that took its name.
    private struct Pending {
        let name: [UInt8]
        let inode: UInt64
        let deadlineUSec: Int64
    }

    /// One directory's entries in the order they expire; expired ones are taken from the front.
    private struct Queue {
        var entries: [Pending] = []
        var head = 0

        var first: Pending? { head < entries.count ? entries[head] : nil }

        mutating func append(_ entry: Pending) {
            if let last = entries.last, head < entries.count, last.deadlineUSec > entry.deadlineUSec {
                let index = entries[head...].partitioningIndex { $0.deadlineUSec > entry.deadlineUSec }
                entries.insert(entry, at: index)
            } else {
                entries.append(entry)
            }
        }

        mutating func popFirst() -> Pending? {
            guard let entry = first else { return nil }
            head += 1
            // Compacted once half of it is taken, so memory follows what is still kept.
            if head > 64 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
            return entry
        }
    }

    private let loop: EventLoop
    private let logger: Logger
    private let state: StateDirectories
    private let settings: RetentionSettings
    private var queues: [Place: Queue] = [:]
    private var timer: EventSource?
    private var armedFor: Int64?

    public init(loop: EventLoop, logger: Logger, state: StateDirectories, settings: RetentionSettings) {
        self.loop = loop
        self.logger = logger
        self.state = state
        self.settings = settings
    }

    private func keep(for place: Place) -> Duration? { place == .failed ? settings.keepFailed : settings.keepUnhandled }

    private func directory(_ place: Place) -> Directory? { place == .failed ? state.failed : state.unhandled }

    /// Whether entries put in `place` expire (and so get the time attribute).
    public func expires(_ place: Place) -> Bool { keep(for: place) != nil }

    // MARK: Entries as they come

    /// Records on a file the agent holds open that it is being put in `place` now (`user.inboxd.kept`); only where
    /// entries expire. Done through the descriptor the agent checked, never by name.
    public func stamp(_ file: FileDescriptor, for place: Place) {
        guard expires(place) else { return }
        ExtendedAttributes(file).write(AgentAttribute.kept, RetentionPolicy.record(nowUSec: WallClock.now))
    }

    /// `name` was just put in `place`: it expires after its Keep*Sec=.
    public func added(_ name: String, in place: Place) {
        guard let keep = keep(for: place), let directory = directory(place) else { return }
        let bytes = Array(name.utf8)
        guard let st = (try? directory.status(of: bytes)) ?? nil else { return }
        let deadline = WallClock.now.addingClamped(keep)
        queues[place, default: Queue()].append(Pending(name: bytes, inode: UInt64(st.st_ino), deadlineUSec: deadline))
        arm()
    }

    // MARK: Start-up

    /// Removes what expired while the agent was down and queues the rest; returns how many entries were removed.
    @discardableResult
    public func start() -> Int {
        var removed = 0
        for place in Place.allCases {
            guard expires(place), let directory = directory(place), let names = try? directory.entries() else { continue }
            directory.removeOrphanSidecars(among: names)
            let now = WallClock.now
            var pending: [Pending] = []
            for name in names where !FileNames.isHidden(name) {
                switch examine(name, in: directory, place: place, now: now) {
                case .expired(let entry):
                    if remove(entry, from: directory, place: place) { removed += 1 }
                case .kept(let entry):
                    pending.append(entry)
                case .gone:
                    break
                }
            }
            pending.sort { $0.deadlineUSec < $1.deadlineUSec }
            var queue = Queue()
            for entry in pending { queue.append(entry) }
            queues[place] = queue
        }
        arm()
        return removed
    }

    // MARK: Expiry

    private func arm() {
        let next = queues.values.compactMap(\.first?.deadlineUSec).min()
        guard let next else {
            timer = nil
            armedFor = nil
            return
        }
        if let armedFor, armedFor <= next, timer != nil { return }
        let delay = Duration.microseconds(max(0, next - WallClock.now))
        // A quarter of a second of slack lets sd-event fold this wake-up into another and expire several at once.
        timer = try? loop.addTimer(after: delay, accuracy: .milliseconds(250)) { [unowned self] in
            self.timer = nil
            self.armedFor = nil
            self.expireDue()
        }
        armedFor = timer == nil ? nil : next
    }

    /// The timer fired: every entry whose time has come is looked at again and removed if it is still due.
    private func expireDue() {
        let now = WallClock.now
        for place in Place.allCases {
            guard let directory = directory(place) else { continue }
            while let first = queues[place]?.first, first.deadlineUSec <= now {
                _ = queues[place]?.popFirst()
                switch examine(first.name, in: directory, place: place, now: now) {
                case .expired(let entry) where entry.inode == first.inode:
                    remove(entry, from: directory, place: place)
                case .kept(let entry) where entry.inode == first.inode:
                    // Its recorded time is later than its queue said (the wall clock was set back): queued again.
                    queues[place]?.append(entry)
                default:
                    break  // gone, or another entry under its name, which has its own place in the queue
                }
            }
        }
        arm()
    }

    private enum Examination {
        case expired(Entry)
        case kept(Pending)
        case gone
    }

    /// What is known of an entry for its journal entry.
    private struct Entry {
        let name: [UInt8]
        let inode: UInt64
        let kind: EntryKind
        let keptUSec: Int64
        let deliveryID: String?
        let sourceUID: UInt32
    }

    /// Looks at an entry without following it: a regular file is opened (`openRegular`, which opens nothing else) to
    /// read the agent's attributes through its descriptor, and so is a directory (a package refused or unhandled,
    /// `openPackage`); anything else is aged by its lstat change time alone.
    private func examine(_ name: [UInt8], in directory: Directory, place: Place, now: Int64) -> Examination {
        guard let lstat = (try? directory.status(of: name)) ?? nil else { return .gone }
        var st = lstat
        var recorded: Int64?
        var delivery: (id: String, sourceUID: UInt32, name: String?)?
        var kind = EntryKind(mode: lstat.st_mode)
        if kind == .regular || kind == .directory {
            switch kind == .regular ? directory.openRegular(name) : directory.openPackage(name) {
            case .opened(let file):
                let attributes = ExtendedAttributes(file.descriptor)
                recorded = attributes.readString(AgentAttribute.kept, limit: 32).flatMap(RetentionPolicy.recorded)
                delivery = AgentAttribute.delivery(attributes)
                st = file.status
                file.descriptor.close()
            case .refused(let refusedKind):
                kind = refusedKind
            case .gone:
                return .gone
            case .failed:
                break
            }
        }
        let changed = Int64(st.st_ctim.tv_sec) * 1_000_000 + Int64(st.st_ctim.tv_nsec) / 1000
        let inode = UInt64(st.st_ino)
        switch RetentionPolicy.decide(recordedUSec: recorded, changedUSec: changed, nowUSec: now, keep: keep(for: place)) {
        case .keepForever:
            return .gone
        case .keep(let until):
            return .kept(Pending(name: name, inode: inode, deadlineUSec: until))
        case .expire(let kept):
            return .expired(Entry(name: name, inode: inode, kind: kind, keptUSec: kept, deliveryID: delivery?.id,
                                  sourceUID: delivery?.sourceUID ?? st.st_uid))
        }
    }

    /// Removes the entry and its sidecar by name in the directory's descriptor, never following a link (a directory,
    /// a package or one moved aside, goes with everything in it, depth first by descriptor: `PackageTree.remove`);
    /// one `expired` entry in the journal.
    @discardableResult
    private func remove(_ entry: Entry, from directory: Directory, place: Place) -> Bool {
        let shown = directory.child(displayName(entry.name))
        let error: Errno?
        if entry.kind == .directory {
            error = PackageTree.remove(entry.name, in: directory)
        } else {
            error = directory.remove(entry.name)
        }
        let keep = keep(for: place).map(TimeSpan.format) ?? "infinity"
        let fields: JournalFields = [
            ("INBOX_FILE", shown), ("INBOX_DELIVERY_ID", entry.deliveryID), ("INBOX_SOURCE_UID", String(entry.sourceUID)),
            ("INBOX_FILE_KIND", entry.kind.rawValue), ("INBOX_KEPT_USEC", String(entry.keptUSec)),
            ("INBOX_KEPT_IN", place.rawValue), ("INBOX_KEEP_SETTING", "\(place.setting)=\(keep)")]
        if let error {
            logger.log(.warning, "Cannot remove \(shown), kept past \(place.setting)=\(keep): \(error)",
                       fields: fields + [("INBOX_ERRNO", String(error.rawValue))])
            return false
        }
        directory.removeSidecar(of: entry.name)
        let kept = TimeSpan.format(.milliseconds(entry.keptUSec / 1000))
        logger.log(.info, "Removed \(shown) after \(kept) in \(place.rawValue)/ (\(place.setting)=\(keep))", event: .expired,
                   fields: fields)
        return true
    }
}

extension Int64 {
    /// This time plus `duration`, saturated.
    fileprivate func addingClamped(_ duration: Duration) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(duration.microsecondsClamped)
        return overflow ? .max : sum
    }
}

extension Collection {
    /// The first index whose element satisfies `belongs`, for a collection partitioned by it (false, then true).
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Index {
        var low = startIndex, count = self.count
        while count > 0 {
            let half = count / 2
            let middle = self.index(low, offsetBy: half)
            if belongs(self[middle]) { count = half } else { low = self.index(after: middle); count -= half + 1 }
        }
        return low
    }
}
