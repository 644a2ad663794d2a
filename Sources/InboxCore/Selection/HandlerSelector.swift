/// Chooses the handler for a file's type (and name), the way Launch Services ranks `CFBundleDocumentTypes` claims.
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
    ///
    /// With `name`, document types with `NamePatterns=` take part: one whose pattern matches the name (and whose
    /// ContentTypes=, if any, the type conforms to) claims the file by name, and every claim by name comes before
    /// every claim by type alone; among claims of the same kind, the order above. With `only`, the one registration
    /// of that identifier is the only candidate (an Inbox bound to it, `Routing`).
    public static func select(type: String, name: String? = nil, index: SelectionIndex, database: TypeDatabase,
                              preferences: HandlerPreferences, ranking: Ranking = .all, role: HandlerRole? = nil,
                              only: String? = nil) -> Selection {
        var restriction: Int32?
        if let only {
            guard let registration = index.registration(only) else { return Selection(candidates: [], type: type, second: nil) }
            restriction = registration
        }
        let ancestors = database.ancestorsByDistance(of: type)
        let preferredHandler = ancestors.lazy.compactMap { preferences.byType[$0.identifier] }.first
        let preferred = preferredHandler.flatMap { index.registration($0) }

        // Per registration, its best claim, compared by plain integers; Candidate values only for the winners.
        struct Best {
            var registration: Int32
            var documentType: Int32
            var rank: HandlerRank
            var contentType: String
            var distance: Int
            var pattern: NamePattern?
        }
        var bestByRegistration: [Int32: Best] = [:]
        func consider(_ entry: Best) {
            if let current = bestByRegistration[entry.registration] {
                let (currentByName, byName) = (current.pattern != nil, entry.pattern != nil)
                if currentByName != byName {
                    if currentByName { return }
                } else if current.rank > entry.rank || (current.rank == entry.rank && current.distance <= entry.distance) {
                    return
                }
            }
            bestByRegistration[entry.registration] = entry
        }
        for (contentType, distance) in ancestors {
            for claim in index.claims(on: contentType) {
                if let restriction, claim.registration != restriction { continue }
                if let role, index.documentTypes[Int(claim.registration)][Int(claim.documentType)].role != role { continue }
                consider(Best(registration: claim.registration, documentType: claim.documentType, rank: claim.rank,
                              contentType: contentType, distance: distance))
            }
        }
        if let name, index.hasNamePatterns {
            let scalars = Array(name.lowercased().unicodeScalars)
            for claim in index.patternClaims {
                if let restriction, claim.registration != restriction { continue }
                if let role, index.documentTypes[Int(claim.registration)][Int(claim.documentType)].role != role { continue }
                guard let pattern = claim.patterns.first(where: { $0.matches(scalars: scalars) }) else { continue }
                // Without ContentTypes= any type will do: matched as the farthest ancestor (public.item, usually).
                let match = claim.contentTypes.isEmpty ? ancestors.last
                    : ancestors.first { claim.contentTypes.contains($0.identifier) }
                guard let match else { continue }
                consider(Best(registration: claim.registration, documentType: claim.documentType, rank: claim.rank,
                              contentType: match.identifier, distance: match.distance, pattern: pattern))
            }
        }
        func candidate(_ entry: Best) -> Candidate {
            var candidate = Candidate(handler: index.handlers[Int(entry.registration)],
                                      documentType: index.documentTypes[Int(entry.registration)][Int(entry.documentType)],
                                      matchedType: entry.contentType, distance: entry.distance,
                                      preferred: entry.registration == preferred)
            candidate.namePattern = entry.pattern?.text
            return candidate
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
            func key(_ entry: Best) -> (Bool, Bool, HandlerRank, Int) {
                (entry.pattern != nil, entry.registration == preferred, entry.rank, entry.distance)
            }
            func stronger(_ a: Best, _ b: Best) -> Bool {
                let (ka, kb) = (key(a), key(b))
                if ka.0 != kb.0 { return ka.0 }
                if ka.1 != kb.1 { return ka.1 }
                if ka.2 != kb.2 { return ka.2 > kb.2 }
                return ka.3 < kb.3
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

    /// Strictly better by name, then preference, then rank, then distance; equal candidates are not better.
    private static func isBetter(_ a: Candidate, than b: Candidate) -> Bool {
        if (a.namePattern != nil) != (b.namePattern != nil) { return a.namePattern != nil }
        if a.preferred != b.preferred { return a.preferred }
        if a.rank != b.rank { return a.rank > b.rank }
        return a.distance < b.distance
    }
}
