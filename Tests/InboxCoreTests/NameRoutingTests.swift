import Testing
@testable import InboxCore

@Suite("Name patterns")
struct NamePatternTests {
    struct Match: Sendable, CustomTestStringConvertible {
        let pattern: String
        let name: String
        let matches: Bool
        var testDescription: String { "\(pattern) ~ \(name)" }
    }

    static let matches: [Match] = [
        Match(pattern: "*.invoice.pdf", name: "report.invoice.pdf", matches: true),
        Match(pattern: "*.invoice.pdf", name: "report.pdf", matches: false),
        Match(pattern: "*.invoice.pdf", name: ".invoice.pdf", matches: true),
        Match(pattern: "*.invoice.pdf", name: "report.invoice.pdf.part", matches: false),
        Match(pattern: "*.invoice.pdf", name: "REPORT.INVOICE.PDF", matches: true),
        Match(pattern: "*.PDF", name: "scan.pdf", matches: true),
        Match(pattern: "scan-????.tif", name: "scan-0042.tif", matches: true),
        Match(pattern: "scan-????.tif", name: "scan-042.tif", matches: false),
        Match(pattern: "scan-[0-9][0-9].tif", name: "scan-42.tif", matches: true),
        Match(pattern: "scan-[0-9][0-9].tif", name: "scan-4x.tif", matches: false),
        Match(pattern: "[!.]*", name: "visible", matches: true),
        Match(pattern: "[^a]*", name: "abc", matches: false),
        Match(pattern: "[]]x", name: "]x", matches: true),
        Match(pattern: "a[-]b", name: "a-b", matches: true),
        Match(pattern: "\\*.txt", name: "*.txt", matches: true),
        Match(pattern: "\\*.txt", name: "a.txt", matches: false),
        Match(pattern: "*", name: "", matches: true),
        Match(pattern: "a*b*c", name: "aXbYbZc", matches: true),
        Match(pattern: "a*b*c", name: "aXbYbZ", matches: false),
        Match(pattern: "***x", name: "x", matches: true),
        Match(pattern: "Straße*", name: "STRASSE.pdf", matches: false),
        Match(pattern: "Ärger*.txt", name: "ärger-1.txt", matches: true),
        Match(pattern: "?", name: "é", matches: true),
    ]

    @Test(arguments: matches)
    func match(_ test: Match) throws {
        #expect(try NamePattern(test.pattern).matches(test.name) == test.matches)
    }

    @Test(arguments: [
        ("", "empty pattern"),
        ("in/*.pdf", "a file name has no '/'"),
        ("a[bc", "'[' without a closing ']'"),
        ("[z-a]", "range 'z-a' is backwards"),
        ("x\\", "'\\' at the end escapes nothing"),
        (String(repeating: "a", count: 256), "longer than 255 bytes"),
    ])
    func refused(_ pattern: String, _ message: String) {
        #expect(throws: NamePattern.SyntaxError(description: message)) { try NamePattern(pattern) }
    }

    /// Garbage never traps, and a pattern that parses matches itself when it has no special characters.
    @Test func garbage() {
        var garbage = Garbage(state: 0x1234_5678)
        for _ in 0..<2000 {
            let bytes = garbage.bytes(Int(garbage.next() % 24))
            let text = String(decoding: bytes, as: UTF8.self)
            if let pattern = try? NamePattern(text) { _ = pattern.matches(text) }
        }
    }
}

@Suite("Selection by Inbox and by name")
struct NameRoutingTests {
    /// A registration with one document type per (contentTypes, patterns, rank) triple.
    static func handler(_ id: String, _ types: [([String], [String], HandlerRank)]) -> HandlerRegistration {
        var registration = HandlerSelectorTests.handler(id, types.map { ($0.0, $0.2) })
        for (index, type) in types.enumerated() {
            // Literals known to parse.
            registration.documentTypes[index].namePatterns = type.1.map { try! NamePattern($0) }
        }
        return registration
    }

    static let registrations = [
        handler("pdf-viewer", [(["com.adobe.pdf"], [], .default)]),
        handler("pdf-owner", [(["com.adobe.pdf"], [], .owner)]),
        handler("invoices", [(["com.adobe.pdf"], ["*.invoice.pdf"], .default)]),
        handler("invoices-alt", [(["public.data"], ["*.invoice.pdf"], .alternate)]),
        handler("scans", [([], ["scan-*"], .default)]),
        handler("scans-none", [([], ["scan-*"], .none)]),
        handler("text-editor", [(["public.plain-text"], [], .default)]),
        handler("twice", [(["public.plain-text"], [], .alternate), (["public.plain-text"], ["*.log"], .alternate)]),
    ]
    static let index = SelectionIndex(registrations)

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var type = "com.adobe.pdf"
        var file: String? = "report.pdf"
        var bound: String? = nil
        var preferences: [String: String] = [:]
        var request: String? = nil
        var override = false
        var trusted = false
        /// The candidates, best first (without a request), as `inboxctl handlers` lists them.
        let order: [String]
        let reason: String
        let decision: Routing.Decision
        var testDescription: String { name }
    }

    static let inbox = "/srv/scan"
    static let cases: [Case] = [
        // No binding, no pattern matching: by type alone, as before.
        Case(name: "rank by type", order: ["pdf-owner", "pdf-viewer"], reason: "rank Owner",
             decision: .deliver(handler: "pdf-owner", chosenBy: .rank)),
        Case(name: "no name: patterns take no part", file: nil, order: ["pdf-owner", "pdf-viewer"], reason: "rank Owner",
             decision: .deliver(handler: "pdf-owner", chosenBy: .rank)),
        Case(name: "preference by type", preferences: ["com.adobe.pdf": "pdf-viewer"], order: ["pdf-viewer", "pdf-owner"],
             reason: "preferred in defaults.conf", decision: .deliver(handler: "pdf-viewer", chosenBy: .rank)),
        // A pattern that matches: every claim by name before every claim by type, Owner and preference included.
        Case(name: "name beats rank", file: "report.invoice.pdf",
             order: ["invoices", "invoices-alt", "pdf-owner", "pdf-viewer"],
             reason: "name matches *.invoice.pdf, then rank Default",
             decision: .deliver(handler: "invoices", chosenBy: .namePattern)),
        Case(name: "name beats a preference by type", file: "REPORT.Invoice.PDF",
             preferences: ["com.adobe.pdf": "pdf-viewer"],
             order: ["invoices", "invoices-alt", "pdf-viewer", "pdf-owner"],
             reason: "name matches *.invoice.pdf, then rank Default",
             decision: .deliver(handler: "invoices", chosenBy: .namePattern)),
        Case(name: "among names, preference then rank", file: "a.invoice.pdf", preferences: ["public.data": "invoices-alt"],
             order: ["invoices-alt", "invoices", "pdf-owner", "pdf-viewer"],
             reason: "name matches *.invoice.pdf, then preferred in defaults.conf",
             decision: .deliver(handler: "invoices-alt", chosenBy: .namePattern)),
        Case(name: "a pattern narrowed by ContentTypes= needs the type", type: "public.plain-text", file: "x.invoice.pdf",
             order: ["invoices-alt", "text-editor", "twice"], reason: "name matches *.invoice.pdf",
             decision: .deliver(handler: "invoices-alt", chosenBy: .namePattern)),
        Case(name: "a pattern without ContentTypes= takes any type", type: "public.plain-text", file: "scan-1.txt",
             order: ["scans", "text-editor", "twice"], reason: "name matches scan-*",
             decision: .deliver(handler: "scans", chosenBy: .namePattern)),
        Case(name: "Rank=None never, by name either", type: "public.data", file: "scan-1.bin", order: ["scans"],
             reason: "name matches scan-*", decision: .deliver(handler: "scans", chosenBy: .namePattern)),
        Case(name: "a registration's claim by name beats its own claim by type", type: "public.plain-text",
             file: "app.log", order: ["twice", "text-editor"], reason: "name matches *.log",
             decision: .deliver(handler: "twice", chosenBy: .namePattern)),
        Case(name: "no candidate at all", type: "public.png", file: "photo.png", order: [],
             reason: "no handler for public.png", decision: .park(requested: nil)),
        // A bound Inbox: its handler only, whatever the ranks, preferences and names.
        Case(name: "bound: the handler, not the Owner", bound: "pdf-viewer", order: ["pdf-viewer"],
             reason: "Inbox /srv/scan is bound to pdf-viewer", decision: .deliver(handler: "pdf-viewer", chosenBy: .inbox)),
        Case(name: "bound: over a preference", bound: "pdf-viewer", preferences: ["com.adobe.pdf": "pdf-owner"],
             order: ["pdf-viewer"], reason: "Inbox /srv/scan is bound to pdf-viewer",
             decision: .deliver(handler: "pdf-viewer", chosenBy: .inbox)),
        Case(name: "bound: over a name pattern of another", file: "x.invoice.pdf", bound: "pdf-viewer",
             order: ["pdf-viewer"], reason: "Inbox /srv/scan is bound to pdf-viewer",
             decision: .deliver(handler: "pdf-viewer", chosenBy: .inbox)),
        Case(name: "bound: its own pattern matches", file: "x.invoice.pdf", bound: "invoices", order: ["invoices"],
             reason: "Inbox /srv/scan is bound to invoices; name matches *.invoice.pdf",
             decision: .deliver(handler: "invoices", chosenBy: .inbox)),
        Case(name: "bound: its pattern does not match", bound: "invoices", order: [],
             reason: "Inbox /srv/scan is bound to invoices, which does not open com.adobe.pdf by that name",
             decision: .park(requested: nil, because: "Inbox /srv/scan is bound to invoices, which does not open "
                             + "com.adobe.pdf by that name")),
        Case(name: "bound: a type it does not claim", type: "public.png", file: "a.png", bound: "pdf-viewer", order: [],
             reason: "Inbox /srv/scan is bound to pdf-viewer, which does not open public.png",
             decision: .park(requested: nil, because: "Inbox /srv/scan is bound to pdf-viewer, which does not open "
                             + "public.png")),
        Case(name: "bound: Rank=None", type: "public.data", file: "scan-1", bound: "scans-none", order: [],
             reason: "Inbox /srv/scan is bound to scans-none, which does not open public.data",
             decision: .park(requested: nil, because: "Inbox /srv/scan is bound to scans-none, which does not open "
                             + "public.data")),
        Case(name: "bound: not registered", bound: "com.example.gone", order: [],
             reason: "Inbox /srv/scan is bound to com.example.gone, which is not registered",
             decision: .park(requested: nil, because: "Inbox /srv/scan is bound to com.example.gone, which is not "
                             + "registered")),
        // A sender's request.
        Case(name: "request: a name claim counts", file: "a.invoice.pdf", request: "invoices",
             order: ["invoices", "invoices-alt", "pdf-owner", "pdf-viewer"],
             reason: "name matches *.invoice.pdf, then rank Default", decision: .deliver(handler: "invoices", chosenBy: .sender)),
        Case(name: "request: a name claim that does not match", request: "invoices", order: ["pdf-owner", "pdf-viewer"],
             reason: "rank Owner", decision: .reject(reason: "refused: invoices cannot open com.adobe.pdf")),
        Case(name: "request: the bound handler", bound: "pdf-viewer", request: "pdf-viewer", order: ["pdf-viewer"],
             reason: "Inbox /srv/scan is bound to pdf-viewer", decision: .deliver(handler: "pdf-viewer", chosenBy: .sender)),
        Case(name: "request: another handler than the bound one", bound: "pdf-viewer", request: "pdf-owner",
             override: true, trusted: true, order: ["pdf-viewer"], reason: "Inbox /srv/scan is bound to pdf-viewer",
             decision: .reject(reason: "refused: Inbox /srv/scan is bound to pdf-viewer, and its sender asked for "
                               + "pdf-owner")),
        Case(name: "request: the bound handler, overridden by a trusted sender", type: "public.png", file: "a.png",
             bound: "pdf-viewer", request: "pdf-viewer", override: true, trusted: true, order: [],
             reason: "Inbox /srv/scan is bound to pdf-viewer, which does not open public.png",
             decision: .deliver(handler: "pdf-viewer", chosenBy: .senderOverride)),
    ]

    @Test(arguments: cases)
    func select(_ test: Case) {
        let subject = Routing.Subject(type: test.type, name: test.file,
                                      binding: test.bound.map { Routing.Binding(inbox: Self.inbox, handler: $0) })
        let preferences = HandlerPreferences(byType: test.preferences)
        let all = Routing.select(subject, index: Self.index, database: .builtin, preferences: preferences)
        #expect(all.candidates.map(\.handler) == test.order)
        #expect(all.reason == test.reason)
        // What dispatching asks (the best only) agrees with the whole list.
        let best = Routing.select(subject, index: Self.index, database: .builtin, preferences: preferences,
                                  ranking: .best)
        #expect(best.chosen?.handler == test.order.first)
        #expect(best.reason == test.reason)
        let request = test.request.map { Routing.Request(handler: $0, override: test.override, trusted: test.trusted) }
        #expect(Routing.decide(subject, request: request, index: Self.index, database: .builtin,
                               preferences: preferences) == test.decision)
    }

    /// Without NamePatterns= in the load, the index says so, and a name changes nothing.
    @Test func withoutPatterns() {
        let index = SelectionIndex(Array(Self.registrations.prefix(2)))
        #expect(!index.hasNamePatterns)
        #expect(Self.index.hasNamePatterns)
        #expect(Self.index.anyPatternMatches(lowercased: "x.invoice.pdf"))
        #expect(!Self.index.anyPatternMatches(lowercased: "x.pdf"))
        let plain = HandlerSelector.select(type: "com.adobe.pdf", index: index, database: .builtin,
                                           preferences: HandlerPreferences())
        let named = HandlerSelector.select(type: "com.adobe.pdf", name: "x.invoice.pdf", index: index, database: .builtin,
                                           preferences: HandlerPreferences())
        #expect(plain == named)
    }
}

@Suite("NamePatterns= and [Inbox] in files")
struct NameRoutingParserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        let diagnostics: [String]
        var testDescription: String { name }
    }

    static let registrationCases: [Case] = [
        Case(name: "patterns with types", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                       "ContentTypes=com.adobe.pdf", "NamePatterns=*.invoice.pdf *.bill.pdf"),
             diagnostics: []),
        Case(name: "patterns alone", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]", "NamePatterns=scan-*"),
             diagnostics: []),
        Case(name: "a bad pattern", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                 "ContentTypes=com.adobe.pdf", "NamePatterns=ok.pdf in/*.pdf a[b"),
             diagnostics: ["t.handler:5: invalid name pattern 'in/*.pdf' in NamePatterns=: a file name has no '/'",
                           "t.handler:5: invalid name pattern 'a[b' in NamePatterns=: '[' without a closing ']'"]),
        Case(name: "a misspelt key", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                  "ContentTypes=com.adobe.pdf", "NamePattern=*.pdf"),
             diagnostics: ["t.handler:5: warning: unknown key 'NamePattern' in section [DocumentType], ignored; "
                           + "did you mean 'NamePatterns='?"]),
        Case(name: "an empty value clears", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                         "NamePatterns=*.pdf", "NamePatterns="),
             diagnostics: ["t.handler:3: [DocumentType] without ContentTypes= or NamePatterns="]),
    ]

    @Test(arguments: registrationCases)
    func registration(_ test: Case) {
        #expect(RegistrationParser.parse(test.input, path: "t.handler").diagnostics.map(\.description) == test.diagnostics)
    }

    @Test func patternsAreKept() throws {
        let file = RegistrationParser.parse(lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                  "NamePatterns=*.Invoice.pdf scan-*"), path: "t.handler")
        let type = try #require(file.registration?.documentTypes.first)
        #expect(type.namePatterns.map(\.text) == ["*.Invoice.pdf", "scan-*"])
        #expect(type.contentTypes == [])
        #expect(type.name == "*.Invoice.pdf")
    }

    static let configurationCases: [Case] = [
        Case(name: "two bound Inboxes", input: lines("[Agent]", "Inbox=/var/spool/inboxd/Inbox", "[Inbox]",
                                                     "Path=/srv/scan/", "Handler=com.example.scans", "[Inbox]",
                                                     "Path=/srv/plain"),
             diagnostics: []),
        Case(name: "Path= given twice", input: lines("[Inbox]", "Path=/srv/a", "Path=/srv/b", "Handler=h"),
             diagnostics: ["c:3: Path= given twice in this [Inbox] section (first at line 2): an [Inbox] section is one "
                           + "Inbox"]),
        Case(name: "the same Inbox in two sections", input: lines("[Inbox]", "Path=/srv/a", "Handler=h", "[Inbox]",
                                                                  "Path=/srv/a/", "Handler=g"),
             diagnostics: ["c:5: Inbox /srv/a is already configured by the [Inbox] section at line 1"]),
        Case(name: "also an [Agent] Inbox=", input: lines("[Agent]", "Inbox=/srv/a", "[Inbox]", "Path=/srv/a",
                                                          "Handler=h"),
             diagnostics: ["c:2: warning: Inbox /srv/a is also configured by the [Inbox] section at line 3: it is "
                           + "watched once, as that section says"]),
        Case(name: "a relative path", input: lines("[Inbox]", "Path=srv/a", "Handler=h"),
             diagnostics: ["c:2: Path= must be an absolute path, got 'srv/a'"]),
        Case(name: "no Path=", input: lines("[Inbox]", "Handler=h"), diagnostics: ["c:1: [Inbox] without Path="]),
        Case(name: "a bad Handler=", input: lines("[Inbox]", "Path=/srv/a", "Handler=com.example/scans"),
             diagnostics: ["c:3: invalid Handler= 'com.example/scans': a handler identifier has letters, digits, '.' "
                           + "and '-'"]),
        Case(name: "Handler= given twice", input: lines("[Inbox]", "Path=/srv/a", "Handler=h", "Handler=g"),
             diagnostics: ["c:4: Handler= given twice in this [Inbox] section (first at line 3): an Inbox is bound to "
                           + "one handler"]),
        Case(name: "an unknown key", input: lines("[Inbox]", "Path=/srv/a", "Handlr=h", "X-Ours=1"),
             diagnostics: ["c:3: warning: unknown key 'Handlr' in section [Inbox], ignored; did you mean 'Handler='?"]),
    ]

    @Test(arguments: configurationCases)
    func configuration(_ test: Case) {
        #expect(ConfigurationParser.parseAgent(test.input, path: "c").diagnostics.map(\.description) == test.diagnostics)
    }

    @Test func inboxSections() {
        let (configuration, _) = ConfigurationParser.parseAgent(lines(
            "[Inbox]", "Path=/srv/scan/", "Handler=com.example.scans", "[Agent]", "Inbox=/var/spool/inboxd/Inbox",
            "[Inbox]", "Path=/srv/plain"), path: "/etc/inboxd/inboxd.conf")
        #expect(configuration.inboxes == ["/var/spool/inboxd/Inbox"])
        #expect(configuration.inboxSections == [
            InboxSection(path: "/srv/scan", handler: "com.example.scans",
                         location: SourceLocation(file: "/etc/inboxd/inboxd.conf", line: 1),
                         handlerLocation: SourceLocation(file: "/etc/inboxd/inboxd.conf", line: 3)),
            InboxSection(path: "/srv/plain", handler: nil, location: SourceLocation(file: "/etc/inboxd/inboxd.conf", line: 6)),
        ])
        #expect(InboxSection.unregisteredHandlers(configuration.inboxSections, registered: ["com.example.scan"])
            .map(\.description) == ["/etc/inboxd/inboxd.conf:3: warning: Handler= names 'com.example.scans', which is "
                                    + "not registered: files dropped in /srv/scan wait in unhandled/ until it is; did "
                                    + "you mean 'com.example.scan'?"])
        #expect(InboxSection.unregisteredHandlers(configuration.inboxSections, registered: ["com.example.scans"]) == [])
    }
}
