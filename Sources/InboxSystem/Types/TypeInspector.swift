import InboxCore

/// What reads a file's first bytes and says what its content is: the agent's sandboxed sniffer child, or libmagic in
/// process for inboxctl (as file(1) does).
public protocol ContentSniffing: AnyObject {
    /// The MIME type of the file's first bytes (shared-mime-info's rules, then libmagic), which check said it and
    /// what it cost; with `text: .none` plain text may be answered `text/plain` without asking libmagic (`.builtin`:
    /// without its database),
    /// with `namingBinary: false` binary that only libmagic's database would name is `application/octet-stream`,
    /// with `refiningText: false` such plain text is not shown to the rules either (no kind of text can refine the
    /// claim). A `.crashed` or `.timedOut` failure blames the file.
    func sniffContent(_ file: FileDescriptor, text: ContentNeeds.Text, namingBinary: Bool,
                      refiningText: Bool) -> Result<Sniffed, SnifferProcess.Failure>
}

extension SnifferProcess: ContentSniffing {
    public func sniffContent(_ file: FileDescriptor, text: ContentNeeds.Text, namingBinary: Bool,
                             refiningText: Bool) -> Result<Sniffed, Failure> {
        sniff(file, text: text, namingBinary: namingBinary, refiningText: refiningText)
    }
}

extension ContentSniffer: ContentSniffing {
    public func sniffContent(_ file: FileDescriptor, text: ContentNeeds.Text, namingBinary: Bool,
                             refiningText: Bool) -> Result<Sniffed, SnifferProcess.Failure> {
        sniff(file, text: text, namingBinary: namingBinary, refiningText: refiningText)
            .mapError { .refused($0.description) }
    }
}

/// A file's type as the agent decides it (TypeResolver has the rule): what its content-type attribute or its name
/// claims, then, unless sniffing is off, what its first bytes are. The agent and `inboxctl info` both ask here.
public final class TypeInspector {
    /// One inspection's findings.
    public struct Inspection: Sendable {
        public let resolved: ResolvedType
        /// The content's MIME type (shared-mime-info's rules, then libmagic); nil when not sniffed.
        public let sniffedMIMEType: String?
        /// Which check answered and what it cost; nil when not sniffed.
        public let sniffed: Sniffed?
        /// Why the content could not be sniffed (the claim then decides); nil when it was, or sniffing is off.
        public let sniffFailure: SnifferProcess.Failure?
    }

    /// nil: ContentSniffing=no, names and attributes alone decide.
    public let sniffer: ContentSniffing?

    public init(sniffer: ContentSniffing?) {
        self.sniffer = sniffer
    }

    /// The type of an open file called `name`, with `explicit` from its content-type attribute. A failure when the file
    /// crashed or stalled the sniffer: such a file is hostile or broken, and is not delivered. `needs`: what of
    /// libmagic the registrations' claims can use (ContentNeeds, the catalog's); libmagic is asked no more than the
    /// claim and they need.
    public func inspect(_ file: FileDescriptor, name: String, explicit: String?, in database: TypeDatabase,
                        needs: ContentNeeds = .all) -> Result<Inspection, SnifferProcess.Failure> {
        let claim = TypeResolver.claim(explicit: explicit, fileName: name, in: database)
        var sniffed: Sniffed?
        var failure: SnifferProcess.Failure?
        if let sniffer {
            let asked = needs.request(for: claim)
            switch sniffer.sniffContent(file, text: asked.text, namingBinary: asked.namingBinary,
                                        refiningText: asked.refiningText) {
            case .success(let answer):
                sniffed = answer
            case .failure(let error):
                switch error {
                case .crashed, .timedOut: return .failure(error)
                case .refused, .unreadable: failure = error
                }
            }
        }
        let content = sniffed?.mimeType
        return .success(Inspection(resolved: TypeResolver.decide(claim, content: content, contentByRules: sniffed?.path == .rules,
                                                                         in: database),
                                   sniffedMIMEType: content, sniffed: sniffed, sniffFailure: failure))
    }

    /// "its name says public.png but the content is public.plain-text": the mismatch as the journal and inboxctl say it.
    public static func statement(of mismatch: ResolvedType.Mismatch) -> String {
        let claim = mismatch.claimSource == .attribute ? "its content-type attribute says" : "its name says"
        return "\(claim) \(mismatch.claimed) but the content is \(mismatch.content)"
    }

    /// What follows the statement: which evidence won.
    public static func verdict(of mismatch: ResolvedType.Mismatch) -> String {
        if !mismatch.contentWon { return "kept \(mismatch.claimed)" }
        return mismatch.decided == mismatch.content ? "typed by its content"
            : "typed \(mismatch.decided), which its name also allows"
    }
}
