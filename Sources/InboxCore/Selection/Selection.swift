/// One handler that can open a file, through its best-matching document type.
public struct Candidate: Sendable, Hashable {
    /// The registration identifier.
    public let handler: String
    /// The document type that matched best.
    public let documentType: DocumentType
    /// The ContentTypes entry that matched.
    public let matchedType: String
    /// Conformance distance from the file's type to matchedType.
    public let distance: Int
    /// True if defaults.conf names this handler for the file's type or its nearest listed ancestor.
    public let preferred: Bool
    /// The `NamePatterns=` word that matched the file's name, when the document type claims it by name.
    public var namePattern: String?

    /// Creates a candidate.
    public init(handler: String, documentType: DocumentType, matchedType: String, distance: Int, preferred: Bool) {
        self.handler = handler
        self.documentType = documentType
        self.matchedType = matchedType
        self.distance = distance
        self.preferred = preferred
    }

    /// The document type's rank.
    public var rank: HandlerRank { documentType.rank }
}

/// The ranked handlers for a file's type and why the first one won.
public struct Selection: Sendable, Hashable {
    /// Best first; one per handler (its best document type).
    public let candidates: [Candidate]
    /// The handler to launch, if any.
    public var chosen: Candidate? { candidates.first }
    /// A short phrase: "name matches *.invoice.pdf", "preferred in defaults.conf", "rank Owner", "more specific type
    /// public.png", "tie broken by identifier", "only candidate", "no handler for public.data", or what an Inbox's
    /// binding decided (`Routing.select`).
    public let reason: String
    /// True when the top two were equal in preference, rank and distance.
    public let tieBroken: Bool

    /// Creates a selection.
    public init(candidates: [Candidate], reason: String, tieBroken: Bool) {
        self.candidates = candidates
        self.reason = reason
        self.tieBroken = tieBroken
    }

    /// A selection whose reason compares the first candidate with the runner-up.
    init(candidates: [Candidate], type: String, second: Candidate?) {
        guard let first = candidates.first else {
            self.init(candidates: [], reason: "no handler for \(type)", tieBroken: false)
            return
        }
        // A claim by name comes before every claim by type; between two of a kind, the order below decides.
        let byName = first.namePattern.map { "name matches \($0)" }
        if let byName, second?.namePattern == nil {
            self.init(candidates: candidates, reason: byName, tieBroken: false)
            return
        }
        guard let second else {
            self.init(candidates: candidates, reason: first.preferred ? "preferred in defaults.conf" : "only candidate",
                      tieBroken: false)
            return
        }
        let reason: String
        if first.preferred != second.preferred {
            reason = "preferred in defaults.conf"
        } else if first.rank != second.rank {
            reason = "rank \(first.rank.name)"
        } else if first.distance != second.distance {
            reason = "more specific type \(first.matchedType)"
        } else {
            reason = "tie broken by identifier"
        }
        self.init(candidates: candidates, reason: byName.map { "\($0), then \(reason)" } ?? reason,
                  tieBroken: reason == "tie broken by identifier")
    }
}
