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
        /// True when the claim lost: to the content's type, or to another type its name allows (`decided`); false
        /// when the claim was kept (text content against a claim that can be text, a ZIP archive, a sibling).
        public let contentWon: Bool
        /// The type the file was given.
        public let decided: String
    }

    /// The chosen UTI.
    public let identifier: String
    /// Where the identifier came from.
    public let source: Source
    /// The MIME type found for the file: libmagic's (in the host's names) when the content decided, the attribute's or
    /// the matching glob's when the claim did, else the chosen UTI's preferred one; nil when it has none.
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
/// The rule (README "How a file's type and handler are chosen"):
/// 1. The claim is the attribute when it names a known type, else what the name says (`TypeDatabase.nameCandidates`:
///    the most likely type first, the others the name allows after it).
/// 2. The content is the MIME type libmagic gave, in the host's names, as a UTI. `application/octet-stream` and
///    empty files say nothing; `text/plain` says only "text" (it is compatible with any text type).
/// 3. With only one of them, it decides; with neither, the type is `public.data`.
/// 4. When one conforms to the other, or the content is a generic container (OLE2, ZIP, gzip, MPEG-4) that the
///    claim is a kind of, they agree and the claim decides, except that an abstract claim (a type with no extension
///    of its own, such as `public.image`) is refined by a content type that conforms to it, and any claim by a
///    subtype of its MIME type that shared-mime-info's magic rules named (not a script or an executable).
/// 5. A tie between equally good globs (`*.m`, `*.dot`) goes to the one the content names exactly, else to the first
///    of them the content agrees with.
/// 6. When they disagree: two kinds of an OLE2, MPEG-4 or Ogg container (an MS Works `.xlr` that libmagic calls
///    Excel) keep the name's, the more specific evidence. Text content overturns a claim whose type cannot be text (an image, a
///    video, an archive, a binary document: `.ts` TypeScript is no MPEG stream) in favour of the first type the
///    name allows that can be text, else the content's; against a claim that can be text it proves nothing (many
///    formats are made of text and libmagic's kinds of text are guesses), and neither does a ZIP archive: the claim
///    decides. Any other content decides. Each of these is a mismatch.
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
        /// The MIME type behind the claim: the attribute's when it named one, the glob's that matched the name, or
        /// the claimed type's preferred one.
        public let mimeType: String?
        /// The other types the name allows, most likely first.
        public let alternatives: [NameType]
        /// True when globs of equal weight name different types: the content settles it.
        public let isTie: Bool
        /// True when the claimed type's files cannot be text, so that text content overturns it.
        public let cannotBeText: Bool
        /// True when shared-mime-info's rules could refine the claim with a kind of text (rule 4: a PGP key named
        /// `.asc`, an RSS feed named `.xml`, Python 3 named `.py`). False for a plain-text claim whose name no glob of
        /// any weight gives another type (`notes.txt`): every kind of text descends from plain text, so refining it
        /// would be classifying the text, which such a claim does not need (rule 5), and the sniffer need not show
        /// its text to the rules at all. `.asc` (plain text at weight 50; PGP keys, signatures at 10) is refined.
        public let refinableAsText: Bool

        /// True when libmagic's view of text content could change the decision: there is no claim to keep, it is
        /// abstract, it is a tie, or it cannot be text. Otherwise text content (which does not disprove a claim that
        /// can be text, rule 6) needs no classifying.
        public var needsTextClassified: Bool { identifier == nil || isAbstract || isTie || cannotBeText }

        /// True when libmagic's naming of binary content that shared-mime-info's rules do not name could change the
        /// decision: there is no claim, it is abstract, or it is a tie. A concrete claim stands against content
        /// that only libmagic's database names (rule 3 for "some data"), so that search is not needed for it.
        public var needsBinaryNamed: Bool { identifier == nil || isAbstract || isTie }
    }

    /// Resolves a file's type. `content` is libmagic's MIME type for the first bytes, nil when not sniffed.
    public static func resolve(explicit: String?, fileName: String, content: String? = nil,
                               in database: TypeDatabase) -> ResolvedType {
        decide(claim(explicit: explicit, fileName: fileName, in: database), content: content, in: database)
    }

    /// The decision (rules 3 to 6) for a claim and the content's MIME type (nil when not sniffed). `contentByRules`:
    /// shared-mime-info's magic rules named the content (not libmagic), so that it may refine the claim (rule 4).
    public static func decide(_ claim: Claim, content: String?, contentByRules: Bool = false,
                              in database: TypeDatabase) -> ResolvedType {
        let sniffed = content.flatMap { contentType($0, in: database) }
        func result(_ identifier: String, _ source: Source, _ mimeType: String?,
                    mismatch: ResolvedType.Mismatch? = nil) -> ResolvedType {
            ResolvedType(identifier: identifier, source: source,
                         mimeType: mimeType ?? database.preferredMIMEType(of: identifier),
                         contentIdentifier: sniffed?.identifier, mismatch: mismatch, diagnostics: claim.diagnostics)
        }
        guard let claimed = claim.identifier else {
            if let sniffed { return result(sniffed.identifier, .content, sniffed.mimeType) }
            return result(fallbackIdentifier, .fallback, nil)
        }
        guard let sniffed else { return result(claimed, claim.source, claim.mimeType) }

        // A tie that the content names exactly (`*.djvu`: single or multi-page; `*.json`: JSON or a JSON schema).
        if claim.isTie, claimed != sniffed.identifier,
           let named = claim.alternatives.first(where: { $0.identifier == sniffed.identifier }) {
            return result(named.identifier, claim.source, named.mimeType)
        }
        // A tie of MIME types one UTI lists both of (`*.m3u`: MP3 or HTTP Live Streaming playlists): the content's.
        if claim.isTie, claimed == sniffed.identifier {
            return result(claimed, claim.source, sniffed.mimeType)
        }
        if agrees(claimed, sniffed, in: database) {
            if claim.isAbstract && !database.conforms(claimed, to: sniffed.compatibleIdentifier)
                && database.conforms(sniffed.identifier, to: claimed) {
                return result(sniffed.identifier, .content, sniffed.mimeType)
            }
            if contentByRules, refines(sniffed, claim, in: database) {
                // The same UTI for both (Ogg audio and Vorbis in Ogg): the claim's, with the content's MIME type.
                return result(sniffed.identifier, sniffed.identifier == claimed ? claim.source : .content, sniffed.mimeType)
            }
            return result(claimed, claim.source, claim.mimeType)
        }
        if claim.isTie, let settled = claim.alternatives.first(where: { agrees($0.identifier, sniffed, in: database) }) {
            return result(settled.identifier, claim.source, settled.mimeType)
        }
        func mismatch(contentWon: Bool, decided: String? = nil) -> ResolvedType.Mismatch {
            ResolvedType.Mismatch(claimed: claimed, claimSource: claim.source, content: sniffed.identifier,
                                  contentWon: contentWon,
                                  decided: decided ?? (contentWon ? sniffed.identifier : claimed))
        }
        if database.sharedContainer(claimed, sniffed.identifier) != nil {
            return result(claimed, claim.source, claim.mimeType, mismatch: mismatch(contentWon: false))
        }
        if database.conforms(sniffed.identifier, to: "public.text") {
            guard claim.cannotBeText else {
                return result(claimed, claim.source, claim.mimeType, mismatch: mismatch(contentWon: false))
            }
            let textual = claim.alternatives.filter { !database.cannotBeText($0.identifier) }
            if let named = textual.first(where: { agrees($0.identifier, sniffed, in: database) }) ?? textual.first {
                return result(named.identifier, claim.source, named.mimeType,
                              mismatch: mismatch(contentWon: true, decided: named.identifier))
            }
            return result(sniffed.identifier, .content, sniffed.mimeType, mismatch: mismatch(contentWon: true))
        }
        if carrierArchives.contains(sniffed.identifier) {
            return result(claimed, claim.source, claim.mimeType, mismatch: mismatch(contentWon: false))
        }
        return result(sniffed.identifier, .content, sniffed.mimeType, mismatch: mismatch(contentWon: true))
    }

    /// True when shared-mime-info's rules name a subtype of the claim's MIME type in the host's hierarchy (`.ogg` and
    /// Vorbis audio, `.xml` and an RSS feed, `.asc` and a PGP key), as GLib prefers it; not a generic container's
    /// (ZIP, OLE2, gzip ...: their names decide, as before); never a script or an
    /// executable unless the claim is one (a name that can be text is never overturned towards a script).
    static func refines(_ sniffed: ContentType, _ claim: Claim, in database: TypeDatabase) -> Bool {
        guard claim.refinableAsText, let claimed = claim.identifier, let claimMIME = claim.mimeType,
              database.mime.canonical(sniffed.mimeType) != database.mime.canonical(claimMIME),
              database.mime.descends(sniffed.mimeType, from: claimMIME),
              // A generic container's name keeps a kind of it (an EPUB named .zip stays a ZIP archive).
              database.container(named: claimMIME) == nil else { return false }
        // A script (or an executable) only refines a claim that is one already (Python to Python 3).
        return ["public.script", "public.executable"].allSatisfy { kind in
            !database.conforms(sniffed.identifier, to: kind) || database.conforms(claimed, to: kind)
        }
    }

    /// True when a claimed type and the content agree: one conforms to the other, or the content is a generic
    /// container the claim is a kind of.
    static func agrees(_ claimed: String, _ sniffed: ContentType, in database: TypeDatabase) -> Bool {
        if database.conforms(claimed, to: sniffed.compatibleIdentifier) { return true }
        if database.conforms(sniffed.identifier, to: claimed) { return true }
        if let container = database.container(named: sniffed.mimeType) {
            return database.isKind(claimed, ofContainer: container)
        }
        return false
    }

    /// The attribute's type when it names a known type (or a known MIME type), else the name's.
    /// An empty or all-whitespace attribute counts as absent.
    public static func claim(explicit: String?, fileName: String, in database: TypeDatabase) -> Claim {
        var diagnostics: [String] = []
        func made(_ identifier: String?, _ source: Source, mimeType: String?, alternatives: [NameType] = [],
                  isTie: Bool = false) -> Claim {
            let abstract = identifier.map { database.declaration(for: $0)?.extensions.isEmpty ?? true } ?? false
            let claimedMIME = mimeType ?? identifier.flatMap(database.preferredMIMEType(of:))
            let refinable = claimedMIME.map { database.mime.canonical($0) != "text/plain" } ?? true
                || database.mime.allTypes(fileName: fileName).contains { $0 != "text/plain" }
            return Claim(identifier: identifier, source: source, diagnostics: diagnostics, isAbstract: abstract,
                         mimeType: claimedMIME, alternatives: alternatives, isTie: isTie,
                         cannotBeText: identifier.map(database.cannotBeText) ?? false, refinableAsText: refinable)
        }
        if let explicit, case let trimmed = explicit.trimmingINIWhitespace(), !trimmed.isEmpty {
            if trimmed.utf8.count > MetadataLimits.contentTypeBytes {
                diagnostics.append("content-type attribute is longer than \(MetadataLimits.contentTypeBytes) bytes; "
                    + "using the file name")
            } else if let identifier = database.knownIdentifier(trimmed) {
                let named = MIMEDatabase.isMIMEType(trimmed) ? database.mime.canonical(trimmed) : nil
                return made(identifier, .attribute, mimeType: named)
            } else {
                diagnostics.append("content-type attribute '\(trimmed.abbreviated)' is not a known type; "
                    + "using the file name")
            }
        }
        let candidates = database.nameCandidates(of: fileName)
        let first = candidates.types.first
        return made(first?.identifier, .extension, mimeType: first?.mimeType,
                    alternatives: Array(candidates.types.dropFirst()), isTie: candidates.isTie)
    }

    /// libmagic's answer: its MIME type in the host's names, that type as a UTI, and what a claim must conform to to
    /// agree with it.
    struct ContentType {
        let identifier: String
        let compatibleIdentifier: String
        let mimeType: String
    }

    private static func contentType(_ mimeType: String, in database: TypeDatabase) -> ContentType? {
        let plain = database.contentMIMEType(mimeType)
        guard !uninformativeMIMETypes.contains(plain), let identifier = database.typeIdentifier(forMIMEType: plain) else {
            return nil
        }
        // "text/plain" from libmagic means "some text": a CSV or Markdown claim agrees with it.
        return ContentType(identifier: identifier, compatibleIdentifier: plain == "text/plain" ? "public.text" : identifier,
                           mimeType: plain)
    }
}
