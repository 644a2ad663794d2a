/// Identifiers for MIME types that no declaration claims, like Apple's `dyn.` identifiers but readable and
/// reversible: `application/vnd.sqlite3` is `dyn.mime.application.vnd.sqlite3` (a media type has no dot).
public enum DynamicType {
    /// The common prefix of dynamic identifiers.
    public static let prefix = "dyn.mime."

    /// The dynamic identifier of a canonical MIME type.
    public static func identifier(for mimeType: String) -> String {
        prefix + mimeType.replacing("/", with: ".", maxReplacements: 1)
    }

    /// The MIME type a dynamic identifier stands for; nil for anything else.
    public static func mimeType(of identifier: String) -> String? {
        guard identifier.hasPrefix(prefix) else { return nil }
        let rest = identifier.dropFirst(prefix.count)
        guard let dot = rest.firstIndex(of: ".") else { return nil }
        let mime = rest[..<dot] + "/" + rest[rest.index(after: dot)...]
        return MIMEDatabase.isMIMEType(mime) && mime == mime.lowercased() ? String(mime) : nil
    }

    /// The built-in abstract type a media type belongs to, whatever the subtype.
    static func family(of mimeType: String) -> String? {
        switch mimeType.prefix(while: { $0 != "/" }) {
        case "image": "public.image"
        case "audio": "public.audio"
        case "video": "public.movie"
        case "font": "public.font"
        case "text": "public.plain-text"
        case "message": "public.message"
        case "model": "public.3d-content"
        default: nil
        }
    }
}

/// What a file name says: the UTI, the MIME type behind it when known, and the extension or glob that matched.
public struct NameType: Sendable, Hashable {
    public let identifier: String
    public let mimeType: String?
    public let match: String
}

/// Every type a file name allows, most likely first (`TypeDatabase.nameCandidates`).
public struct NameCandidates: Sendable, Hashable {
    public let types: [NameType]
    /// True when globs of equal weight and length name different types: the content decides between them.
    public let isTie: Bool
}
