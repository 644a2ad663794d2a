import Testing
@testable import InboxCore

@Suite("Routing: where an arrival goes")
struct RoutingTests {
    static let index = SelectionIndex([
        HandlerSelectorTests.handler("image-viewer", [(["public.image"], .alternate)]),
        HandlerSelectorTests.handler("png-owner", [(["public.png"], .owner)]),
        HandlerSelectorTests.handler("declares-only", [(["public.png"], .none)]),
        HandlerSelectorTests.handler("text-editor", [(["public.plain-text"], .default)]),
        HandlerSelectorTests.handler("text-editor-2", [(["public.plain-text"], .default)]),
    ])

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var handler: String? = nil
        var type = "public.png"
        var override = false
        var trusted = false
        var preferences: [String: String] = [:]
        let decision: Routing.Decision
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // The sender's choice.
        Case(name: "any candidate, not only the best", handler: "image-viewer",
             decision: .deliver(handler: "image-viewer", chosenBy: .sender)),
        Case(name: "the best one", handler: "png-owner", decision: .deliver(handler: "png-owner", chosenBy: .sender)),
        Case(name: "a handler for another type", handler: "text-editor",
             decision: .reject(reason: "refused: text-editor cannot open public.png")),
        Case(name: "Rank=None does not open", handler: "declares-only",
             decision: .reject(reason: "refused: declares-only cannot open public.png")),
        Case(name: "a more general claim does not open a more specific request", handler: "png-owner", type: "public.image",
             decision: .reject(reason: "refused: png-owner cannot open public.image")),
        Case(name: "override by an untrusted sender", handler: "text-editor", override: true,
             decision: .reject(reason: "refused: text-editor cannot open public.png, and only root or the agent's own user "
                               + "may override that")),
        Case(name: "override by a trusted sender", handler: "text-editor", override: true, trusted: true,
             decision: .deliver(handler: "text-editor", chosenBy: .senderOverride)),
        Case(name: "override not needed", handler: "png-owner", override: true,
             decision: .deliver(handler: "png-owner", chosenBy: .sender)),
        Case(name: "not registered", handler: "com.example.missing", override: true, trusted: true,
             decision: .park(requested: "com.example.missing")),
        Case(name: "a preference does not bend a sender's choice", handler: "image-viewer",
             preferences: ["public.png": "png-owner"], decision: .deliver(handler: "image-viewer", chosenBy: .sender)),
        // Rank selection.
        Case(name: "the best candidate by rank", decision: .deliver(handler: "png-owner", chosenBy: .rank)),
        Case(name: "a preference wins over rank", preferences: ["public.image": "image-viewer"],
             decision: .deliver(handler: "image-viewer", chosenBy: .rank)),
        Case(name: "a more general claim", type: "public.jpeg", decision: .deliver(handler: "image-viewer", chosenBy: .rank)),
        Case(name: "no candidate: parked", type: "com.adobe.pdf", decision: .park(requested: nil)),
        Case(name: "Rank=None alone is no candidate", type: "public.data", decision: .park(requested: nil)),
        Case(name: "a tie broken by identifier is named", type: "public.plain-text",
             decision: .deliver(handler: "text-editor", chosenBy: .rank, tiedWith: ["text-editor", "text-editor-2"])),
    ]

    @Test(arguments: cases)
    func decide(_ test: Case) {
        let request = test.handler.map { Routing.Request(handler: $0, override: test.override, trusted: test.trusted) }
        #expect(Routing.decide(Routing.Subject(type: test.type), request: request, index: Self.index, database: .builtin,
                               preferences: HandlerPreferences(byType: test.preferences)) == test.decision)
    }

    @Test func sidecarCarriesTheChoice() {
        let metadata = SenderMetadata(handler: "com.example.viewer", overridesHandlerCheck: true)
        #expect(String(decoding: Sidecar.document(metadata), as: UTF8.self)
                == #"{"handler":"com.example.viewer","handler-override":"yes"}"# + "\n")
        #expect(Sidecar.parse(Sidecar.document(metadata)) == (metadata, []))
        #expect(Sidecar.parse(Array(#"{"handler":"a b","handler-override":true}"#.utf8)).problems
                == ["'handler' is not a valid handler identifier", "'handler-override' is not \"yes\""])
    }
}

@Suite("Selection by role")
struct RoleSelectionTests {
    static func handler(_ id: String, _ types: [([String], HandlerRank, HandlerRole)]) -> HandlerRegistration {
        var registration = HandlerSelectorTests.handler(id, types.map { ($0.0, $0.1) })
        for (index, type) in types.enumerated() { registration.documentTypes[index].role = type.2 }
        return registration
    }

    @Test func onlyDocumentTypesOfTheRoleCount() {
        let index = SelectionIndex([
            Self.handler("editor", [(["public.png"], .owner, .editor)]),
            Self.handler("both", [(["public.png"], .owner, .editor), (["public.image"], .alternate, .viewer)]),
            Self.handler("viewer", [(["public.image"], .default, .viewer)]),
            Self.handler("shell", [(["public.data"], .owner, .shell)]),
        ])
        let preferences = HandlerPreferences(byType: [:])
        let any = HandlerSelector.select(type: "public.png", index: index, database: .builtin, preferences: preferences)
        #expect(any.candidates.map(\.handler) == ["both", "editor", "shell", "viewer"])
        let viewers = HandlerSelector.select(type: "public.png", index: index, database: .builtin, preferences: preferences,
                                             role: .viewer)
        // "both" counts through its Viewer document type only, an Alternate one: "viewer" (Default) comes first.
        #expect(viewers.candidates.map(\.handler) == ["viewer", "both"])
        #expect(viewers.candidates.map(\.documentType.role) == [.viewer, .viewer])
        #expect(HandlerSelector.select(type: "public.plain-text", index: index, database: .builtin, preferences: preferences,
                                       role: .viewer).candidates.isEmpty)
    }
}
