import InboxCore

/// The one way a file is typed and its handler decided, whoever asks: an arrival routed the first time, one a retry
/// takes again, a file recovery finds in a container. A dropped file is leased first (the content typed must be the
/// content delivered). The type comes from the `TypeInspector`, with one fallback (a
/// file that crashes or stalls the content sniffer is refused, whenever that happens), and the decision from `Routing`
/// over the same inputs: the name the file was dropped as (`Arrival.cleanName`), its content-type attribute, the
/// sender's request and the binding of the Inbox it came from. What the inspection and the decision found worth
/// saying is logged here, the once-per-catalog notices included.
final class ArrivalTyping {
    /// What typing found: the type, and where the routing decision sends the file.
    struct Typed {
        let type: ResolvedType
        var decision: Routing.Decision
        /// The binding of the drop Inbox the file came from (nil when it is not bound).
        let binding: Routing.Binding?
        /// The file's read lease is held (through its descriptor, so until the arrival is closed): once the file is
        /// placed, a broken lease means its sender opened it for writing meanwhile.
        let leased: Bool
    }

    enum Outcome {
        case typed(Typed)
        /// Its sender has it open for writing: not typed, since its content could still change.
        case busy
        /// The file crashed or stalled the content sniffer: refused with `reason`, never delivered.
        case unsniffable(reason: String)
    }

    private let logger: Logger
    private let inspector: TypeInspector
    private(set) var catalog: HandlerCatalog
    /// Mismatches where the claim was kept, each reported once per catalog (see `report(_:of:)`).
    private var reportedCarrierMismatches: Set<String> = []
    /// Types whose choice was a tie broken by identifier, reported once per catalog: the choice depends on the
    /// registrations alone, and so does the notice.
    private var reportedTies: Set<String> = []

    init(logger: Logger, inspector: TypeInspector, catalog: HandlerCatalog) {
        self.logger = logger
        self.inspector = inspector
        self.catalog = catalog
    }

    func use(_ catalog: HandlerCatalog) {
        self.catalog = catalog
        reportedCarrierMismatches.removeAll()
        reportedTies.removeAll()
    }

    /// The arrival's type and where it goes.
    func type(_ arrival: Arrival) -> Outcome {
        var leased = false
        let type: ResolvedType
        if let package = arrival.package {
            // A package takes no lease (a directory has none): its checked tree stands for one, compared again once
            // it is the agent's. Typed by its name and its top-level entries (a format's marker), never sniffed.
            let inspection = inspector.inspectPackage(name: arrival.cleanName, explicit: arrival.metadata.contentType,
                                                      manifest: package, in: catalog.database)
            report(inspection.resolved, sniffFailure: nil, sniffedMIMEType: nil, of: arrival)
            type = inspection.resolved
        } else {
            // With a read lease nobody can open the file for writing unnoticed, and while somebody has it open so,
            // no lease is had (fcntl(2), Leases). A file the agent holds is the agent's: nobody else can open it.
            if arrival.origin == .dropped {
                switch arrival.file.descriptor.takeReadLease() {
                case .held:
                    leased = true
                case .busy:
                    return .busy
                case .unavailable:
                    break  // not the owner and no CAP_LEASE: as stable as its sender leaves it (README, Security model)
                }
            }
            switch inspector.inspect(arrival.file.descriptor, name: arrival.cleanName,
                                     explicit: arrival.metadata.contentType, in: catalog.database,
                                     needs: catalog.contentNeeds) {
            case .failure(let failure):
                return .unsniffable(reason: "unsniffable: " + failure.description)
            case .success(let inspection):
                report(inspection.resolved, sniffFailure: inspection.sniffFailure,
                       sniffedMIMEType: inspection.sniffedMIMEType, of: arrival)
                type = inspection.resolved
            }
        }
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
        if case .deliver(let handler, let chosenBy, let tied) = decision {
            report(handler, chosenBy: chosenBy, tied: tied, of: arrival, type: type.identifier)
        }
        return .typed(Typed(type: type, decision: decision, binding: binding, leased: leased))
    }

    /// Every candidate for a typed arrival, best first, as the routing decision ranked them (`ChooseHandler=ask`).
    func candidates(_ arrival: Arrival, _ typed: Typed) -> [String] {
        catalog.candidates(for: Routing.Subject(type: typed.type.identifier,
                                                name: catalog.hasNamePatterns ? arrival.cleanName : nil,
                                                binding: typed.binding)).candidates.map(\.handler)
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

    /// A sender's override of the type check, and a tie broken by identifier (once per type and catalog).
    private func report(_ handler: String, chosenBy: Delivery.ChosenBy, tied: [String], of arrival: Arrival,
                        type: String) {
        if chosenBy == .senderOverride {
            logger.log(.notice, "Delivering \(arrival.shown) (\(type)) to \(handler), which does not claim "
                       + "that type, as its sender (uid \(arrival.sourceUID)) asked", fields: [
                "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_HANDLER": handler,
                "INBOX_CONTENT_TYPE": type])
        }
        if !tied.isEmpty && reportedTies.insert(type).inserted {
            logger.log(.notice, "Several handlers tie for \(type); chose \(handler) by identifier. "
                       + "Not repeated for this type until the next reload",
                       fields: ["INBOX_CONTENT_TYPE": type, "INBOX_HANDLER": handler,
                                "INBOX_CANDIDATES": tied.joined(separator: " ")])
        }
    }

    /// What the inspection found worth saying: a sniffer that could not read the file, the resolver's notes, and a
    /// claim the content contradicts. When the content won, every such file is a warning: someone named or labelled
    /// it as something it is not. When the claim was kept (the content is text or ZIP, which the claimed type may well
    /// be made of), the pair is reported once per catalog, since declaring the type's ConformsTo= is the fix and a
    /// burst must not flood the journal.
    private func report(_ resolved: ResolvedType, sniffFailure: SnifferProcess.Failure?, sniffedMIMEType: String?,
                        of arrival: Arrival) {
        let shown = arrival.shown, id = arrival.id
        if let failure = sniffFailure {
            logger.log(.warning, "Cannot sniff \(shown): \(failure); its name and attribute decide its type",
                       fields: ["INBOX_FILE": shown, "INBOX_DELIVERY_ID": id])
        }
        for note in resolved.diagnostics {
            logger.log(.warning, "\(shown): \(note)", fields: ["INBOX_FILE": shown, "INBOX_DELIVERY_ID": id])
        }
        guard let mismatch = resolved.mismatch else { return }
        let fields: JournalFields = [
            ("INBOX_FILE", shown), ("INBOX_DELIVERY_ID", id), ("INBOX_CONTENT_TYPE", resolved.identifier),
            ("INBOX_TYPE_SOURCE", resolved.source.rawValue), ("INBOX_CLAIMED_TYPE", mismatch.claimed),
            ("INBOX_CLAIM_SOURCE", mismatch.claimSource.rawValue), ("INBOX_SNIFFED_TYPE", mismatch.content),
            ("INBOX_SNIFFED_MIME_TYPE", sniffedMIMEType), ("INBOX_SOURCE_APP", arrival.metadata.sourceApp),
            ("INBOX_SOURCE_UID", String(arrival.sourceUID))]
        let statement = "\(shown): \(TypeInspector.statement(of: mismatch))"
        if mismatch.contentWon {
            logger.log(.warning, "\(statement); \(TypeInspector.verdict(of: mismatch))", event: .mismatch, fields: fields)
        } else if reportedCarrierMismatches.insert(mismatch.claimed + " " + mismatch.content).inserted {
            logger.log(.notice, "\(statement), which cannot disprove it; kept \(mismatch.claimed). A type made of text or "
                       + "ZIP should say so in ConformsTo= (public.json, public.xml, public.text, public.zip-archive). "
                       + "Not repeated for this pair until the next reload", event: .mismatch, fields: fields)
        }
    }
}
