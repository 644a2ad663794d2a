import InboxCore
import Testing

/// What of libmagic a set of registrations can use: its database only when some claim could be routed to by a name
/// it gives, and what the sniffer is asked per claim.
struct ContentNeedsTests {
    let database = TypeDatabase.builtin

    func registrations(_ claims: [[String]]) throws -> [HandlerRegistration] {
        try claims.enumerated().map { index, types in
            let text = "[Handler]\nIdentifier=org.example.h\(index)\nExec=/bin/true %f\n\n"
                + "[DocumentType]\nContentTypes=\(types.joined(separator: " "))\n"
            return try #require(RegistrationParser.parse(Array(text.utf8), path: "/h/h\(index).handler").registration)
        }
    }

    func needs(_ claims: [String]...) throws -> ContentNeeds {
        ContentNeeds.of(try registrations(claims), in: database)
    }

    @Test func dataAndPlainTextNeedNothingOfLibmagicsDatabase() throws {
        let least = ContentNeeds(text: .builtin, binaryNames: false)
        #expect(try needs(["public.data"]) == least)
        #expect(try needs(["public.data"], ["public.plain-text"], ["public.text"], ["public.item"]) == least)
        #expect(try needs() == least, "no registrations")
    }

    @Test func jsonAndCSVNeedOnlyTheBuiltInChecks() throws {
        #expect(try needs(["public.json"]).text == .builtin)
        #expect(try needs(["public.json", "public.comma-separated-values-text"]).text == .builtin)
        #expect(try needs(["public.json"]).binaryNames == false)
    }

    @Test func anotherKindOfTextNeedsTheWholeDatabase() throws {
        #expect(try needs(["public.python-script"]).text == .all)
        #expect(try needs(["public.json"], ["public.source-code"]).text == .all, "the larger need wins")
        #expect(try needs(["public.xml"]).text == .all)
    }

    @Test func binaryFormatsNeedNamesAndTextOnlyWhereTextCanBeOne() throws {
        let png = try needs(["public.png"])
        #expect(png == ContentNeeds(text: .builtin, binaryNames: true), "no kind of text is a PNG")
        // SVG is text and an image.
        #expect(try needs(["public.image"]) == ContentNeeds.all)
        // Content is more than data: a PDF is content, "some data" is not; and every text is content.
        #expect(try needs(["public.content"]) == ContentNeeds(text: .builtin, binaryNames: true))
    }

    @Test func theRequestAsksNoMoreThanTheClaimAndTheNeeds() throws {
        let bare = TypeResolver.claim(explicit: nil, fileName: "scan-0001", in: database)
        let nothing = ContentNeeds(text: .builtin, binaryNames: false)
        #expect(nothing.request(for: bare) == (text: .builtin, namingBinary: false, refiningText: true))
        #expect(ContentNeeds.all.request(for: bare) == (text: .all, namingBinary: true, refiningText: true))
        // A concrete claim that can be text needs no kind of it, whatever is claimed.
        let named = TypeResolver.claim(explicit: nil, fileName: "notes.txt", in: database)
        #expect(ContentNeeds.all.request(for: named).text == .none)
        // A concrete claim that cannot be text: text content overturns it, and then its kind is what is needed.
        let picture = TypeResolver.claim(explicit: nil, fileName: "photo.png", in: database)
        #expect(nothing.request(for: picture).text == .builtin)
        #expect(ContentNeeds.all.request(for: picture).text == .all)
    }
}
