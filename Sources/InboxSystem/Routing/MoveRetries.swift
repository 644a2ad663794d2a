import InboxCore

/// Files the router could not move for a reason that passes, each tried again on a timer with back-off
/// (`Backoff`): the event loop is never blocked, and nothing else needs to happen (a restart, a new event) for the
/// file to move once the reason is gone. Keyed by directory and name; an entry lasts until its file is routed
/// without a new wait (`forget`), so an outage counts once per file.
final class MoveRetries {
    private final class Entry {
        let directory: Directory
        let name: [UInt8]
        let origin: Arrival.Origin
        let backoff: Backoff
        var retries = 0
        var timer: EventSource?

        init(directory: Directory, name: [UInt8], origin: Arrival.Origin, backoff: Backoff) {
            self.directory = directory
            self.name = name
            self.origin = origin
            self.backoff = backoff
        }
    }

    private let loop: EventLoop
    private var entries: [String: Entry] = [:]
    /// Takes the name again (open, check, route).
    var retake: (_ directory: Directory, _ name: [UInt8], _ origin: Arrival.Origin) -> Void = { _, _, _ in }

    init(loop: EventLoop) {
        self.loop = loop
    }

    static func key(_ name: [UInt8], in directory: Directory) -> String { directory.child(displayName(name)) }

    /// Tries `name` again after the next wait of `backoff`. The retry number (1: the first of this outage, the one to
    /// log), or nil when `backoff` has no retries left (the entry is then forgotten).
    func schedule(_ name: [UInt8], in directory: Directory, origin: Arrival.Origin, backoff: Backoff) -> Int? {
        let key = Self.key(name, in: directory)
        let entry: Entry
        if let existing = entries[key], existing.backoff == backoff {
            entry = existing
        } else {
            entry = Entry(directory: directory, name: name, origin: origin, backoff: backoff)
            entries[key] = entry
        }
        entry.retries += 1
        guard let delay = backoff.delay(before: entry.retries) else {
            entries[key] = nil
            return nil
        }
        entry.timer = try? loop.addTimer(after: delay, accuracy: delay / 10) { [unowned self, unowned entry] in
            entry.timer = nil
            self.retake(entry.directory, entry.name, entry.origin)
        }
        return entry.retries
    }

    /// The file was routed without a new wait (or is gone): its retries end. Called for every arrival, so nothing is
    /// built while nothing waits.
    func forget(_ name: [UInt8], in directory: Directory) {
        guard !entries.isEmpty else { return }
        entries[Self.key(name, in: directory)] = nil
    }
}

extension Errno {
    /// A failure that passes by itself (a full disk or quota, too many open files, a disk error): worth retrying.
    var isTransient: Bool {
        [Errno.noSpace, .diskQuota, .tooManyOpenFiles, .tooManyOpenFilesInSystem, .ioError].contains(self)
    }
}
