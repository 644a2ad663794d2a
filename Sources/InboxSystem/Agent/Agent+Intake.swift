import CSystemd
import Glibc
import InboxCore

extension Agent {
    // MARK: Watching

    /// Reads what inotify has queued: names go to `pendingNames`, looked at by `pumpIntake`.
    func readInotify() {
        let events: [InotifyEvent]
        do { events = try inotify.read() } catch {
            logger.log(.error, "Reading inotify events failed: \(error)")
            return
        }
        var reloadNeeded = false
        for event in events {
            if event.mask.contains(.queueOverflow) {
                // inotify(7): events were dropped; the directories still hold every file.
                logger.log(.notice, "Inotify queue overflowed; rescanning the inboxes", event: .overflow)
                rescanNeeded = true
            } else if handlerWatches.contains(event.watch) {
                reloadNeeded = true
            } else if let inbox = inboxWatches[event.watch], !event.name.isEmpty, !FileNames.isHidden(event.name) {
                pendingNames.append(inbox, event.name)
            }
        }
        if reloadNeeded { scheduleReload() }
        // A few arrivals (the usual case) are taken right away, saving a loop iteration of latency;
        // a burst goes through the pump, batch by batch, between handler exits.
        if pendingNames.count <= intakeBatch && !rescanNeeded {
            pumpIntake()
        } else {
            updateIntakePump()
        }
    }

    /// Looks at a batch of pending names, refilling from a rescan when one is due.
    func pumpIntake() {
        guard phase == .running else { return }
        var budget = intakeBatch
        while budget > 0 && queue.count < highWater {
            guard let (inbox, name) = pendingNames.popFirst() else {
                guard rescanNeeded else { break }
                rescanInboxes()
                if pendingNames.isEmpty { break }
                continue
            }
            intake(name, from: inbox)
            budget -= 1
        }
        launchReady()
        updateIntakePump()
        writeStatusSoon()
    }

    /// Queues every visible name in the drop Inboxes, as many as fit; the rest wait for the next rescan.
    func rescanInboxes() {
        rescanNeeded = false
        for inbox in inboxes {
            guard let names = try? inbox.entries() else { continue }
            for name in names where !FileNames.isHidden(name) {
                if pendingNames.count >= maxPendingNames {
                    rescanNeeded = true
                    return
                }
                pendingNames.append(inbox, name)
            }
        }
    }

    /// Runs the pump while there is intake work and room in the queue; reads inotify while
    /// there is room for names.
    func updateIntakePump() {
        guard phase == .running else { return }
        let work = !pendingNames.isEmpty || rescanNeeded
        intakePump?.setEnabled(work && queue.count < highWater ? .on : .off)
        if !inotifyPaused && pendingNames.count >= maxPendingNames {
            inotifyPaused = true
            inotifySource?.setEnabled(.off)
        } else if inotifyPaused && pendingNames.count < maxPendingNames / 2 {
            inotifyPaused = false
            inotifySource?.setEnabled(.on)
        }
    }

    // MARK: Intake

    /// Looks at one drop Inbox entry: hidden names wait, anything but a single-link regular file
    /// is moved aside unopened, a regular file is routed to its handler or to unhandled/.
    func intake(_ name: [UInt8], from inbox: Directory) {
        guard phase == .running, !FileNames.isHidden(name) else { return }
        switch inbox.openRegular(name) {
        case .gone:
            return
        case .refused(let kind):
            moveAside(name, from: inbox, kind: kind)
        case .failed(let error):
            logger.log(.warning, "Cannot take \(displayName(name)): \(error)", event: .rejected,
                       fields: ["INBOX_FILE": inbox.child(displayName(name))])
        case .opened(let file):
            defer { file.descriptor.close() }
            route(name, file: file, from: inbox, fresh: true)
        }
    }

    /// A symlink, FIFO, device, socket, directory or hard link: renamed into failed/ without
    /// being opened or followed, or left where it is if even that is not possible.
    func moveAside(_ name: [UInt8], from inbox: Directory, kind: EntryKind) {
        let shown = inbox.child(displayName(name))
        let owner = (try? inbox.status(of: name))?.map { String($0.st_uid) }
        let aside = "rejected-" + FileNames.sanitized(name)
        switch inbox.moveUnique(name, to: failed, preferred: aside) {
        case .success(let newName):
            logger.log(.warning, "Moved aside \(kind.rawValue) \(shown)", event: .rejected,
                       fields: ["INBOX_FILE": shown, "INBOX_FILE_KIND": kind.rawValue,
                                "INBOX_MOVED_TO": failed.child(newName), "INBOX_SOURCE_UID": owner])
        case .failure(let error):
            logger.log(.warning, "Left \(kind.rawValue) \(shown) in place: cannot move it aside: \(error)",
                       event: .rejected, fields: ["INBOX_FILE": shown, "INBOX_FILE_KIND": kind.rawValue,
                                                  "INBOX_SOURCE_UID": owner])
        }
    }

    /// Metadata the sender attached, bounded and checked: the extended attributes, and for what they lack the
    /// sidecar `.<name>.inbox-meta` beside the file (`hasSidecar`: one was read, and goes where the file goes).
    /// Problems are warnings, never fatal.
    func senderMetadata(_ attributes: ExtendedAttributes, file: OpenedFile, name: [UInt8], in directory: Directory,
                        shown: String) -> (metadata: SenderMetadata, hasSidecar: Bool) {
        var metadata = SenderMetadata()
        switch attributes.read(SenderAttribute.sourceApp, limit: MetadataLimits.sourceAppBytes, scratch: scratch) {
        case .value(let bytes):
            if let text = String(validating: bytes, as: UTF8.self), SourceApplication.isValid(text) {
                metadata.sourceApp = text
            } else {
                logger.log(.warning, "Ignoring invalid source application on \(shown)", fields: ["INBOX_FILE": shown])
            }
        case .tooLarge(let size):
            logger.log(.warning, "Ignoring source application of \(size) bytes on \(shown)", fields: ["INBOX_FILE": shown])
        case .absent, .failed: break
        }
        switch attributes.read(SenderAttribute.annotation, limit: MetadataLimits.annotationBytes, scratch: scratch) {
        case .value(let bytes):
            if let problem = JSON.validate(bytes) {
                logger.log(.warning, "Annotation on \(shown) is not valid JSON (\(problem)); delivering without it",
                           fields: ["INBOX_FILE": shown])
            } else {
                metadata.annotation = bytes
            }
        case .tooLarge(let size):
            logger.log(.warning, "Annotation on \(shown) is \(size) bytes, over the \(MetadataLimits.annotationBytes) limit; delivering without it",
                       fields: ["INBOX_FILE": shown])
        case .absent, .failed: break
        }
        metadata.contentType = attributes.readString(SenderAttribute.contentType, limit: MetadataLimits.contentTypeBytes)
        if let handler = attributes.readString(SenderAttribute.handler, limit: MetadataLimits.sourceAppBytes) {
            if HandlerIdentifier.isValid(handler) {
                metadata.handler = handler
                metadata.overridesHandlerCheck = attributes.readString(SenderAttribute.handlerOverride, limit: 8) == "yes"
            } else {
                logger.log(.warning, "Ignoring invalid handler choice on \(shown)", fields: ["INBOX_FILE": shown])
            }
        }
        switch directory.readSidecar(of: name, owner: file.status.st_uid) {
        case .absent:
            return (metadata, false)
        case .refused(let reason):
            logger.log(.warning, "Ignoring and removing the sidecar of \(shown): \(reason)", fields: ["INBOX_FILE": shown])
            directory.removeSidecar(of: name)
            return (metadata, false)
        case .read(let bytes):
            let (carried, problems) = Sidecar.parse(bytes)
            for problem in problems {
                logger.log(.warning, "Sidecar of \(shown): \(problem); delivering without it", fields: ["INBOX_FILE": shown])
            }
            return (metadata.merging(carried), true)
        }
    }

    /// Decides where an open, checked file goes and moves it there.
    /// `fresh` is true for a new arrival: sender-set agent attributes are stripped and a delivery id made.
    func route(_ name: [UInt8], file: OpenedFile, from directory: Directory, fresh: Bool) {
        let shown = directory.child(displayName(name))
        let attributes = ExtendedAttributes(file.descriptor)
        let (metadata, hasSidecar) = senderMetadata(attributes, file: file, name: name, in: directory, shown: shown)
        let id: String
        var attempts = 0
        let sourceUID: UInt32
        if fresh {
            // Written before the handler can see the file: the after-exit check compares the change
            // time, so nothing of the agent's may touch the file once the handler runs.
            for key in attributes.names() where key.hasPrefix(AgentAttribute.prefix) { attributes.remove(key) }
            id = Self.newDeliveryID()
            sourceUID = file.status.st_uid
            attributes.write(AgentAttribute.delivery, "\(id) \(sourceUID)")
        } else {
            let stored = Self.storedDelivery(attributes)
            id = stored.id ?? Self.newDeliveryID()
            sourceUID = stored.sourceUID ?? file.status.st_uid
            attempts = stored.attempts
        }
        let cleanName = FileNames.sanitized(name)
        let resolved: ResolvedType
        switch resolveType(file, name: cleanName, explicit: metadata.contentType, shown: shown, id: id,
                           sourceApp: metadata.sourceApp, sourceUID: sourceUID) {
        case .success(let type):
            resolved = type
        case .failure(let failure):
            refuseUnsniffable(name, file: file, from: directory, shown: shown, id: id, sourceUID: sourceUID, failure: failure)
            return
        }
        if logger.isEnabled(.debug) && fresh {
            logger.log(.debug, "Arrived \(shown)", event: .arrived, fields: [
                "INBOX_FILE": shown, "INBOX_DELIVERY_ID": id, "INBOX_CONTENT_TYPE": resolved.identifier,
                "INBOX_TYPE_SOURCE": resolved.source.rawValue, "INBOX_SOURCE_APP": metadata.sourceApp,
                "INBOX_SOURCE_UID": String(sourceUID)])
        }
        let handler: String
        var chosenBy: String?
        if let requested = metadata.handler {
            let trusted = sourceUID == 0 || sourceUID == geteuid()
            switch HandlerRequest.decide(handler: requested, override: metadata.overridesHandlerCheck, trusted: trusted,
                                         type: resolved.identifier, index: registrations.index,
                                         database: registrations.database) {
            case .deliver(let requested, let overridden):
                handler = requested
                chosenBy = overridden ? "sender-override" : "sender"
                if overridden {
                    logger.log(.notice, "Delivering \(shown) (\(resolved.identifier)) to \(requested), which does not claim "
                               + "that type, as its sender (uid \(sourceUID)) asked", fields: [
                        "INBOX_FILE": shown, "INBOX_DELIVERY_ID": id, "INBOX_HANDLER": requested,
                        "INBOX_CONTENT_TYPE": resolved.identifier])
                }
            case .notRegistered:
                park(name, file: file, from: directory, shown: shown, id: id, type: resolved, sourceApp: metadata.sourceApp,
                     sourceUID: sourceUID, hasSidecar: hasSidecar, requested: requested)
                return
            case .refused(let reason):
                reject(name, file: file, from: directory, shown: shown, id: id, reason: "refused: " + reason,
                       sourceUID: sourceUID, contentType: resolved.identifier, requested: requested)
                return
            }
        } else {
            let selection = HandlerSelector.select(type: resolved.identifier, index: registrations.index,
                                                   database: registrations.database, preferences: preferences,
                                                   ranking: .best)
            guard let chosen = selection.chosen else {
                park(name, file: file, from: directory, shown: shown, id: id, type: resolved, sourceApp: metadata.sourceApp,
                     sourceUID: sourceUID, hasSidecar: hasSidecar)
                return
            }
            if selection.tieBroken {
                logger.log(.notice, "Several handlers tie for \(resolved.identifier); chose \(chosen.handler) by identifier",
                           fields: ["INBOX_CONTENT_TYPE": resolved.identifier, "INBOX_HANDLER": chosen.handler,
                                    "INBOX_CANDIDATES": selection.candidates.map(\.handler).joined(separator: " ")])
            }
            handler = chosen.handler
        }
        let container: Container
        do { container = try self.container(for: handler) } catch {
            logger.log(.error, "Cannot prepare the container of \(handler): \(error); \(shown) stays where it is",
                       fields: ["INBOX_FILE": shown, "INBOX_HANDLER": handler])
            return
        }
        handOver(file.descriptor, to: container)
        switch relocate(name, file: file, from: directory, to: container.inbox, preferred: cleanName) {
        case .success(let (newName, copy)):
            if hasSidecar { directory.moveSidecar(of: name, to: container.inbox, as: newName) }
            if let copy { handOver(copy, to: container) }
            // What the handler is given, after the agent's last change to it (rename updates the change time).
            let identity = FileIdentity(copy ?? file.descriptor)
            copy?.close()
            nextSequence += 1
            queue.append(Delivery(id: id, handler: handler, chosenBy: chosenBy, fileName: newName, hasSidecar: hasSidecar, contentType: resolved.identifier,
                                  typeSource: resolved.source, sourceApp: metadata.sourceApp, sourceUID: sourceUID,
                                  annotation: metadata.annotation, attempts: attempts, sequence: nextSequence,
                                  justMoved: true, identity: identity))
        case .failure(let error):
            logger.log(.error, "Cannot move \(shown) into \(container.inbox.path): \(error); it stays where it is",
                       fields: ["INBOX_FILE": shown, "INBOX_HANDLER": handler, "INBOX_DELIVERY_ID": id])
        }
    }

    /// Makes the Inbox copy the agent's and readable by the handler's group only (DESIGN.md:
    /// the handler never owns its Inbox copy, so it cannot change its mode).
    func handOver(_ file: FileDescriptor, to container: Container) {
        if isRoot, case .success(let identity)? = identities[container.handler] {
            _ = fchown(file.rawValue, 0, identity.gid)
            _ = fchmod(file.rawValue, 0o440)
        } else {
            // Read-only for its owner too: without Landlock, a write needs a chmod first, which the
            // after-exit check sees in the change time.
            _ = fchmod(file.rawValue, 0o400)
        }
    }

    /// Moves an entry into `target` under a free name. Across filesystems (EXDEV) it copies the
    /// open file instead, then removes the original, and returns the copy, open.
    func relocate(_ name: [UInt8], file: OpenedFile, from directory: Directory, to target: Directory,
                  preferred: String) -> Result<(String, FileDescriptor?), SystemError> {
        switch directory.moveUnique(name, to: target, preferred: preferred) {
        case .success(let newName):
            return .success((newName, nil))
        case .failure(.crossDevice):
            switch directory.copyIn(file, to: target, preferred: preferred) {
            case .success(let (newName, copy)):
                // Only the very file that was copied is removed. (The Inbox is sticky, so only its
                // sender could swap another in between this check and the unlink.)
                if let st = try? directory.status(of: name), st.st_ino == file.status.st_ino, st.st_dev == file.status.st_dev {
                    directory.remove(name)
                }
                return .success((newName, copy))
            case .failure(let error):
                return .failure(error)
            }
        case .failure(let error):
            return .failure(SystemError("renameat2", path: target.child(preferred), errno: error))
        }
    }

    /// No handler for the type, or the handler its sender chose (`requested`) is not registered: kept intact in
    /// unhandled/ until a registration for it appears.
    func park(_ name: [UInt8], file: OpenedFile, from directory: Directory, shown: String, id: String,
              type: ResolvedType, sourceApp: String?, sourceUID: UInt32, hasSidecar: Bool, requested: String? = nil) {
        if directory === unhandled { return }
        switch relocate(name, file: file, from: directory, to: unhandled, preferred: FileNames.sanitized(name)) {
        case .success(let (newName, copy)):
            copy?.close()
            if hasSidecar { directory.moveSidecar(of: name, to: unhandled, as: newName) }
            let what = requested.map { "No handler \($0) (its sender's choice) for \(type.identifier)" }
                ?? "No handler for \(type.identifier)"
            logger.log(.info, "\(what); kept \(unhandled.child(newName))", event: .unhandled, fields: [
                "INBOX_FILE": unhandled.child(newName), "INBOX_DELIVERY_ID": id, "INBOX_CONTENT_TYPE": type.identifier,
                "INBOX_TYPE_SOURCE": type.source.rawValue, "INBOX_SOURCE_APP": sourceApp,
                "INBOX_SOURCE_UID": String(sourceUID), "INBOX_REQUESTED_HANDLER": requested])
        case .failure(let error):
            logger.log(.error, "No handler for \(type.identifier) and cannot move \(shown) to unhandled/: \(error)",
                       fields: ["INBOX_FILE": shown, "INBOX_DELIVERY_ID": id])
        }
    }

    func container(for handler: String) throws(SystemError) -> Container {
        if let container = containers[handler] { return container }
        let identity = isRoot ? (try? identities[handler]?.get()) : nil
        let container = try Container(handler: handler, in: containersRoot, identity: identity)
        containers[handler] = container
        return container
    }

    // MARK: Recovery

    /// Files left in container Inboxes by an earlier run are queued again (the directories are the queue).
    func recoverContainers() {
        guard let names = try? containersRoot.entries() else { return }
        for handlerName in names.compactMap({ String(validating: $0, as: UTF8.self) }).sorted() {
            guard let root = try? containersRoot.subdirectory(handlerName, create: false),
                  let inbox = try? root.subdirectory("Inbox", create: false),
                  let files = try? inbox.entries() else { continue }
            inbox.removeOrphanSidecars(among: files)
            let known = registrations.registration(handlerName) != nil
            for name in files.sorted(by: { $0.lexicographicallyPrecedes($1) }) where !FileNames.isHidden(name) {
                guard case .opened(let file) = inbox.openRegular(name) else { continue }
                defer { file.descriptor.close() }
                if known, let container = try? container(for: handlerName),
                   let text = String(validating: name, as: UTF8.self) {
                    requeue(text, file: file, in: container)
                } else {
                    route(name, file: file, from: inbox, fresh: false)
                }
            }
        }
    }

    private func requeue(_ name: String, file: OpenedFile, in container: Container) {
        let attributes = ExtendedAttributes(file.descriptor)
        let (metadata, hasSidecar) = senderMetadata(attributes, file: file, name: Array(name.utf8), in: container.inbox,
                                                    shown: container.inbox.child(name))
        let stored = Self.storedDelivery(attributes)
        // Sniffed once already, when it was first routed; if the sniffer fails now, its claim decides.
        let sniffed = resolveType(file, name: name, explicit: metadata.contentType, shown: container.inbox.child(name),
                                  id: stored.id, sourceApp: metadata.sourceApp, sourceUID: stored.sourceUID)
        let type = (try? sniffed.get())
            ?? TypeResolver.resolve(explicit: metadata.contentType, fileName: name, in: registrations.database)
        nextSequence += 1
        queue.append(Delivery(
            id: stored.id ?? Self.newDeliveryID(), handler: container.handler,
            chosenBy: metadata.handler == container.handler ? "sender" : nil, fileName: name, hasSidecar: hasSidecar,
            contentType: type.identifier, typeSource: type.source, sourceApp: metadata.sourceApp,
            sourceUID: stored.sourceUID ?? file.status.st_uid, annotation: metadata.annotation,
            attempts: stored.attempts,
            sequence: nextSequence))
    }

    /// Routes what waits in unhandled/ again, after the registrations changed.
    func redispatchUnhandled() {
        guard let names = try? unhandled.entries() else { return }
        unhandled.removeOrphanSidecars(among: names)
        for name in names where !FileNames.isHidden(name) {
            guard case .opened(let file) = unhandled.openRegular(name) else { continue }
            defer { file.descriptor.close() }
            route(name, file: file, from: unhandled, fresh: false)
        }
    }

    // MARK: Identifiers

    /// 128 random bits as 32 lowercase hex digits, like a journal id (sd_id128_randomize(3)).
    static func newDeliveryID() -> String {
        var id = sd_id128_t()
        _ = sd_id128_randomize(&id)
        return withUnsafeBytes(of: id.bytes) { bytes in
            String(unsafeUninitializedCapacity: 32) { text in
                let digits: StaticString = "0123456789abcdef"
                for (index, byte) in bytes.enumerated() {
                    text[2 * index] = digits.utf8Start[Int(byte >> 4)]
                    text[2 * index + 1] = digits.utf8Start[Int(byte & 0xF)]
                }
                return 32
            }
        }
    }

    /// What an earlier run recorded on a file it held.
    static func storedDelivery(_ attributes: ExtendedAttributes) -> (id: String?, sourceUID: UInt32?, attempts: Int) {
        let stored = AgentAttribute.delivery(attributes)
        let attempts = attributes.readString(AgentAttribute.attempts, limit: 16).flatMap { Int($0) } ?? 0
        return (stored?.id, stored?.sourceUID, max(0, attempts))
    }
}
