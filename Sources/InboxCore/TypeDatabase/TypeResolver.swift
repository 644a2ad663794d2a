/// The UTI chosen for a file and how it was found.
public struct ResolvedType: Sendable, Hashable {
    /// Which piece of evidence decided the type.
    public enum Source: String, Sendable {
        case attribute, `extension`, fallback
    }

    /// The chosen UTI.
    public let identifier: String
    /// Where the identifier came from.
    public let source: Source
    /// Why better evidence was not used, e.g. an unknown content-type attribute.
    public let diagnostics: [String]

    /// Creates a resolved type.
    public init(identifier: String, source: Source, diagnostics: [String] = []) {
        self.identifier = identifier
        self.source = source
        self.diagnostics = diagnostics
    }
}

/// Works out a file's UTI from its explicit content-type attribute and its name.
public enum TypeResolver {
    /// The type given to a file when nothing else is known.
    public static let fallbackIdentifier = "public.data"

    /// explicit `user.inbox.content-type` if it names a known type (or a known MIME type), else the last extension
    /// of fileName, else "public.data" (source .fallback). An empty or all-whitespace attribute counts as absent.
    public static func resolve(explicit: String?, fileName: String, in database: TypeDatabase) -> ResolvedType {
        var diagnostics: [String] = []
        // An empty attribute counts as no attribute.
        if let explicit, case let trimmed = explicit.trimmingINIWhitespace(), !trimmed.isEmpty {
            if trimmed.utf8.count > MetadataLimits.contentTypeBytes {
                diagnostics.append("content-type attribute is longer than \(MetadataLimits.contentTypeBytes) bytes; "
                    + "using the file name")
            } else if database.contains(trimmed) {
                return ResolvedType(identifier: trimmed, source: .attribute)
            } else if let identifier = database.identifier(forMIMEType: trimmed) {
                return ResolvedType(identifier: identifier, source: .attribute)
            } else {
                diagnostics.append("content-type attribute '\(trimmed.abbreviated)' is not a known type; "
                    + "using the file name")
            }
        }
        if let ext = pathExtension(of: fileName), let identifier = database.identifier(forExtension: ext) {
            return ResolvedType(identifier: identifier, source: .extension, diagnostics: diagnostics)
        }
        return ResolvedType(identifier: fallbackIdentifier, source: .fallback, diagnostics: diagnostics)
    }

    /// The text after the last dot of the last path component; nil when there is none or the name starts with it.
    public static func pathExtension(of fileName: String) -> String? {
        let name = fileName.split(separator: "/", omittingEmptySubsequences: true).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : String(ext)
    }
}
