import Glibc
import InboxCore

extension Agent {
    /// The file's type from its attribute, its name and, unless ContentSniffing=no, its first bytes
    /// (TypeResolver has the rule). Problems and mismatches are logged here. A failure when the file killed or
    /// stalled the content sniffer: such a file is not delivered (see refuseUnsniffable).
    func resolveType(_ file: OpenedFile, name: String, explicit: String?, shown: String, id: String?,
                     sourceApp: String?, sourceUID: UInt32?) -> Result<ResolvedType, SnifferProcess.Failure> {
        let claim = TypeResolver.claim(explicit: explicit, fileName: name, in: registrations.database)
        var content: String?
        if settings.contentSniffing, let sniffer = liveSniffer() {
            switch sniffer.sniff(file.descriptor, classifyingText: claim.needsTextClassified) {
            case .success(let mimeType):
                content = mimeType
            case .failure(let failure):
                switch failure {
                case .crashed, .timedOut:
                    return .failure(failure)
                case .refused, .unreadable:
                    logger.log(.warning, "Cannot sniff \(shown): \(failure); its name and attribute decide its type",
                               fields: ["INBOX_FILE": shown, "INBOX_DELIVERY_ID": id])
                }
            }
        }
        let resolved = TypeResolver.decide(claim, content: content, in: registrations.database)
        for note in resolved.diagnostics {
            logger.log(.warning, "\(shown): \(note)", fields: ["INBOX_FILE": shown, "INBOX_DELIVERY_ID": id])
        }
        if let mismatch = resolved.mismatch {
            reportMismatch(mismatch, resolved: resolved, content: content, shown: shown, id: id, sourceApp: sourceApp,
                           sourceUID: sourceUID)
        }
        return .success(resolved)
    }

    /// A file that crashed or stalled libmagic is hostile or broken: it goes to failed/ undelivered, with the
    /// reason in its failure attribute, and the sniffer is started again for the next file.
    func refuseUnsniffable(_ name: [UInt8], file: OpenedFile, from directory: Directory, shown: String, id: String,
                           sourceUID: UInt32, failure: SnifferProcess.Failure) {
        if let sniffer, !sniffer.isAlive { restartSniffer() }
        reject(name, file: file, from: directory, shown: shown, id: id, reason: "unsniffable: " + failure.description,
               sourceUID: sourceUID)
    }

    /// A file the agent will not deliver: its reason in its failure attribute, moved to failed/ with its sidecar, one
    /// `rejected` entry. `inboxctl retry` brings it back.
    func reject(_ name: [UInt8], file: OpenedFile, from directory: Directory, shown: String, id: String, reason: String,
                sourceUID: UInt32, contentType: String? = nil, requested: String? = nil) {
        ExtendedAttributes(file.descriptor).write(AgentAttribute.failure, reason)
        switch directory.moveUnique(name, to: failed, preferred: FileNames.sanitized(name)) {
        case .success(let newName):
            directory.moveSidecar(of: name, to: failed, as: newName)
            logger.log(.warning, "Refused \(shown): \(reason); kept in failed/", event: .rejected, fields: [
                "INBOX_FILE": shown, "INBOX_DELIVERY_ID": id, "INBOX_REASON": reason, "INBOX_MOVED_TO": failed.child(newName),
                "INBOX_CONTENT_TYPE": contentType, "INBOX_REQUESTED_HANDLER": requested,
                "INBOX_SOURCE_UID": String(sourceUID)])
        case .failure(let error):
            logger.log(.warning, "Refused \(shown): \(reason); cannot move it to failed/: \(error)", event: .rejected, fields: [
                "INBOX_FILE": shown, "INBOX_DELIVERY_ID": id, "INBOX_REASON": reason, "INBOX_CONTENT_TYPE": contentType,
                "INBOX_REQUESTED_HANDLER": requested, "INBOX_SOURCE_UID": String(sourceUID)])
        }
    }

    /// A claim the content contradicts. When the content won, every such file is a warning: someone named or
    /// labelled it as something it is not. When the claim was kept (the content is text or ZIP, which the claimed
    /// type may well be made of), the pair is reported once per registration load, since declaring the type's
    /// ConformsTo= (e.g. public.json) is the fix and a burst must not flood the journal.
    func reportMismatch(_ mismatch: ResolvedType.Mismatch, resolved: ResolvedType, content: String?, shown: String,
                        id: String?, sourceApp: String?, sourceUID: UInt32?) {
        let claim = mismatch.claimSource == .attribute ? "its content-type attribute says" : "its name says"
        func emit(_ priority: LogPriority, _ message: String) {
            logger.log(priority, message, event: .mismatch, fields: [
                "INBOX_FILE": shown, "INBOX_DELIVERY_ID": id, "INBOX_CONTENT_TYPE": resolved.identifier,
                "INBOX_TYPE_SOURCE": resolved.source.rawValue, "INBOX_CLAIMED_TYPE": mismatch.claimed,
                "INBOX_CLAIM_SOURCE": mismatch.claimSource.rawValue, "INBOX_SNIFFED_TYPE": mismatch.content,
                "INBOX_SNIFFED_MIME_TYPE": content, "INBOX_SOURCE_APP": sourceApp,
                "INBOX_SOURCE_UID": sourceUID.map { String($0) }])
        }
        if mismatch.contentWon {
            emit(.warning, "\(shown): \(claim) \(mismatch.claimed) but the content is \(mismatch.content); "
                 + "typed by its content")
        } else if reportedCarrierMismatches.insert(mismatch.claimed + " " + mismatch.content).inserted {
            emit(.notice, "\(shown): \(claim) \(mismatch.claimed) but the content is \(mismatch.content), which "
                 + "cannot disprove it; kept \(mismatch.claimed). A type made of text or ZIP should say so in ConformsTo= "
                 + "(public.json, public.xml, public.text, public.zip-archive). Not repeated for this pair until the next reload")
        }
    }
}
