/// Chooses the handler for a file's type, the way Launch Services ranks `CFBundleDocumentTypes` claims.
public enum HandlerSelector {
    /// Candidates are document types whose ContentTypes the type conforms to (Rank=None never). Order: preferred in
    /// defaults.conf first, then rank Owner > Default > Alternate, then smaller conformance distance, then handler
    /// identifier ascending.
    public static func select(type: String, registrations: [HandlerRegistration], database: TypeDatabase,
                              preferences: HandlerPreferences) -> Selection {
        let chain = database.conformanceChain(of: type)
        let preferredHandler = chain.lazy.compactMap { preferences.byType[$0] }.first

        var best: [String: Candidate] = [:]
        for registration in registrations {
            for documentType in registration.documentTypes where documentType.rank != .none {
                for contentType in documentType.contentTypes {
                    guard let distance = database.distance(from: type, to: contentType) else { continue }
                    let candidate = Candidate(handler: registration.identifier, documentType: documentType,
                                              matchedType: contentType, distance: distance,
                                              preferred: registration.identifier == preferredHandler)
                    if let current = best[candidate.handler], !isBetter(candidate, than: current) { continue }
                    best[candidate.handler] = candidate
                }
            }
        }
        let candidates = best.values.sorted { a, b in
            if isBetter(a, than: b) { return true }
            if isBetter(b, than: a) { return false }
            return a.handler < b.handler
        }
        guard let first = candidates.first else {
            return Selection(candidates: [], reason: "no handler for \(type)", tieBroken: false)
        }
        guard candidates.count > 1 else {
            return Selection(candidates: candidates, reason: first.preferred ? "preferred in defaults.conf" : "only candidate",
                             tieBroken: false)
        }
        let second = candidates[1]
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
        return Selection(candidates: candidates, reason: reason, tieBroken: reason == "tie broken by identifier")
    }

    /// Strictly better by preference, then rank, then distance; equal candidates are not better.
    private static func isBetter(_ a: Candidate, than b: Candidate) -> Bool {
        if a.preferred != b.preferred { return a.preferred }
        if a.rank != b.rank { return a.rank > b.rank }
        return a.distance < b.distance
    }
}
