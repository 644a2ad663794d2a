import Testing
@testable import InboxCore

@Suite("Handler selection")
struct HandlerSelectorTests {
    /// A registration with one document type per (contentTypes, rank) pair.
    static func handler(_ id: String, _ types: [([String], HandlerRank)]) -> HandlerRegistration {
        // The command line is a literal known to parse.
        let exec = try! ExecCommand(parsing: "/usr/bin/\(id) %f")
        let documentTypes = types.enumerated().map { index, type in
            DocumentType(name: type.0.joined(), contentTypes: type.0, rank: type.1,
                         location: SourceLocation(file: "\(id).handler", line: 3 + index * 4))
        }
        return HandlerRegistration(identifier: id, exec: exec, documentTypes: documentTypes, path: "\(id).handler")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let type: String
        let registrations: [HandlerRegistration]
        var preferences: [String: String] = [:]
        let order: [String]
        let reason: String
        var tieBroken = false
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "Owner beats Default beats Alternate", type: "public.png",
             registrations: [handler("alt", [(["public.png"], .alternate)]), handler("own", [(["public.png"], .owner)]),
                             handler("def", [(["public.png"], .default)])],
             order: ["own", "def", "alt"], reason: "rank Owner"),
        Case(name: "None never", type: "public.png",
             registrations: [handler("none", [(["public.png"], .none)]), handler("alt", [(["public.image"], .alternate)])],
             order: ["alt"], reason: "only candidate"),
        Case(name: "only None", type: "public.png", registrations: [handler("none", [(["public.png"], .none)])],
             order: [], reason: "no handler for public.png"),
        Case(name: "png beats image at the same rank", type: "public.png",
             registrations: [handler("a-image", [(["public.image"], .default)]),
                             handler("b-png", [(["public.png"], .default)])],
             order: ["b-png", "a-image"], reason: "more specific type public.png"),
        Case(name: "rank beats specificity", type: "public.png",
             registrations: [handler("png", [(["public.png"], .alternate)]),
                             handler("data", [(["public.data"], .owner)])],
             order: ["data", "png"], reason: "rank Owner"),
        Case(name: "preference overrides rank", type: "public.png",
             registrations: [handler("own", [(["public.png"], .owner)]), handler("alt", [(["public.image"], .alternate)])],
             preferences: ["public.png": "alt"], order: ["alt", "own"], reason: "preferred in defaults.conf"),
        Case(name: "ancestor preference applies", type: "public.png",
             registrations: [handler("own", [(["public.png"], .owner)]), handler("alt", [(["public.image"], .alternate)])],
             preferences: ["public.image": "alt"], order: ["alt", "own"], reason: "preferred in defaults.conf"),
        Case(name: "nearest preference wins", type: "public.png",
             registrations: [handler("own", [(["public.png"], .owner)]), handler("alt", [(["public.image"], .alternate)])],
             preferences: ["public.data": "alt", "public.png": "own"], order: ["own", "alt"],
             reason: "preferred in defaults.conf"),
        Case(name: "preference for a handler that cannot open the type is ignored", type: "public.png",
             registrations: [handler("own", [(["public.png"], .owner)]), handler("txt", [(["public.text"], .owner)])],
             preferences: ["public.png": "txt"], order: ["own"], reason: "only candidate"),
        Case(name: "tie broken by identifier", type: "public.png",
             registrations: [handler("zeta", [(["public.png"], .default)]), handler("alpha", [(["public.png"], .default)])],
             order: ["alpha", "zeta"], reason: "tie broken by identifier", tieBroken: true),
        Case(name: "best document type per handler", type: "public.png",
             registrations: [handler("multi", [(["public.data"], .alternate), (["public.png"], .owner)]),
                             handler("other", [(["public.png"], .default)])],
             order: ["multi", "other"], reason: "rank Owner"),
        Case(name: "no conforming type", type: "public.plain-text",
             registrations: [handler("img", [(["public.image"], .owner)])],
             order: [], reason: "no handler for public.plain-text"),
        Case(name: "unknown type matches only itself", type: "com.nobody.thing",
             registrations: [handler("exact", [(["com.nobody.thing"], .alternate)]),
                             handler("data", [(["public.data"], .owner)])],
             order: ["exact"], reason: "only candidate"),
    ]

    @Test(arguments: cases)
    func select(_ testCase: Case) {
        let selection = HandlerSelector.select(type: testCase.type, registrations: testCase.registrations,
                                               database: .builtin,
                                               preferences: HandlerPreferences(byType: testCase.preferences))
        #expect(selection.candidates.map(\.handler) == testCase.order)
        #expect(selection.chosen?.handler == testCase.order.first)
        #expect(selection.reason == testCase.reason)
        #expect(selection.tieBroken == testCase.tieBroken)
    }

    @Test func candidateCarriesMatchAndDistance() throws {
        let selection = HandlerSelector.select(
            type: "public.png", registrations: [Self.handler("multi", [(["public.data"], .owner),
                                                                        (["public.image", "public.png"], .owner)])],
            database: .builtin, preferences: HandlerPreferences(byType: [:]))
        let chosen = try #require(selection.chosen)
        #expect(chosen.matchedType == "public.png")
        #expect(chosen.distance == 0)
        #expect(chosen.documentType.location.line == 7)
        #expect(!chosen.preferred)
    }

    @Test func orderIsDeterministic() {
        let registrations = (0..<20).map { Self.handler("h\($0)", [(["public.image"], .default)]) }
        let forward = HandlerSelector.select(type: "public.jpeg", registrations: registrations, database: .builtin,
                                             preferences: HandlerPreferences(byType: [:]))
        let backward = HandlerSelector.select(type: "public.jpeg", registrations: registrations.reversed(),
                                              database: .builtin, preferences: HandlerPreferences(byType: [:]))
        #expect(forward == backward)
        #expect(forward.candidates.map(\.handler) == registrations.map(\.identifier).sorted())
    }

    /// The agent asks only for the best (`.best`); `inboxctl` for the whole list (`.all`). Both must agree on the
    /// chosen handler, the reason and the tie, over many random sets of registrations.
    @Test func bestAgreesWithTheFullRanking() {
        var garbage = Garbage(state: 0x5DEE_CE66_D1CE_4E5B)
        let types = ["public.png", "public.jpeg", "public.image", "public.data", "public.item", "public.content",
                     "public.plain-text", "public.text", "com.adobe.pdf"]
        let ranks: [HandlerRank] = [.owner, .default, .alternate, .none]
        for _ in 0..<200 {
            let count = 1 + Int(garbage.next() % 12)
            let registrations = (0..<count).map { index in
                Self.handler("h\(garbage.next() % 50)-\(index)", (0..<(1 + Int(garbage.next() % 2))).map { _ in
                    ([types[Int(garbage.next() % UInt64(types.count))]], ranks[Int(garbage.next() % 4)])
                })
            }
            let index = SelectionIndex(registrations)
            let preferences = HandlerPreferences(byType: garbage.next() % 3 == 0
                ? ["public.image": registrations[Int(garbage.next() % UInt64(count))].identifier] : [:])
            for type in ["public.png", "public.jpeg", "public.plain-text", "com.adobe.pdf"] {
                let all = HandlerSelector.select(type: type, index: index, database: .builtin, preferences: preferences)
                let best = HandlerSelector.select(type: type, index: index, database: .builtin, preferences: preferences,
                                                  ranking: .best)
                #expect(best.chosen == all.chosen)
                #expect(best.reason == all.reason)
                #expect(best.tieBroken == all.tieBroken)
                #expect(Array(all.candidates.prefix(best.candidates.count)) == best.candidates)
            }
        }
    }
}
