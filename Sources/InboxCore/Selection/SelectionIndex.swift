/// Document-type claims by content type, so that choosing a handler walks a file type's ancestors instead of
/// every registration. Built once per registration load.
public struct SelectionIndex: Sendable {
    /// One `ContentTypes=` entry of one document type (Rank=None is left out: it never opens files).
    struct Claim: Sendable {
        /// Index into `handlers` and `documentTypes`.
        let registration: Int32
        let documentType: Int32
        let rank: HandlerRank
    }

    /// Registration identifiers, by registration index.
    let handlers: [String]
    /// Each registration's document types, by registration index.
    let documentTypes: [[DocumentType]]
    private var claimsByType: [String: [Claim]] = [:]
    private var positions: [String: Int32] = [:]

    /// Indexes the registrations' document types.
    public init(_ registrations: [HandlerRegistration]) {
        handlers = registrations.map(\.identifier)
        documentTypes = registrations.map(\.documentTypes)
        for (registrationIndex, registration) in registrations.enumerated() {
            positions[registration.identifier] = Int32(registrationIndex)
            for (typeIndex, documentType) in registration.documentTypes.enumerated() where documentType.rank != .none {
                for contentType in documentType.contentTypes {
                    claimsByType[contentType, default: []].append(Claim(
                        registration: Int32(registrationIndex), documentType: Int32(typeIndex), rank: documentType.rank))
                }
            }
        }
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
