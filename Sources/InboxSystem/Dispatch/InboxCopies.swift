import InboxCore

/// The custodian of the deliveries' Inbox copies in their containers: opens a copy for an attempt (the attempt
/// recorded on it, checked to be the file intake placed, leased), tells at the attempt's end how it changed and
/// whether another process opened it for writing, and does the file work of each outcome the lifecycle decides
/// (remove it, record a failed attempt, move it to failed/, mark it stopped), with its journal entry. It holds no
/// state of its own: each attempt's open copy is a `Held` that the dispatcher keeps with the running delivery.
///
/// A package (`Delivery.isPackage`, a directory delivered whole) is held the same way through its directory's
/// descriptor. A directory takes no lease: its manifest (`PackageTree.check`, every entry's identity) stands in for
/// one, taken when the attempt starts and compared when it ends.
final class InboxCopies {
    /// One attempt's Inbox copy, open for reading until the attempt ends, through which its end is checked; it holds
    /// a read lease when `leased`, so that another process's open for writing waits for the handler to end and is
    /// seen.
    final class Held {
        /// The copy as the handler was given it; compared when the attempt ends.
        enum Given {
            case file(FileIdentity)
            /// A package: every entry, and the bounds its check after the attempt walks within.
            case package(PackageManifest, limits: PackageLimits)
        }

        /// The file, or the package's directory (O_RDONLY|O_DIRECTORY).
        let descriptor: FileDescriptor
        let given: Given
        private(set) var leased: Bool
        private var closed = false

        fileprivate init(descriptor: FileDescriptor, given: Given, leased: Bool) {
            self.descriptor = descriptor
            self.given = given
            self.leased = leased
        }

        /// Whatever path an attempt took, its descriptor does not outlive it.
        deinit { close() }

        /// The attempt started. Without Landlock the handler itself may be able to open its copy for writing (as
        /// root, or as the owner after a chmod): its open would wait on the lease and then pass for another
        /// process's. So the lease is given up, and a change is the after-exit check's to report, as the handler's.
        func handlerStarted(sandboxed: Bool) {
            if leased && !sandboxed {
                descriptor.releaseLease()
                leased = false
            }
        }

        /// The attempt ended: how the copy changed while its handler ran, if it did (seen through the descriptor
        /// opened at the start, so a copy the handler removed is checked too: its removal alone changes only the
        /// link count and change time), and who else opened it for writing, if anyone did. Closes it.
        func release(of delivery: Delivery) -> (violation: String?, interference: String?) {
            var violation: String?
            switch given {
            case .file(let identity):
                if let st = try? descriptor.status() {
                    let after = FileIdentity(st)
                    let intact = st.st_nlink == 0 ? identity.sameContent(as: after) : after == identity
                    violation = intact ? nil : identity.differences(from: after)
                }
            case .package(let manifest, let limits):
                violation = InboxCopies.change(of: descriptor, since: manifest, limits: limits)
            }
            // A writer that broke the lease waits (up to the kernel's lease-break-time) until this close.
            let interference = leased && !descriptor.readLeaseIntact
                ? InboxCopies.otherWriter(of: delivery) + " opened it for writing" : nil
            close()
            return (violation, interference)
        }

        /// The attempt did not start: the copy is let go unchecked.
        func close() {
            guard !closed else { return }
            closed = true
            descriptor.close()
        }
    }

    /// What opening a copy for an attempt found.
    enum Opening {
        case opened(Held)
        /// It is no longer there to deliver: vanished (logged), or not a regular file (moved aside to failed/).
        case gone
        /// Another process than its handler holds it open for writing, or changed it since intake placed it.
        case tampered(String)
    }

    private let logger: Logger
    private let state: StateDirectories
    private let quarantine: Quarantine
    /// MaxPackageDepth=, MaxPackageEntries=, MaxPackageSize=: what a package's checks walk within.
    private let packageLimits: PackageLimits

    init(logger: Logger, state: StateDirectories, quarantine: Quarantine, packageLimits: PackageLimits = PackageLimits()) {
        self.logger = logger
        self.state = state
        self.quarantine = quarantine
        self.packageLimits = packageLimits
    }

    /// Opens the Inbox copy for `attempt`. The attempt is recorded on the file before its handler can see it, so that
    /// one a crash cuts short is known at the next start (ArrivalReader). That write sets the change time, which the
    /// after-exit check compares, so the identity is taken after it. Then a read lease is taken on the same descriptor
    /// and held until the handler ends: while it is held, any open of the file for writing (or truncate) waits for the
    /// agent to let go, up to the kernel's lease-break-time, and breaks it, which the end of the attempt sees
    /// (fcntl(2), Leases). The handler itself cannot break it: its Landlock rules refuse it the write before the lease
    /// is consulted (a handler that runs without Landlock gets no lease: `Held.handlerStarted`). So a file that another
    /// process holds open for writing now, or that changed since intake placed it (`placed`), is not delivered, and the
    /// change is that process's (its sender's), never the handler's.
    func open(_ delivery: Delivery, attempt: Int, placed: FileIdentity?, in container: Container) -> Opening {
        if delivery.isPackage { return openPackage(delivery, attempt: attempt, placed: placed, in: container) }
        let name = Array(delivery.name.utf8)
        let file: FileDescriptor
        do {
            file = try container.inbox.openFile(name, .readOnly, options: [.noFollow, .nonBlocking, .noControllingTerminal])
        } catch .noSuchFile {
            return vanished(delivery)
        } catch {
            // ELOOP: a symlink, which only root could have put in the agent's own directory; anything else that
            // cannot be opened is moved aside the same way, unopened.
            let kind = (try? container.inbox.status(of: name))?.map { EntryKind(mode: $0.st_mode) } ?? .symlink
            quarantine.moveAside(name, from: container.inbox, kind: kind)
            return .gone
        }
        ExtendedAttributes(file).write(AgentAttribute.started, String(attempt))
        let status = try? file.status()
        guard let st = status, EntryKind(mode: st.st_mode) == .regular else {
            file.close()
            quarantine.moveAside(name, from: container.inbox, kind: status.map { EntryKind(mode: $0.st_mode) } ?? .symlink)
            return .gone
        }
        let identity = FileIdentity(st)
        var leased = false
        switch file.takeReadLease() {
        case .held:
            leased = true
        case .busy:
            file.close()
            return .tampered(Self.otherWriter(of: delivery) + " held it open for writing before its handler started")
        case .unavailable:
            break  // not the owner and no CAP_LEASE: as stable as its sender leaves it (README, Security model)
        }
        if let placed, !placed.sameContent(as: identity) {
            file.close()
            return .tampered(Self.otherWriter(of: delivery) + " changed it after it was checked, before its handler "
                             + "started: " + placed.differences(from: identity))
        }
        return .opened(Held(descriptor: file, given: .file(identity), leased: leased))
    }

    /// Opens a package for `attempt` as `open` opens a file: its directory opened by descriptor, only if it still is
    /// one (`Directory.openPackage`: a file where a package was expected is moved aside, as a directory where a file
    /// was), the attempt recorded on it (fsetxattr), then its manifest taken, after the agent's last change. A package
    /// replaced since intake placed it, or whose tree no longer passes its check (a link, a FIFO, an entry still
    /// changing), is another process's doing: tampered.
    private func openPackage(_ delivery: Delivery, attempt: Int, placed: FileIdentity?, in container: Container)
        -> Opening {
        let name = Array(delivery.name.utf8)
        let directory: OpenedFile
        switch container.inbox.openPackage(name) {
        case .opened(let opened):
            directory = opened
        case .gone:
            return vanished(delivery)
        case .refused(let kind):
            quarantine.moveAside(name, from: container.inbox, kind: kind)
            return .gone
        case .failed:
            let kind = (try? container.inbox.status(of: name))?.map { EntryKind(mode: $0.st_mode) } ?? .symlink
            quarantine.moveAside(name, from: container.inbox, kind: kind)
            return .gone
        }
        let root = directory.descriptor
        if let placed, placed.device != UInt64(directory.status.st_dev) || placed.inode != UInt64(directory.status.st_ino) {
            root.close()
            return .tampered(Self.otherWriter(of: delivery) + " replaced it after it was checked, before its handler "
                             + "started: a different directory")
        }
        ExtendedAttributes(root).write(AgentAttribute.started, String(attempt))
        switch PackageTree.check(root, limits: packageLimits) {
        case .success(let manifest):
            return .opened(Held(descriptor: root, given: .package(manifest, limits: packageLimits), leased: false))
        case .failure(let refusal):
            root.close()
            return .tampered(Self.otherWriter(of: delivery) + " changed it after it was checked, before its handler "
                             + "started: it " + refusal.reason)
        }
    }

    /// How a package changed since `given` (nil: it did not, or only lost entries, which a handler may remove), seen
    /// through its directory's descriptor, so that a package the handler renamed is checked too. One removed whole is
    /// an unlinked directory, which rmdir(2) left empty: nothing added can remain in it. Anything the check refuses
    /// (a link, a FIFO, more entries than the bounds) is a change of its own.
    static func change(of root: FileDescriptor, since given: PackageManifest, limits: PackageLimits) -> String? {
        if let st = try? root.status(), st.st_nlink == 0 { return nil }
        switch PackageTree.check(root, limits: limits) {
        case .success(let now): return now.change(since: given, allowingRemoval: true)?.description
        case .failure(let refusal): return "the package " + refusal.reason
        }
    }

    /// The copy is gone before its handler could start: logged once, released.
    private func vanished(_ delivery: Delivery) -> Opening {
        logger.log(.warning, "\(delivery.path) vanished before its handler started", event: .removed,
                   fields: ["INBOX_FILE": delivery.path, "INBOX_HANDLER": delivery.handler,
                            "INBOX_DELIVERY_ID": delivery.id])
        return .gone
    }

    /// Does the file's part of what the lifecycle decided, with its journal entry; the scheduling part (timers, the
    /// queue, routing again, signals) is the dispatcher's.
    func settle(_ action: DeliveryLifecycle.Action, of delivery: Delivery, duration: Duration?) {
        let inbox = state.openedContainer(for: delivery.handler)?.inbox
        switch action {
        case .complete(let outcome):
            let name = Array(delivery.name.utf8)
            // A package goes depth first by descriptor, with whatever the handler left of it, never following a link
            // or crossing a mount.
            let removeError = inbox.flatMap { delivery.isPackage ? PackageTree.remove(name, in: $0) : $0.remove(name) }
            if delivery.hasSidecar { inbox?.removeSidecar(of: name) }
            logger.log(.info, "\(delivery.handler) handled \(delivery.name)", event: .finished,
                       fields: delivery.journalFields() + [("INBOX_EXIT_STATUS", outcome.exitStatusField),
                                                           ("INBOX_DURATION_USEC", duration?.microsecondsField)])
            if let removeError {
                logger.log(.warning, "Cannot remove \(delivery.path) after its handler finished: \(removeError)",
                           fields: ["INBOX_FILE": delivery.path])
            }
        case .retry(let delay, let outcome):
            let when = delay.map { "retrying in \($0.shortDescription)" } ?? "retrying at the next start"
            logger.log(.warning, "\(delivery.handler) \(outcome.phrase) on \(delivery.name); \(when)", event: .retry,
                       fields: delivery.journalFields() + [
                ("INBOX_EXIT_STATUS", outcome.exitStatusField), ("INBOX_DURATION_USEC", duration?.microsecondsField),
                ("INBOX_REASON", outcome.phrase)])
            // Failed attempts survive a restart; the attempt count is only written when one fails.
            if let inbox, case .opened(let file) = inbox.openDelivered(Array(delivery.name.utf8), of: delivery) {
                // A deferred attempt was not counted.
                let made = if case .deferred = outcome { delivery.attempt - 1 } else { delivery.attempt }
                ExtendedAttributes(file.descriptor).write(AgentAttribute.attempts, String(made))
                file.descriptor.close()
            }
        case .fail(let reason, let outcome):
            quarantine.fail(delivery, reason: reason, outcome: outcome, duration: duration, from: inbox)
        case .reportViolation(let change, let outcome):
            quarantine.violation(delivery, change: change, outcome: outcome, duration: duration ?? .zero, from: inbox)
        case .withdraw(let reason, let outcome):
            quarantine.withdraw(delivery, reason: reason, outcome: outcome, duration: duration, from: inbox)
        case .keepForNextStart:
            // Stopped by the agent's own shutdown: not counted as an attempt, but the handler is told at the next start.
            inbox?.setAttribute(AgentAttribute.started, "\(delivery.attempt) stopped", of: delivery.name)
        case .launch, .reroute, .signal, .enqueue, .requeueAlone, .cancelRetry, .none:
            break
        }
    }

    /// Removes a cluster delivery's copy from its container without a journal entry of its own: the server gives the
    /// message out again (to this host or another), so nothing of it stays here.
    func giveBack(_ delivery: Delivery) {
        guard let inbox = state.openedContainer(for: delivery.handler)?.inbox else { return }
        let name = Array(delivery.name.utf8)
        let error = delivery.isPackage ? PackageTree.remove(name, in: inbox) : inbox.remove(name)
        if delivery.hasSidecar { inbox.removeSidecar(of: name) }
        if let error {
            logger.log(.warning, "Cannot remove \(delivery.path), given back to the cluster: \(error)",
                       fields: ["INBOX_FILE": delivery.path])
        }
    }

    /// Who else can have written the copy: the agent's directories are closed to everyone but root, so its sender,
    /// through a descriptor or link it kept, or root.
    static func otherWriter(of delivery: Delivery) -> String {
        "another process than its handler (its sender" + (delivery.sourceUID.map { ", uid \($0)," } ?? "") + " or root)"
    }
}

extension Directory {
    /// Opens a delivery's copy in its Inbox as it must be: a package's directory (`openPackage`), else a regular file
    /// with one link (`openRegular`); anything else is refused, never followed.
    func openDelivered(_ name: [UInt8], of delivery: Delivery) -> SafeOpenResult {
        delivery.isPackage ? openPackage(name) : openRegular(name)
    }
}
