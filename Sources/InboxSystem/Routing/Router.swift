import InboxCore

/// Takes each arrival from its type to where it goes: the type from the inspector, the decision from `Routing`
/// (InboxCore), and then the move — into the chosen handler's container Inbox (queued with the dispatcher), into
/// unhandled/, or into failed/. It also puts back what an earlier run left in the state directories. Every move goes
/// by the inode that was checked, through the agent's intake/ (`Directory.relocate`); one that fails for a reason
/// that passes, or meets a sender still writing the file, is tried again later (`MoveRetries`).
final class Router {
    private let logger: Logger
    private let state: StateDirectories
    private let quarantine: Quarantine
    private let inspector: TypeInspector
    private let reader: ArrivalReader
    private let dispatcher: Dispatcher
    private let retries: MoveRetries
    /// The arrival being routed was given a new wait: its retries go on.
    private var rescheduled = false
    private let isRoot = CurrentProcess.isRoot
    private(set) var catalog: HandlerCatalog
    /// The Inbox bounds; nil when none is set (nothing is counted, no attribute written).
    var quotas: InboxQuotas?
    /// Mismatches where the claim was kept, each reported once per catalog (see `report(_:of:)`).
    private var reportedCarrierMismatches: Set<String> = []
    /// Types whose choice was a tie broken by identifier, reported once per catalog: the choice depends on the
    /// registrations alone, and so does the notice.
    private var reportedTies: Set<String> = []

    init(loop: EventLoop, logger: Logger, state: StateDirectories, inspector: TypeInspector, reader: ArrivalReader, dispatcher: Dispatcher,
         catalog: HandlerCatalog) {
        self.logger = logger
        self.state = state
        self.quarantine = Quarantine(state: state, logger: logger)
        self.inspector = inspector
        self.reader = reader
        self.dispatcher = dispatcher
        self.catalog = catalog
        retries = MoveRetries(loop: loop)
        retries.retake = { [unowned self] directory, name, origin in self.retake(name, from: directory, origin: origin) }
    }

    func use(_ catalog: HandlerCatalog) {
        self.catalog = catalog
        reportedCarrierMismatches.removeAll()
        reportedTies.removeAll()
    }

    /// Decides where an arrival goes and moves it there.
    func route(_ arrival: Arrival) {
        rescheduled = false
        defer { if !rescheduled { retries.forget(arrival.name, in: arrival.directory) } }
        if arrival.origin == .dropped, let reason = quotas?.refusal(for: arrival) {
            quarantine.reject(arrival, reason: reason)
            return
        }
        // The content typed must be the content delivered: with a read lease nobody can open the file for writing
        // unnoticed, and while somebody has it open so, no lease is had (fcntl(2), Leases).
        var leased = false
        if arrival.origin == .dropped {
            switch arrival.file.descriptor.takeReadLease() {
            case .held:
                leased = true
            case .busy:
                if wait(arrival, backoff: .writer) == nil {
                    quarantine.reject(arrival, reason: "its sender (uid \(arrival.sourceUID)) kept it open for writing, "
                                      + "so its content could still change")
                }
                return
            case .unavailable:
                break  // not the owner and no CAP_LEASE: as stable as its sender leaves it (README, Security model)
            }
        }
        guard let type = resolveType(of: arrival) else { return }
        if arrival.origin == .dropped && logger.isEnabled(.debug) {
            logger.log(.debug, "Arrived \(arrival.shown)", event: .arrived, fields: [
                "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_CONTENT_TYPE": type.identifier,
                "INBOX_TYPE_SOURCE": type.source.rawValue, "INBOX_SOURCE_APP": arrival.metadata.sourceApp,
                "INBOX_SOURCE_UID": String(arrival.sourceUID)])
        }
        // The name only when some document type claims by name (cleanName is made afresh at each use); by type
        // alone, as fast as ever, when neither the name nor the Inbox can matter.
        let binding = binding(of: arrival)
        let decision = binding == nil && !catalog.hasNamePatterns
            ? catalog.decision(for: type.identifier, request: arrival.request)
            : catalog.decision(for: Routing.Subject(type: type.identifier,
                                                    name: catalog.hasNamePatterns ? arrival.cleanName : nil,
                                                    binding: binding), request: arrival.request)
        switch decision {
        case .deliver(let handler, let chosenBy, let tied):
            if chosenBy == .senderOverride {
                logger.log(.notice, "Delivering \(arrival.shown) (\(type.identifier)) to \(handler), which does not claim "
                           + "that type, as its sender (uid \(arrival.sourceUID)) asked", fields: [
                    "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_HANDLER": handler,
                    "INBOX_CONTENT_TYPE": type.identifier])
            }
            if !tied.isEmpty && reportedTies.insert(type.identifier).inserted {
                logger.log(.notice, "Several handlers tie for \(type.identifier); chose \(handler) by identifier. "
                           + "Not repeated for this type until the next reload",
                           fields: ["INBOX_CONTENT_TYPE": type.identifier, "INBOX_HANDLER": handler,
                                    "INBOX_CANDIDATES": tied.joined(separator: " ")])
            }
            place(arrival, with: handler, chosenBy: chosenBy, type: type, leased: leased, binding: binding)
        case .park(let requested, let reason):
            park(arrival, type: type, requested: requested, reason: reason, binding: binding)
        case .reject(let reason):
            quarantine.reject(arrival, reason: reason, contentType: type.identifier, requested: arrival.metadata.handler)
        }
    }

    /// The binding of the drop Inbox the arrival came from: the directory it lies in when dropped, the one recorded on
    /// it (`AgentAttribute.inbox`) when the agent holds it. Nothing is looked up when no Inbox is bound.
    private func binding(of arrival: Arrival) -> Routing.Binding? {
        guard catalog.hasBindings else { return nil }
        switch arrival.origin {
        case .dropped:
            return catalog.binding(forInbox: arrival.directory.path)
        case .held:
            return ExtendedAttributes(arrival.file.descriptor).readString(AgentAttribute.inbox, limit: 4096)
                .flatMap { catalog.binding(forInbox: $0) }
        }
    }

    /// Records the drop Inbox on the agent's file, beside `Arrival.stamp` (which removes what was there before), where
    /// it matters: the Inbox is bound to a handler, or Inboxes are bounded (`InboxQuotas` counts by it).
    private func record(_ binding: Routing.Binding?, of arrival: Arrival, on file: FileDescriptor) {
        guard arrival.origin == .dropped, binding != nil || quotas != nil else { return }
        ExtendedAttributes(file).write(AgentAttribute.inbox, binding?.inbox ?? arrival.directory.path)
    }

    /// The arrival's type, with what the inspection found logged; nil (the file refused to failed/) when it crashed
    /// or stalled the content sniffer.
    private func resolveType(of arrival: Arrival) -> ResolvedType? {
        switch inspector.inspect(arrival.file.descriptor, name: arrival.cleanName, explicit: arrival.metadata.contentType,
                                 in: catalog.database) {
        case .failure(let failure):
            quarantine.reject(arrival, reason: "unsniffable: " + failure.description)
            return nil
        case .success(let inspection):
            report(inspection, of: arrival.shown, id: arrival.id, sourceApp: arrival.metadata.sourceApp,
                   sourceUID: arrival.sourceUID)
            return inspection.resolved
        }
    }

    /// Moves the file into the handler's container Inbox and queues its delivery.
    private func place(_ arrival: Arrival, with handler: String, chosenBy: Delivery.ChosenBy, type: ResolvedType,
                       leased: Bool, binding: Routing.Binding?) {
        let container: Container
        do throws(SystemError) {
            container = try state.container(for: handler, identity: catalog.identity(for: handler))
        } catch {
            cannotMove(arrival, error, into: "the container of \(handler)", fields: ["INBOX_HANDLER": handler])
            return
        }
        guard let staging = state.intake else { return }
        switch arrival.directory.relocate(arrival.name, file: arrival.file, to: container.inbox, preferred: arrival.cleanName,
                                          via: staging, rejectsTo: state.failed, sidecar: arrival.agentSidecar,
                                          prepare: { file in
                                              arrival.stamp(file)
                                              record(binding, of: arrival, on: file)
                                              handOver(file, to: handler)
                                          }) {
        case .moved(let newName, let copy):
            // A writer that came after the lease is the sender's (only it could name the file): not delivered.
            if leased && copy == nil && !arrival.file.descriptor.readLeaseIntact {
                quarantine.withdraw(newName, from: container.inbox, of: arrival, reason: "its sender (uid "
                                    + "\(arrival.sourceUID)) opened it for writing while it was being delivered")
                return
            }
            // What the handler is given, after the agent's last change to it (rename updates the change time).
            let identity = FileIdentity(copy ?? arrival.file.descriptor)
            copy?.close()
            dispatcher.enqueue(delivery(of: arrival, to: handler, in: container, as: newName, chosenBy: chosenBy, type: type),
                               placed: identity)
            quotas?.charge(arrival, id: arrival.id)
        case .swapped(let found, let keptAs):
            quarantine.swapped(arrival, found: found, keptAs: keptAs)
        case .failed(let error):
            cannotMove(arrival, error, into: container.inbox.path, fields: ["INBOX_HANDLER": handler])
        case .staged(let name, let error):
            cannotMoveOn(arrival, staged: name, error, into: container.inbox.path)
        }
    }

    /// The move failed and the file is untouched where it was: a reason that passes (a full disk...) is waited out
    /// with back-off, logged once per file and outage; anything else is logged and the file stays.
    private func cannotMove(_ arrival: Arrival, _ error: SystemError, into target: String,
                            fields extra: KeyValuePairs<String, String?> = [:]) {
        let fields: JournalFields = [("INBOX_FILE", arrival.shown), ("INBOX_DELIVERY_ID", arrival.id),
                                     ("INBOX_ERRNO", String(error.errno.rawValue))] + extra.map { ($0.key, $0.value) }
        if error.errno.isTransient {
            if wait(arrival, backoff: .transient) == 1 {
                logger.log(.warning, "Cannot move \(arrival.shown) into \(target): \(error); it stays where it is and is "
                           + "tried again", fields: fields)
            }
        } else {
            logger.log(.error, "Cannot move \(arrival.shown) into \(target): \(error); it stays where it is",
                       fields: fields)
        }
    }

    /// The file is the agent's, in intake/, but could not go on: tried again from there (or at the next start).
    private func cannotMoveOn(_ arrival: Arrival, staged name: String, _ error: SystemError, into target: String) {
        guard let staging = state.intake else { return }
        let fields: JournalFields = [("INBOX_FILE", staging.child(name)), ("INBOX_DELIVERY_ID", arrival.id),
                                     ("INBOX_ERRNO", String(error.errno.rawValue))]
        if error.errno.isTransient {
            if retries.schedule(Array(name.utf8), in: staging, origin: .held, backoff: .transient) == 1 {
                logger.log(.warning, "Cannot move \(arrival.shown) on into \(target): \(error); kept in "
                           + "\(staging.child(name)) and tried again", fields: fields)
            }
        } else {
            logger.log(.error, "Cannot move \(arrival.shown) on into \(target): \(error); kept in \(staging.child(name)) "
                       + "until the next start", fields: fields)
        }
    }

    /// Tries the arrival again after the next wait of `backoff`; its retry number, nil when there are no more.
    private func wait(_ arrival: Arrival, backoff: Backoff) -> Int? {
        let retry = retries.schedule(arrival.name, in: arrival.directory, origin: arrival.origin, backoff: backoff)
        rescheduled = retry != nil
        return retry
    }

    /// A retry is due: the name is opened and checked again, as on arrival.
    private func retake(_ name: [UInt8], from directory: Directory, origin: Arrival.Origin) {
        switch directory.openRegular(name) {
        case .opened(let file):
            defer { file.descriptor.close() }
            route(reader.arrival(of: file, named: name, in: directory, origin: origin))
            // No intake batch ends after a timer: what was queued is launched here.
            dispatcher.launchReady()
        case .refused(let kind):
            retries.forget(name, in: directory)
            quarantine.moveAside(name, from: directory, kind: kind)
        case .gone:
            retries.forget(name, in: directory)
        case .failed(let error):
            if !error.errno.isTransient || retries.schedule(name, in: directory, origin: origin, backoff: .transient) == nil {
                retries.forget(name, in: directory)
                logger.log(.warning, "Cannot take \(displayName(name)) again: \(error)",
                           fields: ["INBOX_FILE": directory.child(displayName(name))])
            }
        }
    }

    private func delivery(of arrival: Arrival, to handler: String, in container: Container, as name: String,
                          chosenBy: Delivery.ChosenBy, type: ResolvedType) -> Delivery {
        var delivery = Delivery(id: arrival.id, handler: handler, chosenBy: chosenBy, name: name, path: container.inbox.child(name),
                 documents: container.documents, contentType: type.identifier, typeSource: type.source, contentTypes: [],
                 sender: arrival.metadata, sourceUID: arrival.sourceUID, hasSidecar: arrival.hasSidecar, attempt: arrival.attempts)
        delivery.redelivered = arrival.redelivered
        return delivery
    }

    /// Makes the Inbox copy the agent's and readable by the handler's group only (docs/design.md, Security model:
    /// the handler never owns its Inbox copy, so it cannot change its mode).
    private func handOver(_ file: FileDescriptor, to handler: String) {
        if isRoot, let identity = catalog.identity(for: handler) {
            try? file.chown(uid: 0, gid: identity.gid)
            try? file.chmod(0o440)
        } else {
            // Read-only for its owner too: without Landlock, a write needs a chmod first, which the after-exit check
            // sees in the change time.
            try? file.chmod(0o400)
        }
    }

    /// No handler for the type, the one its sender chose (`requested`) is not registered, or the one its Inbox is
    /// bound to cannot have it (`reason`): kept intact in unhandled/ until the registrations change.
    private func park(_ arrival: Arrival, type: ResolvedType, requested: String?, reason: String?,
                      binding: Routing.Binding?) {
        guard let unhandled = state.unhandled, let staging = state.intake, arrival.directory !== unhandled else { return }
        switch arrival.directory.relocate(arrival.name, file: arrival.file, to: unhandled, preferred: arrival.cleanName,
                                          via: staging, rejectsTo: state.failed, sidecar: arrival.agentSidecar,
                                          prepare: { file in
                                              arrival.stamp(file)
                                              record(binding, of: arrival, on: file)
                                          }) {
        case .moved(let newName, let copy):
            state.kept(newName, in: .unhandled, file: copy ?? arrival.file.descriptor)
            copy?.close()
            let what = reason.map { "\(arrival.cleanName) (\(type.identifier)): \($0)" }
                ?? requested.map { "No handler \($0) (its sender's choice) for \(type.identifier)" }
                ?? "No handler for \(type.identifier)"
            logger.log(.info, "\(what); kept \(unhandled.child(newName))", event: .unhandled, fields: [
                "INBOX_FILE": unhandled.child(newName), "INBOX_DELIVERY_ID": arrival.id,
                "INBOX_CONTENT_TYPE": type.identifier, "INBOX_TYPE_SOURCE": type.source.rawValue,
                "INBOX_SOURCE_APP": arrival.metadata.sourceApp, "INBOX_SOURCE_UID": String(arrival.sourceUID),
                "INBOX_REQUESTED_HANDLER": requested, "INBOX_BOUND_HANDLER": binding?.handler,
                "INBOX_INBOX": binding?.inbox])
        case .swapped(let found, let keptAs):
            quarantine.swapped(arrival, found: found, keptAs: keptAs)
        case .failed(let error):
            cannotMove(arrival, error, into: unhandled.path)
        case .staged(let name, let error):
            cannotMoveOn(arrival, staged: name, error, into: unhandled.path)
        }
    }

    /// What the inspection found worth saying: a sniffer that could not read the file, the resolver's notes, and a
    /// claim the content contradicts. When the content won, every such file is a warning: someone named or labelled
    /// it as something it is not. When the claim was kept (the content is text or ZIP, which the claimed type may well
    /// be made of), the pair is reported once per catalog, since declaring the type's ConformsTo= is the fix and a
    /// burst must not flood the journal.
    private func report(_ inspection: TypeInspector.Inspection, of shown: String, id: String?, sourceApp: String?,
                        sourceUID: UInt32?) {
        if let failure = inspection.sniffFailure {
            logger.log(.warning, "Cannot sniff \(shown): \(failure); its name and attribute decide its type",
                       fields: ["INBOX_FILE": shown, "INBOX_DELIVERY_ID": id])
        }
        let resolved = inspection.resolved
        for note in resolved.diagnostics {
            logger.log(.warning, "\(shown): \(note)", fields: ["INBOX_FILE": shown, "INBOX_DELIVERY_ID": id])
        }
        guard let mismatch = resolved.mismatch else { return }
        let fields: JournalFields = [
            ("INBOX_FILE", shown), ("INBOX_DELIVERY_ID", id), ("INBOX_CONTENT_TYPE", resolved.identifier),
            ("INBOX_TYPE_SOURCE", resolved.source.rawValue), ("INBOX_CLAIMED_TYPE", mismatch.claimed),
            ("INBOX_CLAIM_SOURCE", mismatch.claimSource.rawValue), ("INBOX_SNIFFED_TYPE", mismatch.content),
            ("INBOX_SNIFFED_MIME_TYPE", inspection.sniffedMIMEType), ("INBOX_SOURCE_APP", sourceApp),
            ("INBOX_SOURCE_UID", sourceUID.map { String($0) })]
        let statement = "\(shown): \(TypeInspector.statement(of: mismatch))"
        if mismatch.contentWon {
            logger.log(.warning, "\(statement); \(TypeInspector.verdict(of: mismatch))", event: .mismatch, fields: fields)
        } else if reportedCarrierMismatches.insert(mismatch.claimed + " " + mismatch.content).inserted {
            logger.log(.notice, "\(statement), which cannot disprove it; kept \(mismatch.claimed). A type made of text or "
                       + "ZIP should say so in ConformsTo= (public.json, public.xml, public.text, public.zip-archive). "
                       + "Not repeated for this pair until the next reload", event: .mismatch, fields: fields)
        }
    }

    // MARK: What an earlier run left

    /// A queued delivery whose handler is gone: route the file again from its container.
    func reroute(_ delivery: Delivery) {
        guard let inbox = state.openedContainer(for: delivery.handler)?.inbox else { return }
        take(Array(delivery.name.utf8), from: inbox)
    }

    /// Routes what waits in unhandled/ again, after the registrations changed.
    func redispatchUnhandled() {
        guard let unhandled = state.unhandled, let names = try? unhandled.entries() else { return }
        unhandled.removeOrphanSidecars(among: names)
        for name in names where !FileNames.isHidden(name) { take(name, from: unhandled) }
    }

    /// Files left in container Inboxes by an earlier run are queued again (the directories are the queue); those of
    /// handlers no longer registered are routed anew.
    func recoverContainers() {
        // What was in intake/ when an earlier run stopped is the agent's already; it goes on from there.
        if let staging = state.intake, let names = try? staging.entries() {
            staging.removeOrphanSidecars(among: names)
            for name in names where !FileNames.isHidden(name) { take(name, from: staging) }
        }
        for (handler, inbox) in state.containerInboxes() {
            guard let files = try? inbox.entries() else { continue }
            inbox.removeOrphanSidecars(among: files)
            let known = catalog.registration(handler) != nil
            for name in files.sorted(by: { $0.lexicographicallyPrecedes($1) }) where !FileNames.isHidden(name) {
                guard case .opened(let file) = inbox.openRegular(name) else { continue }
                defer { file.descriptor.close() }
                let arrival = reader.arrival(of: file, named: name, in: inbox, origin: .held)
                if known, let container = try? state.container(for: handler, identity: catalog.identity(for: handler)),
                   let text = String(validating: name, as: UTF8.self) {
                    requeue(arrival, named: text, in: container)
                } else {
                    route(arrival)
                }
            }
        }
    }

    /// Opens a held file and routes it again.
    private func take(_ name: [UInt8], from directory: Directory) {
        guard case .opened(let file) = directory.openRegular(name) else { return }
        defer { file.descriptor.close() }
        route(reader.arrival(of: file, named: name, in: directory, origin: .held))
    }

    /// Queues a file found in its handler's container again.
    private func requeue(_ arrival: Arrival, named name: String, in container: Container) {
        // Sniffed once already, when it was first routed; if the sniffer fails now, its claim decides.
        let type: ResolvedType
        switch inspector.inspect(arrival.file.descriptor, name: name, explicit: arrival.metadata.contentType,
                                 in: catalog.database) {
        case .success(let inspection):
            report(inspection, of: arrival.shown, id: arrival.id, sourceApp: arrival.metadata.sourceApp,
                   sourceUID: arrival.sourceUID)
            type = inspection.resolved
        case .failure:
            type = TypeResolver.resolve(explicit: arrival.metadata.contentType, fileName: name, in: catalog.database)
        }
        let chosenBy: Delivery.ChosenBy = arrival.metadata.handler == container.handler ? .sender : .rank
        dispatcher.enqueue(delivery(of: arrival, to: container.handler, in: container, as: name, chosenBy: chosenBy,
                                    type: type), placed: nil)
        quotas?.charge(arrival, id: arrival.id)
    }
}
