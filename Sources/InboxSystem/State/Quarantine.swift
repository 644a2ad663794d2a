import InboxCore

/// Everything that ends in failed/: entries that are not regular files (moved aside unopened), files refused at
/// intake, deliveries given up on, and copies a handler changed. The reason goes in the file's failure attribute and
/// in one journal entry; the sidecar goes with the file. `inboxctl retry` brings such a file back.
struct Quarantine {
    let state: StateDirectories
    let logger: Logger

    /// A symlink, FIFO, device, socket, directory or hard link: renamed into failed/ without being opened or
    /// followed, or left where it is if even that is not possible. What is left is recorded (`LeftInPlace`) and
    /// logged once: the rescan of the next start finds it known and says nothing again. `why` says what a directory
    /// lacked to be a package document.
    func moveAside(_ name: [UInt8], from directory: Directory, kind: EntryKind, why: String? = nil) {
        let shown = directory.child(displayName(name))
        let owner = (try? directory.status(of: name))?.map { String($0.st_uid) }
        let fields: JournalFields = [("INBOX_FILE", shown), ("INBOX_FILE_KIND", kind.rawValue)]
        let because = why.map { ": \($0)" } ?? ""
        guard let failed = state.failed else { return }
        switch directory.moveUnique(name, to: failed, preferred: "rejected-" + FileNames.sanitized(name)) {
        case .success(let newName):
            state.leftInPlace.forget(name, in: directory)
            state.kept(newName, in: .failed, file: nil)
            logger.log(.warning, "Moved aside \(kind.rawValue) \(shown) to \(failed.child(newName))\(because)", event: .rejected,
                       fields: fields + [("INBOX_MOVED_TO", failed.child(newName)), ("INBOX_SOURCE_UID", owner),
                                         ("INBOX_REASON", why)])
        case .failure(let error):
            let reason = (why.map { $0 + "; " } ?? "") + (error == .crossDevice
                ? "cannot move it aside: \(error) (\(directory.path) is on another mount than \(state.root.path))"
                : "cannot move it aside: \(error)")
            guard state.leftInPlace.record(name, in: directory, kind: kind, reason: reason) else {
                logger.log(.debug, "Still left in place: \(kind.rawValue) \(shown) (\(reason))",
                           fields: fields)
                return
            }
            logger.log(.warning, "Left \(kind.rawValue) \(shown) in place: \(reason); shown by inboxctl list failed",
                       event: .rejected, fields: fields + [("INBOX_SOURCE_UID", owner), ("INBOX_REASON", reason)])
        }
    }

    /// A file the agent will not deliver (it crashed the sniffer, or its sender chose a handler it may not have, or
    /// kept it open for writing). Like every move, by the inode that was checked (`Directory.relocate`): the failure
    /// attribute is written only once the file is the agent's.
    func reject(_ arrival: Arrival, reason: String, contentType: String? = nil, requested: String? = nil) {
        let fields: JournalFields = [
            ("INBOX_FILE", arrival.shown), ("INBOX_DELIVERY_ID", arrival.id), ("INBOX_REASON", reason),
            ("INBOX_CONTENT_TYPE", contentType), ("INBOX_REQUESTED_HANDLER", requested),
            ("INBOX_SOURCE_UID", String(arrival.sourceUID)), ("INBOX_PACKAGE", arrival.isPackage ? "1" : nil)]
        guard let failed = state.failed, let staging = state.intake else { return }
        let result = arrival.directory.relocate(arrival.name, file: arrival.file, to: failed, preferred: arrival.cleanName,
                                                via: staging, rejectsTo: failed, sidecar: arrival.agentSidecar) { file, _ in
            arrival.stamp(file)
            ExtendedAttributes(file).write(AgentAttribute.failure, reason)
            return nil
        }
        switch result {
        case .moved(let newName, let copy):
            state.kept(newName, in: .failed, file: copy ?? arrival.file.descriptor)
            copy?.close()
            logger.log(.warning, "Refused \(arrival.shown): \(reason); kept in failed/", event: .rejected,
                       fields: fields + [("INBOX_MOVED_TO", failed.child(newName))])
        case .swapped(let found, let keptAs):
            swapped(arrival, found: found, keptAs: keptAs)
        case .failed where arrival.isPackage && arrival.directory !== staging:
            // A package is not copied to be refused (across filesystems): it is left where it is, recorded once.
            moveAside(arrival.name, from: arrival.directory, kind: .directory, why: reason)
        case .failed(let error), .staged(_, let error):
            logger.log(.warning, "Refused \(arrival.shown): \(reason); cannot move it to failed/: \(error)",
                       event: .rejected, fields: fields)
        case .changed(let change, _), .writer(let change, _):
            // Not asked for (no package move): nothing is compared.
            logger.log(.warning, "Refused \(arrival.shown): \(reason); \(change)", event: .rejected, fields: fields)
        }
    }

    /// A package the agent took into intake/ as `staged` whose tree was not the one checked by then: its sender was
    /// still writing it (`reason`). Recorded as the arrival's and moved to failed/ whole, with its sidecar; one
    /// `rejected` entry.
    func refuse(staged: String, of arrival: Arrival, reason: String) {
        guard let staging = state.intake, let failed = state.failed else { return }
        arrival.stamp(arrival.file.descriptor)
        ExtendedAttributes(arrival.file.descriptor).write(AgentAttribute.failure, reason)
        var movedTo: String?
        if case .success(let newName) = staging.moveUnique(Array(staged.utf8), to: failed, preferred: arrival.cleanName) {
            staging.moveSidecar(of: Array(staged.utf8), to: failed, as: newName)
            state.kept(newName, in: .failed, file: arrival.file.descriptor)
            movedTo = failed.child(newName)
        }
        logger.log(.warning, "Refused \(arrival.shown): \(reason)", event: .rejected, fields: [
            "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_REASON": reason,
            "INBOX_MOVED_TO": movedTo ?? staging.child(staged), "INBOX_SOURCE_UID": String(arrival.sourceUID),
            "INBOX_PACKAGE": "1"])
    }

    /// The arrival's name led elsewhere by the time it was moved: its sender swapped it after the check. Nothing was
    /// delivered; what the name led to is kept in failed/ (`keptAs`). The sender's doing, never a handler's.
    func swapped(_ arrival: Arrival, found: EntryKind?, keptAs: String?) {
        let what = found.map { "a \($0.rawValue)" } ?? "nothing"
        let reason = "its name was swapped for \(what) after it was checked, by its sender (uid \(arrival.sourceUID))"
        if let keptAs, let name = keptAs.split(separator: "/").last { state.kept(String(name), in: .failed, file: nil) }
        logger.log(.warning, "Refused \(arrival.shown): \(reason); nothing delivered", event: .rejected, fields: [
            "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_REASON": reason,
            "INBOX_FILE_KIND": found?.rawValue, "INBOX_MOVED_TO": keptAs, "INBOX_SOURCE_UID": String(arrival.sourceUID)])
    }

    /// A file already placed as `name` in `directory` that must not be delivered after all (its sender opened it for
    /// writing while it was being moved): to failed/ with the reason, as a `rejected` entry.
    func withdraw(_ name: String, from directory: Directory, of arrival: Arrival, reason: String) {
        ExtendedAttributes(arrival.file.descriptor).write(AgentAttribute.failure, reason)
        var movedTo: String?
        if let failed = state.failed, case .success(let newName) = directory.moveUnique(Array(name.utf8), to: failed,
                                                                                         preferred: name) {
            directory.moveSidecar(of: Array(name.utf8), to: failed, as: newName)
            state.kept(newName, in: .failed, file: arrival.file.descriptor)
            movedTo = failed.child(newName)
        }
        logger.log(.warning, "Refused \(arrival.shown): \(reason)", event: .rejected, fields: [
            "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_REASON": reason,
            "INBOX_MOVED_TO": movedTo, "INBOX_SOURCE_UID": String(arrival.sourceUID)])
    }

    /// Gives up on a delivery: the file goes to failed/ with the reason; one `failed` entry.
    func fail(_ delivery: Delivery, reason: String, outcome: DeliveryOutcome?, duration: Duration?, from inbox: Directory?) {
        let movedTo = keep(delivery, reason: reason, from: inbox)
        // How to send it again, in the entry itself: the delivery id names it whatever name it took in failed/.
        let kept = movedTo.map { "; kept as \($0), send it again with: inboxctl retry \(delivery.id)" } ?? ""
        logger.log(.warning, "\(delivery.handler) failed on \(delivery.name): \(reason)\(kept)", event: .failed,
                   fields: delivery.journalFields(file: movedTo) + [
            ("INBOX_EXIT_STATUS", outcome?.exitStatusField), ("INBOX_DURATION_USEC", duration?.microsecondsField),
            ("INBOX_REASON", reason)])
    }

    /// The handler changed what it may only read and delete: the file is kept in failed/ as evidence.
    func violation(_ delivery: Delivery, change: String, outcome: DeliveryOutcome, duration: Duration, from inbox: Directory?) {
        let reason = "its handler changed the Inbox copy: \(change)"
        let movedTo = keep(delivery, reason: "violation: " + reason, from: inbox)
        logger.log(.warning, "\(delivery.handler) modified \(delivery.name), which it may only read and delete",
                   event: .violation, fields: delivery.journalFields(file: movedTo) + [
            ("INBOX_EXIT_STATUS", outcome.exitStatusField), ("INBOX_DURATION_USEC", duration.microsecondsField),
            ("INBOX_REASON", reason)])
    }

    /// Another process than its handler opened the Inbox copy for writing (`reason`): the file goes to failed/ with the
    /// reason, as one `rejected` entry naming its sender; never counted against the handler.
    func withdraw(_ delivery: Delivery, reason: String, outcome: DeliveryOutcome?, duration: Duration?,
                  from inbox: Directory?) {
        let movedTo = keep(delivery, reason: reason, from: inbox)
        logger.log(.warning, "Withdrew \(delivery.name) from \(delivery.handler): \(reason)", event: .rejected,
                   fields: delivery.journalFields(file: movedTo) + [
            ("INBOX_EXIT_STATUS", outcome?.exitStatusField), ("INBOX_DURATION_USEC", duration?.microsecondsField),
            ("INBOX_REASON", reason), ("INBOX_MOVED_TO", movedTo)])
    }

    /// Records `reason` on the Inbox copy and moves it, with its sidecar, to failed/; the new path, or nil.
    private func keep(_ delivery: Delivery, reason: String, from inbox: Directory?) -> String? {
        guard let inbox, let failed = state.failed else { return nil }
        let name = Array(delivery.name.utf8)
        var file: FileDescriptor?
        if case .opened(let opened) = inbox.openDelivered(name, of: delivery) {
            ExtendedAttributes(opened.descriptor).write(AgentAttribute.failure, reason)
            file = opened.descriptor
        }
        defer { file?.close() }
        guard case .success(let newName) = inbox.moveUnique(name, to: failed, preferred: delivery.name) else { return nil }
        inbox.moveSidecar(of: name, to: failed, as: newName)
        state.kept(newName, in: .failed, file: file)
        return failed.child(newName)
    }
}
