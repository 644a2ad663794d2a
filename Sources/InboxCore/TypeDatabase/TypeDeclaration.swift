/// One Uniform Type Identifier with its parents and tags, like an entry of `UTExportedTypeDeclarations`.
public struct TypeDeclaration: Sendable, Hashable {
    /// Where a declaration came from.
    public enum Origin: Sendable, Hashable {
        case builtin
        /// Made from a MIME type that no declaration claims (`dyn.mime.<type>.<subtype>`).
        case dynamic
        case exported(SourceLocation)
        case imported(SourceLocation)

        /// The registration section that declared the type; nil for built-in types.
        public var location: SourceLocation? {
            switch self {
            case .builtin, .dynamic: nil
            case .exported(let location), .imported(let location): location
            }
        }
    }

    /// The reverse-DNS identifier, e.g. `public.png`.
    public var identifier: String
    /// A human-readable name.
    public var description: String
    /// Direct parents in the conformance graph.
    public var conformsTo: [String]
    /// File name extensions, without the dot, lowercase; the first is preferred.
    public var extensions: [String]
    /// MIME types, lowercase; the first is preferred.
    public var mimeTypes: [String]
    /// Built-in or declared by a registration.
    public var origin: Origin

    /// Creates a declaration; extensions and MIME types are normalized to lowercase, extensions lose a leading dot.
    public init(identifier: String, description: String, conformsTo: [String], extensions: [String],
                mimeTypes: [String], origin: Origin) {
        self.identifier = identifier
        self.description = description
        self.conformsTo = conformsTo
        self.extensions = extensions.map { ext in
            let lower = ext.lowercased()
            return lower.hasPrefix(".") ? String(lower.dropFirst()) : lower
        }
        self.mimeTypes = mimeTypes.map { $0.lowercased() }
        self.origin = origin
    }
}
