import InboxCore

/// The custodian of the deliveries' Inbox copies in their containers: opens a copy for an attempt (the attempt
/// recorded on it, checked to be the file intake placed, leased), tells at the attempt's end how it changed and
/// whether another process opened it for writing, and does the file work of each outcome the lifecycle decides
/// (remove it, record a failed attempt, move it to failed/, mark it stopped), with its journal entry. It holds no
/// state of its own: each attempt's open copy is a `Held` that the dispatcher keeps with the running delivery.
final class InboxCopies {
    /// One attempt's Inbox copy, open for reading until the attempt ends, through which its end is checked; it holds
    /// a read lease when `leased`, so that another process's open for writing waits for the handler to end and is
    /// seen.
    final class Held {
        let descriptor: FileDescriptor
        /// The copy as the handler was given it; compared when the attempt ends.
        let identity: FileIdentity
        private(set) var leased: Bool
        private var closed = false

        fileprivate init(descriptor: FileDescriptor, identity: FileIdentity, leased: Bool) {
            self.descriptor = descriptor
            self.identity = identity
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
            if let st = try? descriptor.status() {
                let after = FileIdentity(st)
                let intact = st.st_nlink == 0 ? identity.sameContent(as: after) : after == identity
                violation = intact ? nil : identity.differences(from: after)
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

    init(logger: Logger, state: StateDirectories, quarantine: Quarantine) {
        self.logger = logger
        self.state = state
        self.quarantine = quarantine
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
        let name = Array(delivery.name.utf8)
        let file: FileDescriptor
        do {
            file = try container.inbox.openFile(name, .readOnly, options: [.noFollow, .nonBlocking, .noControllingTerminal])
        } catch .noSuchFile {
            logger.log(.warning, "\(delivery.path) vanished before its handler started", event: .removed,
                       fields: ["INBOX_FILE": delivery.path, "INBOX_HANDLER": delivery.handler,
                                "INBOX_DELIVERY_ID": delivery.id])
            return .gone
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
        return .opened(Held(descriptor: file, identity: identity, leased: leased))
    }

    /// Does the file's part of what the lifecycle decided, with its journal entry; the scheduling part (timers, the
    /// queue, routing again, signals) is the dispatcher's.
    func settle(_ action: DeliveryLifecycle.Action, of delivery: Delivery, duration: Duration?) {
        let inbox = state.openedContainer(for: delivery.handler)?.inbox
        switch action {
        case .complete(let outcome):
            let name = Array(delivery.name.utf8)
            let removeError = inbox?.remove(name) ?? nil
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
            if let inbox, case .opened(let file) = inbox.openRegular(Array(delivery.name.utf8)) {
                ExtendedAttributes(file.descriptor).write(AgentAttribute.attempts, String(delivery.attempt))
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

    /// Who else can have written the copy: the agent's directories are closed to everyone but root, so its sender,
    /// through a descriptor or link it kept, or root.
    static func otherWriter(of delivery: Delivery) -> String {
        "another process than its handler (its sender" + (delivery.sourceUID.map { ", uid \($0)," } ?? "") + " or root)"
    }
}
