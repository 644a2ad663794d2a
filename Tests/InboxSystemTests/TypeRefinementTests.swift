import InboxCore
import InboxSystem
import Testing

/// The decision with this host's shared-mime-info: what the magic rules name refines a claim, what libmagic names
/// does not, and a glob tie goes to the reading the content names exactly.
@Suite("Refinement by shared-mime-info's rules")
struct TypeRefinementTests {
    static let database: TypeDatabase = {
        let mime = MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories()).database
        return TypeDatabase.builtin.attaching(mime)
    }()

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let content: String
        let byRules: Bool
        let mimeType: String
        let source: ResolvedType.Source
        var testDescription: String { "\(name) \(content) \(byRules ? "rules" : "libmagic")" }
    }

    static let cases: [Case] = [
        // A subtype the rules name: the content's MIME type (the same UTI for Ogg audio and Vorbis).
        Case(name: "test.ogg", content: "audio/x-vorbis+ogg", byRules: true, mimeType: "audio/x-vorbis+ogg", source: .extension),
        Case(name: "feed.xml", content: "application/rss+xml", byRules: true, mimeType: "application/rss+xml", source: .content),
        // libmagic's kinds do not refine (its kinds of text are guesses).
        Case(name: "feed.xml", content: "application/rss+xml", byRules: false, mimeType: "application/xml", source: .extension),
        Case(name: "key.asc", content: "application/pgp-keys", byRules: true, mimeType: "application/pgp-keys", source: .content),
        // Never towards a script from a name that is none; within scripts, yes.
        Case(name: "notes.txt", content: "application/x-shellscript", byRules: true, mimeType: "text/plain", source: .extension),
        // A plain-text name no glob gives another type is not refined by any kind of text (that would be classifying
        // it), so its text is never shown to the rules (Claim.refinableAsText).
        Case(name: "key.txt", content: "application/pgp-keys", byRules: true, mimeType: "text/plain", source: .extension),
        Case(name: "feed.txt", content: "application/rss+xml", byRules: true, mimeType: "text/plain", source: .extension),
        Case(name: "run.py", content: "text/x-python3", byRules: true, mimeType: "text/x-python3", source: .extension),
        // A generic container's name stays (an EPUB named .zip).
        Case(name: "book.zip", content: "application/epub+zip", byRules: true, mimeType: "application/zip", source: .extension),
        // A tie the content names exactly.
        Case(name: "pages.djvu", content: "image/vnd.djvu+multipage", byRules: false, mimeType: "image/vnd.djvu+multipage",
             source: .extension),
        Case(name: "schema.json", content: "application/schema+json", byRules: true, mimeType: "application/schema+json",
             source: .extension),
    ]

    /// Which claims the sniffer shows text to the rules for: those some kind of text could refine.
    @Test(arguments: [("notes.txt", false), ("NOTES.TXT", false), ("README", true), ("key.asc", true),
                      ("feed.xml", true), ("run.py", true), ("photo.png", true)])
    func textIsShownToTheRulesOnlyWhereItCouldRefineTheClaim(_ name: String, _ refinable: Bool) {
        #expect(TypeResolver.claim(explicit: nil, fileName: name, in: Self.database).refinableAsText == refinable)
    }

    @Test(arguments: cases) func decides(_ test: Case) {
        let claim = TypeResolver.claim(explicit: nil, fileName: test.name, in: Self.database)
        let resolved = TypeResolver.decide(claim, content: test.content, contentByRules: test.byRules, in: Self.database)
        #expect(resolved.mimeType == test.mimeType, "\(resolved)")
        #expect(resolved.source == test.source, "\(resolved)")
    }
}
