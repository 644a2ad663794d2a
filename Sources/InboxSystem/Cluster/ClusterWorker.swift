import Glibc
import InboxCore

/// The work side of a cluster (docs/design.md, Cluster: the agent): for each handler registered here, the cluster
/// child (`ClusterLink`, role work) pulls from the durable consumer every host shares, as much as this host's limits
/// allow and no more, so a slow host never hoards work. Each delivery's content arrives as a file the child wrote and
/// checked against its digest; it is put in intake/ and taken like a dropped file (typed again, its content sniffed,
/// the mismatch rule applied), delivered only to the handler its message came for, through the one lifecycle and
/// sandbox, and its message answered when the delivery ends here: handled → ack, a retry → nak after its delay (the
/// server gives it out again, to any host), given up → term, kept in this host's failed/.
final class ClusterWorker {
    private let loop: EventLoop
    private let logger: Logger
    private let settings: ClusterSettings
    private let intake: Directory?
    private let makeLink: () throws(SystemError) -> ClusterLink
    private var link: ClusterLink?
    /// Which link this is: a ticket of an earlier link (its child died) cannot be answered through this one.
    private var linkNumber = 0
    private var restartTimer: EventSource?
    private var catalog: HandlerCatalog
    private let maxConcurrent: Int
    /// Per handler: messages asked of the child and not yet received, and deliveries received and not yet ended.
    private var requested: [String: Int] = [:]
    private var holding: [String: Int] = [:]
    private var served: [String] = []
    /// Per stream sequence, the messages of a delivery still here: the one taken, then any the server gave out again
    /// while it was (its AckWait ran out while the in-progress acks could not reach the server: the child stalled, the
    /// server was away). Those are not delivered a second time: all are answered when the delivery ends.
    private var here: [UInt64: [ClusterTicket]] = [:]
    private var cluster: String { settings.names.name }
    /// Takes a fetched file as an arrival (the router).
    var take: (Arrival) -> Void = { _ in }
    /// Starts what was queued.
    var launchReady: () -> Void = {}
    /// The status changed.
    var changed: () -> Void = {}
    /// The stream's reported deliveries for the journal's first word on the child's state.
    private var connected: Bool?

    init(loop: EventLoop, logger: Logger, settings: ClusterSettings, state: StateDirectories, catalog: HandlerCatalog,
         maxConcurrent: Int, makeLink: @escaping () throws(SystemError) -> ClusterLink) {
        self.loop = loop
        self.logger = logger
        self.settings = settings
        self.intake = state.intake
        self.catalog = catalog
        self.maxConcurrent = maxConcurrent
        self.makeLink = makeLink
    }

    var pid: pid_t? { link?.pid }
    var state: ClusterState? { link?.state }
    /// Deliveries of the cluster this host holds (queued, running or waiting to be answered).
    var holdingCount: Int { holding.values.reduce(0, +) }

    func start() {
        restartTimer = nil
        linkNumber += 1
        requested.removeAll()
        do {
            let link = try makeLink()
            link.received = { [unowned self] work in self.received(work) }
            link.poisoned = { [unowned self] handler, sequence, reason in self.poisoned(handler, sequence, reason) }
            link.stateChanged = { [unowned self] state in self.stateChanged(state) }
            link.lost = { [unowned self] why in self.lost(why) }
            self.link = link
        } catch {
            return lost("cannot start it: \(error)")
        }
        serve()
    }

    func stop() {
        restartTimer = nil
        link?.stop()
        link = nil
    }

    /// Draining: nothing more is fetched; what runs is still answered.
    func stopFetching() {
        served = []
        link?.serve([])
    }

    /// A reload: the handlers served are the new catalog's.
    func use(_ catalog: HandlerCatalog) {
        self.catalog = catalog
        serve()
    }

    /// The handlers registered here that a cluster can name, and the consumers served for them.
    private func serve() {
        guard let link else { return }
        served = catalog.registrations.map(\.identifier).filter { settings.names.problem(forHandler: $0) == nil }.sorted()
        link.serve(served.map { ServedHandler(handler: $0, ackWait: settings.ackWait) })
        for handler in Array(requested.keys) where !served.contains(handler) { requested[handler] = nil }
        for handler in served { topUp(handler) }
    }

    /// How many of a handler's deliveries this host takes at once: what its limits let run, and as many again
    /// waiting, so a burst keeps every slot busy without one host holding what another could run.
    private func capacity(of handler: String) -> Int {
        guard let registration = catalog.registration(handler) else { return 0 }
        let running = min(registration.deliveryCapacity(processes: maxConcurrent), maxConcurrent * 4)
        return 2 * max(running, 1)
    }

    private func topUp(_ handler: String) {
        guard let link, served.contains(handler) else { return }
        let want = capacity(of: handler) - requested[handler, default: 0] - holding[handler, default: 0]
        guard want > 0 else { return }
        requested[handler, default: 0] += want
        link.grant(handler, count: want)
    }

    // MARK: What the child reports

    private func received(_ work: ClusterWork) {
        let handler = work.handler
        requested[handler] = max(0, requested[handler, default: 0] - 1)
        holding[handler, default: 0] += 1
        let ticket = ClusterTicket(reference: work.ref, handler: handler, sequence: work.sequence,
                                   delivered: work.delivered, link: linkNumber)
        // Closed once it has a name: a descriptor open for writing would count as a writer when its handler starts.
        var content: FileDescriptor? = work.content
        defer { content?.close() }
        let message = work.delivery
        if here[work.sequence] != nil {
            here[work.sequence]?.append(ticket)
            logger.log(.info, "Received \(message.name) for \(handler) again through cluster \(cluster) (delivered "
                       + "\(work.delivered) times) while its delivery here goes on: not delivered twice, answered when "
                       + "it ends", event: .received, fields: [
                "INBOX_DELIVERY_ID": message.id, "INBOX_HANDLER": handler, "INBOX_SOURCE_HOST": message.sourceHost,
                "INBOX_CLUSTER": cluster, "INBOX_CLUSTER_SEQUENCE": String(work.sequence), "INBOX_REDELIVERED": "1"])
            return changed()
        }
        here[work.sequence] = [ticket]
        guard let intake else { return refuse(ticket, "this host has no intake/ directory") }
        // Under a name of its own in intake/, marked as the cluster's: a restart gives it back, never delivers it.
        let staged = "cluster-\(work.sequence)-\(message.id)"
        let attributes = ExtendedAttributes(work.content)
        attributes.write(AgentAttribute.cluster, "\(handler) \(work.sequence)")
        attributes.write(AgentAttribute.delivery, "\(message.id) \(message.sourceUID) \(message.name)")
        var metadata = message.sender
        metadata.handler = handler
        let sidecar = metadata.sourceApp != nil || metadata.annotation != nil
        if sidecar, let error = intake.createSidecar(Sidecar.document(message.sender), for: staged) {
            return refuse(ticket, "cannot write its metadata in \(intake.path): \(error)")
        }
        if let error = intake.link(work.content, as: staged) {
            if sidecar { intake.removeSidecar(of: Array(staged.utf8)) }
            return refuse(ticket, "cannot put it in \(intake.path): \(error)")
        }
        work.content.close()
        content = nil
        let file: OpenedFile
        switch intake.openRegular(Array(staged.utf8)) {
        case .opened(let opened): file = opened
        case .gone: return refuse(ticket, "it left \(intake.path) before it was taken")
        case .refused(let kind): return refuse(ticket, "\(intake.child(staged)) is a \(kind.rawValue)")
        case .failed(let error): return refuse(ticket, "cannot open it in \(intake.path): \(error)")
        }
        defer { file.descriptor.close() }
        var arrival = Arrival(directory: intake, name: Array(staged.utf8), file: file, origin: .held, id: message.id,
                              sourceUID: message.sourceUID, attempts: ticket.earlierAttempts, metadata: metadata,
                              hasSidecar: sidecar)
        arrival.recordedName = message.name
        arrival.cluster = ticket
        arrival.sourceHost = message.sourceHost
        logger.log(.info, "Received \(message.name) for \(handler) from \(message.sourceHost) through cluster "
                   + "\(cluster)" + (work.delivered > 1 ? " (delivered \(work.delivered) times)" : ""),
                   event: .received, fields: [
            "INBOX_FILE": intake.child(staged), "INBOX_DELIVERY_ID": message.id, "INBOX_HANDLER": handler,
            "INBOX_SOURCE_HOST": message.sourceHost, "INBOX_SOURCE_UID": String(message.sourceUID),
            "INBOX_SOURCE_APP": message.sourceApp, "INBOX_CLUSTER": cluster,
            "INBOX_CLUSTER_SEQUENCE": String(work.sequence), "INBOX_REDELIVERED": work.delivered > 1 ? "1" : nil,
            "INBOX_SIZE": String(message.size)])
        take(arrival)
        launchReady()
        changed()
    }

    /// A fetched file that could not even be taken: its message is terminated.
    private func refuse(_ ticket: ClusterTicket, _ reason: String) {
        logger.log(.error, "Cannot take delivery \(ticket.sequence) of cluster \(cluster) for \(ticket.handler): "
                   + reason, event: .failed, fields: [
            "INBOX_HANDLER": ticket.handler, "INBOX_CLUSTER": cluster,
            "INBOX_CLUSTER_SEQUENCE": String(ticket.sequence), "INBOX_REASON": reason])
        answer(ticket, .givenUp(reason: reason))
    }

    /// The router kept a fetched file in failed/ (its type is not its handler's): its message is terminated.
    func refused(_ ticket: ClusterTicket, _ reason: String) { answer(ticket, .givenUp(reason: reason)) }

    /// A cluster delivery ended here (`Dispatcher.clusterEnded`).
    func ended(_ delivery: Delivery, _ verdict: ClusterVerdict) {
        guard let ticket = delivery.cluster else { return }
        answer(ticket, verdict)
    }

    private func answer(_ ticket: ClusterTicket, _ verdict: ClusterVerdict) {
        for ticket in here.removeValue(forKey: ticket.sequence) ?? [ticket] {
            holding[ticket.handler] = max(0, holding[ticket.handler, default: 0] - 1)
            guard ticket.link == linkNumber, let link else { continue }
            switch verdict {
            case .handled: link.answer(ticket.reference, .ack)
            case .again(let delay): link.answer(ticket.reference, .nak(delay: delay))
            case .givenUp(let reason): link.answer(ticket.reference, .term(reason: reason))
            }
        }
        topUp(ticket.handler)
        changed()
    }

    private func poisoned(_ handler: String, _ sequence: UInt64, _ reason: String) {
        requested[handler] = max(0, requested[handler, default: 0] - 1)
        logger.log(.error, "Refused delivery \(sequence) of cluster \(cluster) for \(handler): \(reason); "
                   + "terminated", event: .failed, fields: [
            "INBOX_HANDLER": handler, "INBOX_CLUSTER": cluster, "INBOX_CLUSTER_SEQUENCE": String(sequence),
            "INBOX_REASON": reason])
        topUp(handler)
    }

    private func stateChanged(_ state: ClusterState) {
        if state.connected != connected {
            if state.connected {
                logger.log(.info, "Working for cluster \(cluster) through \(state.server ?? "?"): "
                           + "\(served.count) handler(s)", event: .cluster, fields: [
                    "INBOX_CLUSTER": cluster, "INBOX_CLUSTER_SERVER": state.server,
                    "INBOX_HANDLERS": served.joined(separator: " ")])
            } else if connected != nil || state.error != nil {
                logger.log(.warning, "Cannot reach cluster \(cluster)" + (state.error.map { ": \($0)" } ?? "")
                           + "; deliveries already here go on", event: .cluster, fields: [
                    "INBOX_CLUSTER": cluster, "INBOX_REASON": state.error])
            }
            connected = state.connected
        }
        changed()
    }

    private func lost(_ why: String) {
        link = nil
        connected = nil
        requested.removeAll()
        logger.log(.error, "The cluster child ended (\(why)); starting another in 5s; deliveries it had given this "
                   + "host go on, and their messages are given out again after AckWaitSec=", event: .cluster,
                   fields: ["INBOX_CLUSTER": cluster])
        restartTimer = try? loop.addTimer(after: .seconds(5)) { [unowned self] in self.start() }
        changed()
    }
}

/// The processes of a cluster's children, for the reaper: the agent's own, never leftovers of a handler.
final class ClusterChildren {
    var publisher: ClusterPublisher?
    var worker: ClusterWorker?
    var pids: [pid_t] { [publisher?.pid, worker?.pid].compactMap { $0 } }
}
