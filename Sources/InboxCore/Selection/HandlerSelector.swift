/// Chooses the handler for a file's type, the way Launch Services ranks `CFBundleDocumentTypes` claims.
public enum HandlerSelector {
    /// Candidates are document types whose ContentTypes the type conforms to (Rank=None never). Order: preferred in
    /// defaults.conf first, then rank Owner > Default > Alternate, then smaller conformance distance, then handler
    /// identifier ascending.
    public static func select(type: String, registrations: [HandlerRegistration], database: TypeDatabase,
                              preferences: HandlerPreferences) -> Selection {
        select(type: type, index: SelectionIndex(registrations), database: database, preferences: preferences)
    }

    /// How much of the ranking a caller needs.
    public enum Ranking: Sendable {
        /// Every candidate, best first (the "Open In" list).
        case all
        /// The chosen one, any that tie with it and the runner-up: what dispatching needs, without sorting them all.
        case best
    }

    /// The same, through an index built once per registration load: the cost is the type's conformance chain and
    /// the claims on it, not the number of registrations. With `role`, only document types of that role count
    /// (`inboxctl preview` asks for viewers).
    public static func select(type: String, index: SelectionIndex, database: TypeDatabase,
                              preferences: HandlerPreferences, ranking: Ranking = .all, role: HandlerRole? = nil) -> Selection {
        let ancestors = database.ancestorsByDistance(of: type)
        let preferredHandler = ancestors.lazy.compactMap { preferences.byType[$0.identifier] }.first
        let preferred = preferredHandler.flatMap { index.registration($0) }

        // Per registration, its best claim, compared by plain integers; Candidate values only for the winners.
        struct Best {
            var claim: SelectionIndex.Claim
            var contentType: String
            var distance: Int
        }
        var bestByRegistration: [Int32: Best] = [:]
        for (contentType, distance) in ancestors {
            for claim in index.claims(on: contentType) {
                if let role, index.documentTypes[Int(claim.registration)][Int(claim.documentType)].role != role { continue }
                if let current = bestByRegistration[claim.registration],
                   current.claim.rank > claim.rank || (current.claim.rank == claim.rank && current.distance <= distance) {
                    continue
                }
                bestByRegistration[claim.registration] = Best(claim: claim, contentType: contentType, distance: distance)
            }
        }
        func candidate(_ entry: Best) -> Candidate {
            Candidate(handler: index.handlers[Int(entry.claim.registration)],
                      documentType: index.documentTypes[Int(entry.claim.registration)][Int(entry.claim.documentType)],
                      matchedType: entry.contentType, distance: entry.distance,
                      preferred: entry.claim.registration == preferred)
        }
        let ordered: (Candidate, Candidate) -> Bool = { a, b in
            if isBetter(a, than: b) { return true }
            if isBetter(b, than: a) { return false }
            return a.handler < b.handler
        }
        switch ranking {
        case .all:
            let candidates = bestByRegistration.values.map(candidate).sorted(by: ordered)
            return Selection(candidates: candidates, type: type,
                             second: candidates.count > 1 ? candidates[1] : nil)
        case .best:
            // Without making and sorting every candidate: compare plain integers, then make the best, those that tie
            // with it, and the runner-up.
            func key(_ entry: Best) -> (Bool, HandlerRank, Int) {
                (entry.claim.registration == preferred, entry.claim.rank, entry.distance)
            }
            func stronger(_ a: Best, _ b: Best) -> Bool {
                let (ka, kb) = (key(a), key(b))
                if ka.0 != kb.0 { return ka.0 }
                if ka.1 != kb.1 { return ka.1 > kb.1 }
                return ka.2 < kb.2
            }
            let entries = Array(bestByRegistration.values)
            guard let strongest = entries.min(by: stronger) else {
                return Selection(candidates: [], type: type, second: nil)
            }
            let tied = entries.filter { !stronger(strongest, $0) }.map(candidate).sorted(by: ordered)
            if tied.count > 1 { return Selection(candidates: tied, type: type, second: tied[1]) }
            let rest = entries.filter { stronger(strongest, $0) }
            let runnerUp = rest.min(by: stronger).map { top in
                rest.filter { !stronger(top, $0) }.map(candidate).min(by: ordered) ?? candidate(top)
            }
            return Selection(candidates: tied + (runnerUp.map { [$0] } ?? []), type: type, second: runnerUp)
        }
    }

    /// Strictly better by preference, then rank, then distance; equal candidates are not better.
    private static func isBetter(_ a: Candidate, than b: Candidate) -> Bool {
        if a.preferred != b.preferred { return a.preferred }
        if a.rank != b.rank { return a.rank > b.rank }
        return a.distance < b.distance
    }
}
