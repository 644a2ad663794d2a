import InboxCore

/// What the agent holds already, taken again: at start-up what an earlier run left (files in intake/, files in the
/// container Inboxes, sidecars whose file is gone), after a reload what waits in unhandled/, and a queued delivery
/// whose handler went. Each file is opened and checked as at intake and goes through the router's one typing path;
/// the directories are the queue, so nothing else is read.
final class Recovery {
    private let state: StateDirectories
    private let reader: ArrivalReader
    private let router: Router
    /// Where what intake/ or unhandled/ holds that is no longer a document goes.
    private let quarantine: Quarantine
    /// Where giving back a cluster's file is said.
    var logger: Logger?

    init(state: StateDirectories, reader: ArrivalReader, router: Router, quarantine: Quarantine) {
        self.quarantine = quarantine
        self.state = state
        self.reader = reader
        self.router = router
    }

    /// Files left in container Inboxes are queued again (`Router.requeue`), oldest name first per Inbox; those left
    /// in intake/ go on from there; sidecars without a file are removed. Every directory is listed before any file
    /// is taken: a file taken moves into a container (from intake/, or from the container of a handler no longer
    /// registered), where a later listing would find it and queue it a second time.
    func recoverContainers() {
        let containers = state.containerInboxes().compactMap { handler, inbox -> (String, Directory, [[UInt8]])? in
            guard let files = try? inbox.entries() else { return nil }
            inbox.removeOrphanSidecars(among: files)
            return (handler, inbox, files.sorted(by: { $0.lexicographicallyPrecedes($1) }))
        }
        var staged: (Directory, [[UInt8]])?
        if let staging = state.intake, let names = try? staging.entries() {
            staging.removeOrphanSidecars(among: names)
            staged = (staging, names)
        }
        for (handler, inbox, files) in containers {
            for name in files where !FileNames.isHidden(name) {
                // A package is checked again: the agent did not see it between its runs.
                guard case .arrival(let arrival) = reader.take(name, in: inbox, origin: .held) else { continue }
                defer { arrival.file.descriptor.close() }
                if giveBack(arrival) { continue }
                // A handler no longer registered cannot be the decision: its files are routed anew, and its
                // container is left as it is.
                if router.catalog.registration(handler) != nil,
                   let container = try? state.container(for: handler, identity: router.catalog.identity(for: handler)),
                   let text = String(validating: name, as: UTF8.self) {
                    router.requeue(arrival, named: text, in: container)
                } else {
                    router.route(arrival)
                }
            }
        }
        // What was in intake/ when an earlier run stopped is the agent's already; it goes on from there.
        if let (staging, names) = staged {
            for name in names where !FileNames.isHidden(name) { take(name, from: staging) }
        }
    }

    /// Routes what waits in unhandled/ again (at start-up, and after the registrations changed).
    func redispatchUnhandled() {
        guard let unhandled = state.unhandled, let names = try? unhandled.entries() else { return }
        unhandled.removeOrphanSidecars(among: names)
        for name in names where !FileNames.isHidden(name) { take(name, from: unhandled) }
    }

    /// Takes again what waits in pending/ for a person's choice (at start-up and after a reload): a choice made
    /// while the agent was down is delivered, a deadline that passed goes to the best-ranked, the rest waits on.
    func redispatchPending() {
        guard let pending = state.pending, let names = try? pending.entries() else { return }
        pending.removeOrphanSidecars(among: names)
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) where !FileNames.isHidden(name) {
            take(name, from: pending)
        }
    }

    /// One file of pending/ again, by name: a choice was recorded on it, or its time to wait is up.
    func takePending(_ name: String) {
        guard let pending = state.pending else { return }
        take(Array(name.utf8), from: pending)
    }

    /// A queued delivery whose handler is gone: the file is routed again from its container.
    func reroute(_ delivery: Delivery) {
        guard let inbox = state.openedContainer(for: delivery.handler)?.inbox else { return }
        take(Array(delivery.name.utf8), from: inbox)
    }

    /// A file a worker fetched from a cluster, left by an earlier run (`AgentAttribute.cluster`): removed, not
    /// delivered, since its message was never answered and the server gives it out again (marked redelivered).
    private func giveBack(_ arrival: Arrival) -> Bool {
        guard let mark = ExtendedAttributes(arrival.file.descriptor).readString(AgentAttribute.cluster, limit: 300)
        else { return false }
        let error = arrival.directory.remove(arrival.name)
        if arrival.hasSidecar { arrival.directory.removeSidecar(of: arrival.name) }
        logger?.log(.info, "Removed \(arrival.shown), fetched from the cluster by an earlier run (\(mark)); the server "
                    + "gives it out again" + (error.map { " (cannot remove it: \($0))" } ?? ""), event: .cluster,
                    fields: ["INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id])
        return true
    }

    /// Opens a held file (or package, checked again) and routes it again. A directory that is no package (one a
    /// crash left in intake/ before its delivery was recorded on it, one in unhandled/ whose type is no longer a
    /// package type) is moved aside, with why.
    private func take(_ name: [UInt8], from directory: Directory) {
        switch reader.take(name, in: directory, origin: .held) {
        case .arrival(let arrival):
            defer { arrival.file.descriptor.close() }
            if giveBack(arrival) { return }
            router.route(arrival)
        case .notADocument(.directory, let why):
            quarantine.moveAside(name, from: directory, kind: .directory, why: why)
        case .notADocument, .gone, .failed:
            break
        }
    }
}
