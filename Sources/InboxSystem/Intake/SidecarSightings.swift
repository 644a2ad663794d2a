import InboxCore

/// The files of the drop Inboxes that may have a sidecar (`.<name>.inbox-meta`) beside them, from the names inotify
/// and the rescans saw, so that intake looks for one only where one was seen: most files carry none, and the openat
/// that finds nothing costs about as much as one that finds it (3 µs here, a tenth of intake's calls per file).
///
/// It may err only towards looking. A sidecar is written before its file is renamed into place (README, Sidecar), so
/// its event is read before the file's, or, when events were lost, the rescan that must follow lists it; while a
/// rescan is due the caller looks for every file's (`IntakeWatcher`). A sighting is used up when its file is taken:
/// a later sidecar of the same name brings an event of its own. Past `capacity` sightings whose files never came (a
/// sender leaving sidecars alone), they are dropped and every file is looked for until the next complete rescan.
public struct SidecarSightings<Place: Hashable> {
    public let capacity: Int
    private var seen: [Place: Set<[UInt8]>] = [:]
    private var count = 0
    private var overflowed = false

    public init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// An entry named `name` came in `place` (any event, or a rescan's listing): recorded if it is a sidecar.
    public mutating func saw(_ name: [UInt8], in place: Place) {
        guard !overflowed, let file = Sidecar.fileName(ofSidecar: name) else { return }
        guard seen[place, default: []].insert(file).inserted else { return }
        count += 1
        if count > capacity {
            overflowed = true
            seen.removeAll()
            count = 0
        }
    }

    /// A rescan starts: what it lists replaces what was seen (`saw` for each name, then `rescanned`).
    public mutating func rescanStarts() {
        seen.removeAll()
        count = 0
        overflowed = false
    }

    /// The rescan stopped before it listed every Inbox: nothing unseen may be ruled out until the next.
    public mutating func rescanIncomplete() {
        overflowed = true
        seen.removeAll()
        count = 0
    }

    /// Whether the file `name` in `place` is to be looked for a sidecar; its sighting is used up.
    public mutating func mayHaveSidecar(_ name: [UInt8], in place: Place) -> Bool {
        if overflowed { return true }
        guard seen[place]?.remove(name) != nil else { return false }
        count -= 1
        return true
    }
}
