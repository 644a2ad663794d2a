/// Document-type claims by content type, so that choosing a handler walks a file type's ancestors instead of
/// every registration. Built once per registration load. Document types with `NamePatterns=` are kept apart
/// (`patternClaims`): a claim by name depends on the file's name, and a load without any keeps the per-type choice
/// free of them.
public struct SelectionIndex: Sendable {
    /// One `ContentTypes=` entry of one document type (Rank=None is left out: it never opens files).
    struct Claim: Sendable {
        /// Index into `handlers` and `documentTypes`.
        let registration: Int32
        let documentType: Int32
        let rank: HandlerRank
    }

    /// A document type with `NamePatterns=` (Rank=None left out), with the types it narrows them to.
    struct PatternClaim: Sendable {
        let registration: Int32
        let documentType: Int32
        let rank: HandlerRank
        let patterns: [NamePattern]
        /// Empty: any type.
        let contentTypes: Set<String>
    }

    /// Registration identifiers, by registration index.
    let handlers: [String]
    /// Each registration's document types, by registration index.
    let documentTypes: [[DocumentType]]
    private var claimsByType: [String: [Claim]] = [:]
    private var positions: [String: Int32] = [:]
    /// The document types that claim by name, in registration order.
    private(set) var patternClaims: [PatternClaim] = []

    /// Indexes the registrations' document types.
    public init(_ registrations: [HandlerRegistration]) {
        handlers = registrations.map(\.identifier)
        documentTypes = registrations.map(\.documentTypes)
        for (registrationIndex, registration) in registrations.enumerated() {
            positions[registration.identifier] = Int32(registrationIndex)
            for (typeIndex, documentType) in registration.documentTypes.enumerated() where documentType.rank != .none {
                if !documentType.namePatterns.isEmpty {
                    patternClaims.append(PatternClaim(
                        registration: Int32(registrationIndex), documentType: Int32(typeIndex), rank: documentType.rank,
                        patterns: documentType.namePatterns, contentTypes: Set(documentType.contentTypes)))
                    continue
                }
                for contentType in documentType.contentTypes {
                    claimsByType[contentType, default: []].append(Claim(
                        registration: Int32(registrationIndex), documentType: Int32(typeIndex), rank: documentType.rank))
                }
            }
        }
    }

    /// True if some document type claims by name: only then does a file's name take part in choosing its handler.
    public var hasNamePatterns: Bool { !patternClaims.isEmpty }

    /// True if a name pattern of some document type matches the name (lowercased, `NamePattern.matches(lowercased:)`).
    public func anyPatternMatches(lowercased name: String) -> Bool {
        let scalars = Array(name.unicodeScalars)
        return patternClaims.contains { claim in claim.patterns.contains { $0.matches(scalars: scalars) } }
    }

    /// The claims naming exactly this type.
    func claims(on type: String) -> [Claim] {
        claimsByType[type] ?? []
    }

    /// The index of a registration, by identifier (for defaults.conf preferences).
    func registration(_ identifier: String) -> Int32? {
        positions[identifier]
    }
}
