/// How much of libmagic a decision with these registrations can use (docs/design.md, Content sniffing): its whole
/// database (0.3 to 5 ms a file) names kinds of text and binary formats beyond what shared-mime-info's rules and
/// its own built-in checks name, and that is worth searching only when some registration claims a type such a
/// name could route to. The agent's catalog works this out once per load; the sniffer asks no more than it says.
public struct ContentNeeds: Sendable, Hashable {
    /// How far a text file's kind is looked into, beyond "plain text".
    public enum Text: Int, Sendable, Hashable, Comparable {
        /// Not at all: the claim stands for any text (rule 5; the rules may still refine it, rule 4).
        case none
        /// shared-mime-info's rules, then libmagic's built-in checks (JSON, CSV), not its database: no registration
        /// claims another kind of text, so only a format written in text (PostScript, a PDF, a script with its `#!`
        /// line, JSON) can change the decision. Without rules, libmagic's whole database is all there is.
        case builtin
        /// libmagic's whole database (scripts and source languages): some other kind of text is claimed.
        case all

        public static func < (left: Text, right: Text) -> Bool { left.rawValue < right.rawValue }
    }

    /// How far a text file without a claim that stands is looked into: `builtin` or `all`.
    public var text: Text
    /// Binary content neither the rules nor the built-in checks name is searched for in libmagic's database: some
    /// registration claims a type other than "some data" (`public.data`, `public.item`) that is not text.
    public var binaryNames: Bool

    public init(text: Text, binaryNames: Bool) {
        self.text = text
        self.binaryNames = binaryNames
    }

    /// Everything: what inboxctl and a caller without registrations ask (the content named as well as it can be).
    public static let all = ContentNeeds(text: .all, binaryNames: true)

    /// Kinds of text that libmagic's built-in checks name, before and without its database.
    public static let builtinText: Set<String> = ["public.json", "public.comma-separated-values-text"]

    /// Types whose claim no name of libmagic's could serve better than "some data" or "plain text" does: each is
    /// what every file, or every text file, already conforms to.
    static let universal: Set<String> = ["public.item", "public.data"]

    /// What the sniffer is asked for a file with this claim: as little as the claim and these needs allow. A tie
    /// is settled by the content's name whatever the registrations claim. shared-mime-info's rules are still shown
    /// text (`refiningText`, as the claim allows): they are cheap, and they name formats written in plain text
    /// (a PDF, PostScript, a shell script) that a claim or a registration may need told from "some text".
    public func request(for claim: TypeResolver.Claim) -> (text: Text, namingBinary: Bool, refiningText: Bool) {
        let text: Text = !claim.needsTextClassified ? .none : claim.isTie ? .all : self.text
        return (text, claim.needsBinaryNamed && (claim.isTie || binaryNames), claim.refinableAsText)
    }

    /// What the claims of `registrations` (their document types' content types, as resolved) can use.
    public static func of(_ registrations: [HandlerRegistration], in database: TypeDatabase) -> ContentNeeds {
        let plainText = Set(database.conformanceChain(of: "public.plain-text"))
        // Kinds of text the database knows that are not plain text itself (SVG is an image and text).
        let textKinds = database.allIdentifiers.filter {
            database.conforms($0, to: "public.text") && !plainText.contains($0)
        }
        var needs = ContentNeeds(text: .builtin, binaryNames: false)
        for registration in registrations {
            for documentType in registration.documentTypes {
                for claimed in documentType.contentTypes where !universal.contains(claimed) {
                    if plainText.contains(claimed) {
                        // Every text file is one (public.text); binary content may be one too (public.content).
                        if !database.conforms(claimed, to: "public.text") { needs.binaryNames = true }
                        continue
                    }
                    if database.conforms(claimed, to: "public.text") {
                        if !builtinText.contains(claimed) { needs.text = .all }
                    } else {
                        needs.binaryNames = true
                        // A claim some kind of text is a kind of (public.image: SVG; public.source-code).
                        if textKinds.contains(where: { database.conforms($0, to: claimed) }) { needs.text = .all }
                    }
                    if needs == .all { return needs }
                }
            }
        }
        return needs
    }
}
