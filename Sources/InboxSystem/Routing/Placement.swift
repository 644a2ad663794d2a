import InboxCore

/// Puts a typed arrival where its decision says: into the chosen handler's container Inbox, its delivery handed to
/// the dispatcher, or into unhandled/. Every move is one call, `relocate` below (`Directory.relocate`: by the inode
/// that was checked, through the agent's intake/); what the move leaves to do (a wait, a retry) is the caller's, told
/// by the returned `Placed`.
final class Placement {
    /// How a placement ended.
    enum Placed {
        /// In its container and queued, or in unhandled/ and logged; or refused on the way (its sender swapped the
        /// name, or wrote to the file), logged by `Quarantine`. Nothing more to do.
        case done
        /// Nothing was moved: the file is still where it was (`target` names where it was to go).
        case cannotMove(SystemError, target: String)
        /// The file is the agent's, in intake/ as `name`, but could not go on.
        case staged(name: String, SystemError, target: String)
        /// A package changed while it was copied across filesystems (`reason`); nothing was moved: its sender is
        /// still writing it.
        case changing(reason: String)
    }

    private let logger: Logger
    private let state: StateDirectories
    private let quarantine: Quarantine
    private let handoff: DeliveryHandoff
    /// What gives the package bounds a package is checked again within once it is the agent's.
    private let reader: ArrivalReader
    private let isRoot = CurrentProcess.isRoot
    private(set) var catalog: HandlerCatalog
    /// The Inbox bounds; nil when none is set (nothing is counted, no attribute written).
    var quotas: InboxQuotas?

    init(logger: Logger, state: StateDirectories, quarantine: Quarantine, handoff: DeliveryHandoff,
         catalog: HandlerCatalog, reader: ArrivalReader) {
        self.reader = reader
        self.logger = logger
        self.state = state
        self.quarantine = quarantine
        self.handoff = handoff
        self.catalog = catalog
    }

    func use(_ catalog: HandlerCatalog) { self.catalog = catalog }

    /// Moves the file into the handler's container Inbox and queues its delivery. `leased`: intake holds the file's
    /// read lease, which must still be intact once the file is in the container.
    func deliver(_ arrival: Arrival, to handler: String, chosenBy: Delivery.ChosenBy, type: ResolvedType, leased: Bool,
                 binding: Routing.Binding?) -> Placed {
        let container: Container
        do throws(SystemError) {
            container = try state.container(for: handler, identity: catalog.identity(for: handler))
        } catch {
            return .cannotMove(error, target: "the container of \(handler)")
        }
        switch relocate(arrival, to: container.inbox, binding: binding, handOverTo: handler) {
        case nil:
            return .done
        case .moved(let newName, let copy)?:
            // A writer that came after the lease is the sender's (only it could name the file): not delivered.
            if leased && copy == nil && !arrival.file.descriptor.readLeaseIntact {
                quarantine.withdraw(newName, from: container.inbox, of: arrival, reason: "its sender (uid "
                                    + "\(arrival.sourceUID)) opened it for writing while it was being delivered")
                return .done
            }
            // What the handler is given, after the agent's last change to it (rename updates the change time).
            let identity = FileIdentity(copy ?? arrival.file.descriptor)
            copy?.close()
            handoff.enqueue(delivery(of: arrival, to: handler, in: container, as: newName, chosenBy: chosenBy, type: type),
                            placed: identity)
            quotas?.charge(arrival, id: arrival.id)
            return .done
        case let other?:
            return unplaced(other, of: arrival, target: container.inbox.path)
        }
    }

    /// What a move that did not reach its target leaves to do.
    private func unplaced(_ relocation: Relocation, of arrival: Arrival, target: String) -> Placed {
        switch relocation {
        case .moved:
            return .done
        case .swapped(let found, let keptAs):
            quarantine.swapped(arrival, found: found, keptAs: keptAs)
            return .done
        case .failed(let error):
            return .cannotMove(error, target: target)
        case .staged(let name, let error):
            return .staged(name: name, error, target: target)
        case .changed(let reason, let staged?):
            quarantine.refuse(staged: staged, of: arrival, reason: Self.stillWritten(arrival, reason))
            return .done
        case .changed(let reason, nil):
            return .changing(reason: Self.stillWritten(arrival, reason))
        case .writer(let entry, let staged):
            // Refused at once, not waited for: a package is renamed in only once it is complete.
            quarantine.refuse(staged: staged, of: arrival, reason: "its sender (uid \(arrival.sourceUID)) kept entry "
                              + "\(entry) open for writing, so its content could still change")
            return .done
        }
    }

    /// Why a package whose tree changed after it was checked is not delivered: "its sender (uid 1000) was still
    /// writing it: entry Data/x.png was added".
    static func stillWritten(_ arrival: Arrival, _ change: String) -> String {
        "its sender (uid \(arrival.sourceUID)) was still writing it: \(change)"
    }

    /// Queues again a file that lies in its handler's container already (found there at start-up): nothing moves.
    func requeue(_ arrival: Arrival, named name: String, in container: Container, chosenBy: Delivery.ChosenBy,
                 type: ResolvedType) {
        handoff.enqueue(delivery(of: arrival, to: container.handler, in: container, as: name, chosenBy: chosenBy,
                                 type: type), placed: nil)
        quotas?.charge(arrival, id: arrival.id)
    }

    /// The arrival came through a cluster Inbox (`[Cluster] Inboxes=`): moved into the outbox as its delivery id, with
    /// its delivery message beside it, and handed to the publisher, which removes both once the server has them.
    func publish(_ arrival: Arrival, to handler: String, type: ResolvedType, leased: Bool, binding: Routing.Binding?,
                 through publisher: ClusterPublisher) -> Placed {
        guard let outbox = publisher.outbox else { return .cannotMove(SystemError("openat", path: state.root.child(
            StateDirectories.outboxName), errno: .noSuchFile), target: "the cluster's outbox") }
        let message = publisher.message(for: arrival, handler: handler, contentTypes: catalog.conformanceChain(of:
            type.identifier))
        if let error = outbox.createMessage(message.encode(), for: arrival.id) {
            return .cannotMove(SystemError("open", path: outbox.path, errno: error), target: outbox.path)
        }
        switch relocate(arrival, to: outbox, binding: binding, handOverTo: nil, preferred: arrival.id) {
        case nil:
            outbox.removeMessage(of: arrival.id)
            return .done
        case .moved(let newName, let copy)?:
            if leased && copy == nil && !arrival.file.descriptor.readLeaseIntact {
                outbox.removeMessage(of: arrival.id)
                quarantine.withdraw(newName, from: outbox, of: arrival, reason: "its sender (uid "
                                    + "\(arrival.sourceUID)) opened it for writing while it was being published")
                return .done
            }
            copy?.close()
            if newName != arrival.id { outbox.moveMessage(of: arrival.id, to: newName) }
            publisher.enqueue(newName, message: message, from: arrival.shown, hasSidecar: arrival.hasSidecar)
            return .done
        case let other?:
            outbox.removeMessage(of: arrival.id)
            return unplaced(other, of: arrival, target: outbox.path)
        }
    }

    /// No handler for the type, the one its sender chose (`requested`) is not registered, or the one its Inbox is
    /// bound to cannot have it (`reason`): kept intact in unhandled/ until the registrations change.
    func park(_ arrival: Arrival, type: ResolvedType, requested: String?, reason: String?,
              binding: Routing.Binding?) -> Placed {
        guard let unhandled = state.unhandled, arrival.directory !== unhandled else { return .done }
        switch relocate(arrival, to: unhandled, binding: binding, handOverTo: nil) {
        case nil:
            return .done
        case .moved(let newName, let copy)?:
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
            return .done
        case let other?:
            return unplaced(other, of: arrival, target: unhandled.path)
        }
    }

    /// How a hold ended: in pending/ as `name`, or as a placement that did not get there says.
    enum Held {
        case held(String)
        case unplaced(Placed)
    }

    /// Several handlers could take the file and its Inbox asks a person to choose (`ChooseHandler=ask`): kept intact in
    /// pending/ with its sender's metadata, the time it started waiting and its Inbox recorded on it, and one journal
    /// entry naming the candidates and the command that chooses.
    func hold(_ arrival: Arrival, type: ResolvedType, candidates: [String], binding: Routing.Binding?) -> Held {
        guard let pending = state.pending, arrival.directory !== pending else { return .unplaced(.done) }
        let since = WallClock.now
        switch relocate(arrival, to: pending, binding: binding, handOverTo: nil, recordInbox: true, extra: { file in
            let attributes = ExtendedAttributes(file)
            _ = attributes.remove(AgentAttribute.choice)
            _ = attributes.write(AgentAttribute.waiting, String(since))
        }) {
        case nil:
            return .unplaced(.done)
        case .moved(let newName, let copy)?:
            copy?.close()
            let path = pending.child(newName)
            logger.log(.info, "\(arrival.cleanName) (\(type.identifier)) is waiting for a choice among "
                       + "\(candidates.joined(separator: ", ")): inboxctl choose \(path) --with HANDLER",
                       event: .pending, fields: [
                "INBOX_FILE": path, "INBOX_DELIVERY_ID": arrival.id, "INBOX_CONTENT_TYPE": type.identifier,
                "INBOX_TYPE_SOURCE": type.source.rawValue, "INBOX_SOURCE_APP": arrival.metadata.sourceApp,
                "INBOX_SOURCE_UID": String(arrival.sourceUID), "INBOX_CANDIDATES": candidates.joined(separator: " ")])
            return .held(newName)
        case let other?:
            return .unplaced(unplaced(other, of: arrival, target: pending.path))
        }
    }

    /// The move itself, the per-file filesystem work of a placement: into intake/, checked, stamped (the delivery,
    /// the drop Inbox where it matters, and for a handler the owner and mode), and on into `target` with the agent's
    /// sidecar. nil when the state directory has no intake/ (it could not be made: nothing is moved).
    private func relocate(_ arrival: Arrival, to target: Directory, binding: Routing.Binding?,
                          handOverTo handler: String?, recordInbox: Bool = false, preferred: String? = nil,
                          extra: (FileDescriptor) -> Void = { _ in }) -> Relocation? {
        guard let staging = state.intake else { return nil }
        let package = arrival.package.map { PackageMove(manifest: $0, limits: reader.packageLimits) }
        return arrival.directory.relocate(arrival.name, file: arrival.file, to: target,
                                          preferred: preferred ?? arrival.cleanName,
                                          via: staging, rejectsTo: state.failed, sidecar: arrival.agentSidecar,
                                          package: package) { file, tree in
            arrival.stamp(file)
            record(binding, of: arrival, on: file, always: recordInbox)
            extra(file)
            return handler.flatMap { handOver(file, tree: tree, to: $0) }
        }
    }

    /// Records the drop Inbox on the agent's file, beside `Arrival.stamp` (which removes what was there before), where
    /// it matters: the Inbox is bound to a handler, or Inboxes are bounded (`InboxQuotas` counts by it).
    private func record(_ binding: Routing.Binding?, of arrival: Arrival, on file: FileDescriptor, always: Bool) {
        guard arrival.origin == .dropped, binding != nil || quotas != nil || always else { return }
        ExtendedAttributes(file).write(AgentAttribute.inbox, binding?.inbox ?? arrival.directory.path)
    }

    /// Makes the Inbox copy the agent's and readable by the handler's group only (docs/design.md, Security model:
    /// the handler never owns its Inbox copy, so it cannot change its mode). A package's every entry: its files as a
    /// single copy, its directories as the container Inbox itself (the handler's group may remove entries, and
    /// Landlock lets it do nothing else there); one not handed over whole is not delivered (the error returned): an
    /// entry could still be its sender's.
    private func handOver(_ file: FileDescriptor, tree: PackageManifest?, to handler: String) -> Errno? {
        if let tree {
            let identity = isRoot ? catalog.identity(for: handler) : nil
            return PackageTree.handOver(file, manifest: tree, owner: identity.map { _ in 0 }, group: identity?.gid,
                                        fileMode: identity == nil ? 0o400 : 0o440,
                                        directoryMode: identity == nil ? 0o700 : 0o770)
        }
        if isRoot, let identity = catalog.identity(for: handler) {
            try? file.chown(uid: 0, gid: identity.gid)
            try? file.chmod(0o440)
        } else {
            // Read-only for its owner too: without Landlock, a write needs a chmod first, which the after-exit check
            // sees in the change time.
            try? file.chmod(0o400)
        }
        return nil
    }

    private func delivery(of arrival: Arrival, to handler: String, in container: Container, as name: String,
                          chosenBy: Delivery.ChosenBy, type: ResolvedType) -> Delivery {
        var delivery = Delivery(id: arrival.id, handler: handler, chosenBy: chosenBy, name: name,
                                path: container.inbox.child(name), documents: container.documents,
                                contentType: type.identifier, typeSource: type.source, contentTypes: [],
                                sender: arrival.metadata, sourceUID: arrival.sourceUID, hasSidecar: arrival.hasSidecar,
                                attempt: arrival.cluster?.earlierAttempts ?? arrival.attempts)
        // From the cluster: delivered before (on this host or another) is the server's to say.
        delivery.redelivered = arrival.cluster.map { $0.delivered > 1 } ?? arrival.redelivered
        delivery.cluster = arrival.cluster
        delivery.sourceHost = arrival.sourceHost
        delivery.isPackage = arrival.isPackage
        return delivery
    }
}
