import InboxCore

/// The drop Inboxes and their watches. An Inbox that is gone (deleted, moved away, replaced, on a filesystem
/// unmounted) is missing until a directory is at its path again. Each Inbox's parent is watched for its name: the
/// agent holds the Inbox open, and while a descriptor pins it the kernel sends no IN_DELETE_SELF for an rmdir (only
/// once the last one closes), so the parent's IN_DELETE is what tells. A slow timer in the `IntakeWatcher` tries
/// again where even that watch is not possible (the parent is gone too, or its watch was shared and removed).
/// inotify(7): after IN_MOVE_SELF a watch follows the directory wherever it went, so a lost one is removed here.
final class InboxWatches {
    /// One drop Inbox: its path, and while it is watched the open directory and its watch.
    final class Inbox {
        let path: String
        var directory: Directory?
        var watch: CInt?
        var parentWatch: CInt?
        /// A failure to watch it again other than its absence (the kernel's limits) was logged; once per loss.
        var reportedFailure = false

        init(path: String) { self.path = path }

        /// The directory it is an entry of (a trailing slash is no component of its own).
        var parentPath: String {
            InboxCore.parentPath(path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path)
        }

        /// Its name in that directory.
        var name: [UInt8] { Array(lastPathComponent(path).utf8) }
    }

    /// What an event means for the Inboxes.
    enum Outcome {
        /// Not about an Inbox or a missing Inbox's parent.
        case notOurs
        /// An entry in a watched Inbox; `created` when it was made there (IN_CREATE), not renamed in or written;
        /// `directory` when it is one (IN_ISDIR).
        case entry(Directory, [UInt8], created: Bool, directory: Bool)
        /// Of no consequence (an IN_IGNORED after a loss already handled, another name in a parent).
        case nothing
        /// An Inbox went missing, or came back (then it wants a rescan).
        case changed(rescan: Bool)
    }

    /// What the Inboxes are watched for: arrivals (renamed in, written in place, or made in place) and the end of
    /// the watched directory itself.
    static let mask: InotifyEvent.Mask = [.closeWrite, .movedTo, .create, .deleteSelf, .moveSelf]

    private let inotify: Inotify
    private let logger: Logger
    private(set) var all: [Inbox]
    private var byWatch: [CInt: Inbox] = [:]
    private var byParentWatch: [CInt: [Inbox]] = [:]
    /// Whether a watch descriptor is also used by someone else (the handlers.d watches): inotify gives one watch per
    /// inode, so removing a shared one would end theirs too.
    var isShared: (CInt) -> Bool = { _ in false }

    init(paths: [String], inotify: Inotify, logger: Logger) {
        self.inotify = inotify
        self.logger = logger
        all = paths.map(Inbox.init)
    }

    var watched: [Directory] { all.compactMap(\.directory) }
    var missing: [String] { all.filter { $0.directory == nil }.map(\.path) }

    /// Whether `directory` is one the Inboxes hold now (a name queued before its Inbox was lost is not taken from
    /// the directory it was in: that may be the old one, moved elsewhere).
    func isCurrent(_ directory: Directory) -> Bool { all.contains { $0.directory === directory } }

    /// Watches each Inbox at start-up, creating a missing one with `create` (and saying so); one that cannot be
    /// created is reported missing and waited for. Other failures (the kernel's limits) are the agent's to report.
    func watchAtStart(create: (String) throws(SystemError) -> String) throws(SystemError) {
        for inbox in all {
            if Self.exists(inbox.path) == false {
                do {
                    let how = try create(inbox.path)
                    logger.log(.warning, "Inbox \(inbox.path) did not exist; created it (\(how))",
                               fields: ["INBOX_INBOX": inbox.path])
                } catch {
                    logger.log(.warning, "Inbox \(inbox.path) is missing and cannot be created (\(error)); "
                        + "waiting for it to appear", fields: ["INBOX_INBOX": inbox.path])
                }
            }
            if try !watch(inbox) { watchParent(inbox) }
        }
    }

    /// Sorts one event; a loss is logged here, once.
    func handle(_ event: InotifyEvent) -> Outcome {
        if let inbox = byWatch[event.watch] {
            let reason: String? =
                if event.mask.contains(.deleteSelf) { "deleted" }
                else if event.mask.contains(.moveSelf) { "moved away" }
                else if event.mask.contains(.unmount) { "unmounted" }
                else if event.mask.contains(.ignored) { "no longer watchable" }
                else { nil }
            if let reason { return lose(inbox, reason: reason) }
            guard let directory = inbox.directory, !event.name.isEmpty else { return .nothing }
            return .entry(directory, event.name, created: event.mask.contains(.create),
                          directory: event.mask.contains(.isDirectory))
        }
        if let waiting = byParentWatch[event.watch] {
            if event.mask.contains(.ignored) {
                // The parent went (the timer looks for it), or its watch was shared with handlers.d and renewed
                // there: watched again where it still is.
                byParentWatch[event.watch] = nil
                for inbox in waiting {
                    inbox.parentWatch = nil
                    watchParent(inbox)
                }
                return .nothing
            }
            var outcome = Outcome.nothing
            for inbox in waiting where event.name == inbox.name {
                if inbox.directory != nil {
                    // The event may be older than the directory watched now (`rm -rf Inbox; mkdir Inbox`, both seen
                    // by the time the first event is read).
                    if isAtItsPath(inbox) { continue }
                    if event.mask.contains(.delete) { outcome = lose(inbox, reason: "deleted") }
                    else if event.mask.contains(.movedFrom) { outcome = lose(inbox, reason: "moved away") }
                    else { outcome = lose(inbox, reason: "replaced") }
                } else if !event.mask.contains(.delete) && !event.mask.contains(.movedFrom), retry(inbox) {
                    outcome = .changed(rescan: true)
                }
            }
            return outcome
        }
        return .notOurs
    }

    /// Checks that each watched Inbox is still the directory at its path (after the mount table changed, or an
    /// inotify overflow that may have dropped the event that said otherwise); then tries the missing ones.
    func verify() -> Outcome {
        var outcome = Outcome.nothing
        for inbox in all where inbox.directory != nil && !isAtItsPath(inbox) {
            let held = try? inbox.directory?.descriptor.status()
            let there = try? Directory.status(atPath: inbox.path)
            let reason = there == nil ? "deleted" : held?.st_dev != there?.st_dev ? "covered or uncovered by a mount"
                : "replaced"
            outcome = lose(inbox, reason: reason)
        }
        if retryMissing() { outcome = .changed(rescan: true) }
        return outcome
    }

    /// Whether the directory held for the Inbox is the one at its path (same device and inode).
    private func isAtItsPath(_ inbox: Inbox) -> Bool {
        guard let held = try? inbox.directory?.descriptor.status(),
              let there = try? Directory.status(atPath: inbox.path) else { return false }
        return held.st_dev == there.st_dev && held.st_ino == there.st_ino
    }

    /// Tries each missing Inbox again (the slow timer); true when one came back.
    func retryMissing() -> Bool {
        var returned = false
        for inbox in all where inbox.directory == nil {
            if retry(inbox) {
                returned = true
            } else if inbox.parentWatch == nil {
                watchParent(inbox)
            }
        }
        return returned
    }

    /// Makes a missing drop Inbox (and its missing parents). As root it gets the drop mode units/inboxd-tmpfiles.conf
    /// gives it: 1733 (anyone may drop, nobody but root lists), group `inboxd` when that group exists; as another
    /// user, 0755 like the agent's other directories. Returns the mode and owner it got, in words.
    static func create(_ path: String, asRoot: Bool) throws(SystemError) -> String {
        let directory = try Directory.create(path: path, mode: 0o755)
        guard asRoot else { return "mode 0755" }
        // mkdir(2) takes the umask off; fchmod(2) does not.
        do { try directory.descriptor.chmod(0o1733) } catch { throw SystemError("fchmod", path: path, errno: error) }
        guard let group = try? Identity.lookupGroup("inboxd") else { return "mode 1733, the agent's group" }
        do { try directory.descriptor.chown(uid: .max, gid: group) } catch {
            throw SystemError("fchown", path: path, errno: error)
        }
        return "mode 1733, group inboxd"
    }

    // MARK: Watching

    private func retry(_ inbox: Inbox) -> Bool {
        do {
            guard try watch(inbox) else { return false }
        } catch {
            if !inbox.reportedFailure {
                inbox.reportedFailure = true
                logger.log(.warning, "Cannot watch Inbox \(inbox.path) again: \(error)", fields: ["INBOX_INBOX": inbox.path])
            }
            return false
        }
        inbox.reportedFailure = false
        logger.log(.notice, "Inbox \(inbox.path) is back; watching it again", fields: ["INBOX_INBOX": inbox.path])
        return true
    }

    /// Watches the Inbox at its path (the watch first, so that nothing arriving after the open is missed); false
    /// when there is no directory there.
    private func watch(_ inbox: Inbox) throws(SystemError) -> Bool {
        let watch: CInt
        do { watch = try inotify.addWatch(inbox.path, mask: Self.mask) } catch {
            if error.errno == .noSuchFile || error.errno == .notDirectory { return false }
            throw error
        }
        guard let directory = try? Directory(path: inbox.path) else {
            removeKernelWatch(watch)
            return false
        }
        inbox.directory = directory
        inbox.watch = watch
        byWatch[watch] = inbox
        watchParent(inbox)
        return true
    }

    private func lose(_ inbox: Inbox, reason: String) -> Outcome {
        if let watch = inbox.watch {
            byWatch[watch] = nil
            // After IN_MOVE_SELF the watch lives on, on the directory in its new place; after a delete, until the
            // last descriptor closes. (One the kernel ended already makes inotify_rm_watch fail, harmlessly.)
            removeKernelWatch(watch)
        }
        inbox.watch = nil
        inbox.directory = nil
        let fields: JournalFields = [("INBOX_INBOX", inbox.path), ("INBOX_REASON", reason)]
        // `rm -rf Inbox; mkdir Inbox` may have made the new one before this event was read.
        if (try? watch(inbox)) == true {
            logger.log(.warning, "Inbox \(inbox.path) was \(reason); watching the directory now there", fields: fields)
            return .changed(rescan: true)
        }
        logger.log(.warning, "Inbox \(inbox.path) was \(reason); nothing is taken from it until it is back",
                   fields: fields)
        watchParent(inbox)
        return .changed(rescan: false)
    }

    /// Watches the parent for the Inbox's name going or coming (IN_MASK_ADD: the parent may be watched already, for
    /// another Inbox or handlers.d, and its mask is kept).
    private func watchParent(_ inbox: Inbox) {
        guard inbox.parentWatch == nil,
              let watch = try? inotify.addWatch(inbox.parentPath, mask: [.create, .movedTo, .delete, .movedFrom, .maskAdd])
        else { return }
        inbox.parentWatch = watch
        byParentWatch[watch, default: []].append(inbox)
        // The name may have come back between the loss and this watch.
        if inbox.directory == nil, Self.exists(inbox.path) == true { _ = retry(inbox) }
    }

    private func removeKernelWatch(_ watch: CInt) {
        guard byWatch[watch] == nil, byParentWatch[watch] == nil, !isShared(watch) else { return }
        inotify.removeWatch(watch)
    }

    /// Whether something is at `path` (followed, as the watch and the open would): nil when that cannot be told.
    private static func exists(_ path: String) -> Bool? {
        do { return try Directory.exists(path) } catch { return nil }
    }
}
