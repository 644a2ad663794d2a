/// The UTI chosen for a file and how it was found.
public struct ResolvedType: Sendable, Hashable {
    /// Which piece of evidence decided the type (journal field INBOX_TYPE_SOURCE).
    public enum Source: String, Sendable, Hashable {
        case attribute, `extension`, content, fallback
    }

    /// A claim (attribute or name) that the content contradicts.
    public struct Mismatch: Sendable, Hashable {
        /// The type the attribute or the name claimed.
        public let claimed: String
        /// Where the claim came from: `.attribute` or `.extension`.
        public let claimSource: Source
        /// The type the content has.
        public let content: String
        /// True when the content's type was used; false when the claim was kept because the content is text or a
        /// ZIP archive, which cannot disprove a claim.
        public let contentWon: Bool
    }

    /// The chosen UTI.
    public let identifier: String
    /// Where the identifier came from.
    public let source: Source
    /// The MIME type of the chosen UTI, when it has one.
    public let mimeType: String?
    /// The type the content was sniffed as, if sniffing said anything.
    public let contentIdentifier: String?
    /// Set when the claim and the content disagree.
    public let mismatch: Mismatch?
    /// Why better evidence was not used, e.g. an unknown content-type attribute.
    public let diagnostics: [String]

    /// Creates a resolved type.
    public init(identifier: String, source: Source, mimeType: String? = nil, contentIdentifier: String? = nil,
                mismatch: Mismatch? = nil, diagnostics: [String] = []) {
        self.identifier = identifier
        self.source = source
        self.mimeType = mimeType
        self.contentIdentifier = contentIdentifier
        self.mismatch = mismatch
        self.diagnostics = diagnostics
    }
}

/// Works out a file's UTI from its explicit content-type attribute, its name and its content.
///
/// The rule (README "How a file's type is decided"):
/// 1. The claim is the attribute when it names a known type, else what the name says (`TypeDatabase.nameType`).
/// 2. The content is the MIME type libmagic gave, as a UTI. `application/octet-stream` and empty files say nothing;
///    `text/plain` says only "text" (it is compatible with any text type).
/// 3. With only one of them, it decides; with neither, the type is `public.data`.
/// 4. When one conforms to the other they agree and the claim decides, except that an abstract claim (a type with
///    no extension of its own, such as `public.image`) is refined by a content type that conforms to it.
/// 5. When they disagree, the content decides, unless it is text of any kind (plain, JSON, XML, HTML, source code)
///    or a ZIP archive: libmagic's finer kinds of text are guesses, many document types are built on these
///    carriers, and a file is never made a script by its content. Then the claim decides. Either way it is a
///    mismatch.
public enum TypeResolver {
    public typealias Source = ResolvedType.Source

    /// The type given to a file when nothing else is known.
    public static let fallbackIdentifier = "public.data"

    /// Content types that cannot disprove a claim besides text: ZIP archives, which many formats are made of.
    public static let carrierArchives: Set<String> = ["public.zip-archive", "com.pkware.zip-archive"]

    /// Content MIME types that carry no evidence.
    static let uninformativeMIMETypes: Set<String> = [
        "application/octet-stream", "inode/x-empty", "application/x-empty", "inode/empty",
    ]

    /// What the attribute or the name says, before the content is looked at.
    public struct Claim: Sendable, Hashable {
        /// The claimed type, nil when neither the attribute nor the name says anything.
        public let identifier: String?
        /// `.attribute` or `.extension`.
        public let source: Source
        /// Why the attribute was not used, if it was not.
        public let diagnostics: [String]
        /// True for a type without extensions of its own (`public.image`): content may refine it.
        public let isAbstract: Bool

        /// True when libmagic's view of text content could change the decision: there is no claim to keep, or it
        /// is abstract. Otherwise text content (which never disproves a claim, rule 5) needs no classifying.
        public var needsTextClassified: Bool { identifier == nil || isAbstract }
    }

    /// Resolves a file's type. `content` is libmagic's MIME type for the first bytes, nil when not sniffed.
    public static func resolve(explicit: String?, fileName: String, content: String? = nil,
                               in database: TypeDatabase) -> ResolvedType {
        decide(claim(explicit: explicit, fileName: fileName, in: database), content: content, in: database)
    }

    /// The decision (rules 3 to 5) for a claim and libmagic's MIME type of the content (nil when not sniffed).
    public static func decide(_ claim: Claim, content: String?, in database: TypeDatabase) -> ResolvedType {
        let sniffed = content.flatMap { contentType($0, in: database) }
        func result(_ identifier: String, _ source: Source, mismatch: ResolvedType.Mismatch? = nil) -> ResolvedType {
            ResolvedType(identifier: identifier, source: source, mimeType: database.preferredMIMEType(of: identifier),
                         contentIdentifier: sniffed?.identifier, mismatch: mismatch, diagnostics: claim.diagnostics)
        }
        guard let claimed = claim.identifier else {
            if let sniffed { return result(sniffed.identifier, .content) }
            return result(fallbackIdentifier, .fallback)
        }
        guard let sniffed else { return result(claimed, claim.source) }

        if database.conforms(claimed, to: sniffed.compatibleIdentifier) {
            return result(claimed, claim.source)
        }
        if database.conforms(sniffed.identifier, to: claimed) {
            return claim.isAbstract ? result(sniffed.identifier, .content) : result(claimed, claim.source)
        }
        let carrier = carrierArchives.contains(sniffed.identifier) || database.conforms(sniffed.identifier, to: "public.text")
        let mismatch = ResolvedType.Mismatch(claimed: claimed, claimSource: claim.source,
                                             content: sniffed.identifier, contentWon: !carrier)
        return carrier ? result(claimed, claim.source, mismatch: mismatch)
                       : result(sniffed.identifier, .content, mismatch: mismatch)
    }

    /// The attribute's type when it names a known type (or a known MIME type), else the name's.
    /// An empty or all-whitespace attribute counts as absent.
    public static func claim(explicit: String?, fileName: String, in database: TypeDatabase) -> Claim {
        var diagnostics: [String] = []
        func made(_ identifier: String?, _ source: Source) -> Claim {
            let abstract = identifier.map { database.declaration(for: $0)?.extensions.isEmpty ?? true } ?? false
            return Claim(identifier: identifier, source: source, diagnostics: diagnostics, isAbstract: abstract)
        }
        if let explicit, case let trimmed = explicit.trimmingINIWhitespace(), !trimmed.isEmpty {
            if trimmed.utf8.count > MetadataLimits.contentTypeBytes {
                diagnostics.append("content-type attribute is longer than \(MetadataLimits.contentTypeBytes) bytes; "
                    + "using the file name")
            } else if let identifier = database.knownIdentifier(trimmed) {
                return made(identifier, .attribute)
            } else {
                diagnostics.append("content-type attribute '\(trimmed.abbreviated)' is not a known type; "
                    + "using the file name")
            }
        }
        return made(database.nameType(of: fileName)?.identifier, .extension)
    }

    /// libmagic's answer as a UTI; `compatibleIdentifier` is what a claim must conform to to agree with it.
    private static func contentType(_ mimeType: String,
                                    in database: TypeDatabase) -> (identifier: String, compatibleIdentifier: String)? {
        let plain = MIMEDatabase.normalized(mimeType)
        guard !uninformativeMIMETypes.contains(plain), let identifier = database.typeIdentifier(forMIMEType: plain) else {
            return nil
        }
        // "text/plain" from libmagic means "some text": a CSV or Markdown claim agrees with it.
        return (identifier, plain == "text/plain" ? "public.text" : identifier)
    }
}
