import Testing
@testable import InboxCore

/// `HandlerChoice.decide` (`ChooseHandler=ask`) and its settings in inboxd.conf.
@Suite("Choose handler")
struct ChooseHandlerTests {
    static let ask = HandlerChoice.Settings(mode: .ask, timeout: nil)
    static let askTen = HandlerChoice.Settings(mode: .ask, timeout: .seconds(10))
    static let byRank = Routing.Decision.deliver(handler: "a", chosenBy: .rank)
    static let now: Int64 = 1_000_000_000

    struct Case: Sendable, CustomStringConvertible {
        let routed: Routing.Decision
        let candidates: [String]
        let settings: HandlerChoice.Settings
        let waiting: HandlerChoice.Waiting?
        let expected: HandlerChoice.Decision
        let line: Int
        var description: String { "line \(line)" }
    }

    static let cases: [Case] = [
        // An arrival: waits only in an asking Inbox with several candidates.
        Case(routed: byRank, candidates: ["a", "b"], settings: .rank, waiting: nil, expected: .proceed, line: #line),
        Case(routed: byRank, candidates: ["a"], settings: ask, waiting: nil, expected: .proceed, line: #line),
        Case(routed: byRank, candidates: [], settings: ask, waiting: nil, expected: .proceed, line: #line),
        Case(routed: byRank, candidates: ["a", "b"], settings: ask, waiting: nil,
             expected: .wait(candidates: ["a", "b"], deadlineUSec: nil), line: #line),
        Case(routed: byRank, candidates: ["a", "b"], settings: askTen, waiting: nil,
             expected: .wait(candidates: ["a", "b"], deadlineUSec: now + 10_000_000), line: #line),
        Case(routed: .deliver(handler: "a", chosenBy: .namePattern), candidates: ["a", "b"], settings: ask,
             waiting: nil, expected: .wait(candidates: ["a", "b"], deadlineUSec: nil), line: #line),
        // A sender's or an Inbox's choice stands; so does a park or a refusal.
        Case(routed: .deliver(handler: "b", chosenBy: .sender), candidates: ["a", "b"], settings: ask, waiting: nil,
             expected: .proceed, line: #line),
        Case(routed: .deliver(handler: "b", chosenBy: .inbox), candidates: ["b"], settings: ask, waiting: nil,
             expected: .proceed, line: #line),
        Case(routed: .park(requested: nil), candidates: [], settings: ask, waiting: nil, expected: .proceed, line: #line),
        Case(routed: .reject(reason: "r"), candidates: [], settings: ask, waiting: nil, expected: .proceed, line: #line),
        // Waiting: a choice among the candidates is delivered; one that is not is refused, the file waits on.
        Case(routed: byRank, candidates: ["a", "b"], settings: ask, waiting: .init(sinceUSec: now, choice: "b"),
             expected: .deliver(handler: "b", chosenBy: .person), line: #line),
        Case(routed: byRank, candidates: ["a", "b"], settings: askTen, waiting: .init(sinceUSec: now - 1, choice: "z"),
             expected: .refuse(choice: "z", candidates: ["a", "b"], deadlineUSec: now - 1 + 10_000_000), line: #line),
        Case(routed: byRank, candidates: ["a", "b"], settings: ask, waiting: .init(sinceUSec: now),
             expected: .wait(candidates: ["a", "b"], deadlineUSec: nil), line: #line),
        // The timeout counts from when it started waiting (recorded on the file, across restarts).
        Case(routed: byRank, candidates: ["a", "b"], settings: askTen, waiting: .init(sinceUSec: now - 3_000_000),
             expected: .wait(candidates: ["a", "b"], deadlineUSec: now + 7_000_000), line: #line),
        Case(routed: byRank, candidates: ["a", "b"], settings: askTen, waiting: .init(sinceUSec: now - 10_000_000),
             expected: .deliver(handler: "a", chosenBy: .timeout), line: #line),
        // Waiting, but there is nothing to choose any more, or the Inbox asks no more: as routed; a choice made
        // still counts.
        Case(routed: byRank, candidates: ["a"], settings: ask, waiting: .init(sinceUSec: now), expected: .proceed,
             line: #line),
        Case(routed: byRank, candidates: ["a", "b"], settings: .rank, waiting: .init(sinceUSec: now),
             expected: .proceed, line: #line),
        Case(routed: byRank, candidates: ["a", "b"], settings: .rank, waiting: .init(sinceUSec: now, choice: "b"),
             expected: .deliver(handler: "b", chosenBy: .person), line: #line),
        Case(routed: byRank, candidates: ["a"], settings: ask, waiting: .init(sinceUSec: now, choice: "z"),
             expected: .proceed, line: #line),
        // A huge timeout never overflows into the past.
        Case(routed: byRank, candidates: ["a", "b"], settings: .init(mode: .ask, timeout: .seconds(Int64.max / 2)),
             waiting: .init(sinceUSec: now), expected: .wait(candidates: ["a", "b"], deadlineUSec: nil), line: #line),
    ]

    @Test(arguments: cases) func decide(_ c: Case) {
        #expect(HandlerChoice.decide(c.routed, candidates: c.candidates, settings: c.settings, waiting: c.waiting,
                                     nowUSec: Self.now) == c.expected)
    }

    static func parse(_ text: String) -> (AgentConfiguration, [String]) {
        let (configuration, diagnostics) = ConfigurationParser.parseAgent(Array(text.utf8), path: "/c")
        return (configuration, diagnostics.map(\.description))
    }

    @Test func settingsInAgentAndInboxSections() {
        let (configuration, diagnostics) = Self.parse("""
            [Agent]
            ChooseHandler=ask
            ChooseTimeoutSec=5min

            [Inbox]
            Path=/srv/scan
            ChooseHandler=rank

            [Inbox]
            Path=/srv/photos/
            ChooseTimeoutSec=infinity
            """)
        #expect(diagnostics == [])
        #expect(configuration.choice == HandlerChoice.Overrides(mode: .ask, timeout: .some(.seconds(300))))
        let common = configuration.choice.applied(to: .rank)
        #expect(configuration.inboxSections.map { $0.choice.applied(to: common) } == [
            HandlerChoice.Settings(mode: .rank, timeout: .seconds(300)), HandlerChoice.Settings(mode: .ask, timeout: nil),
        ])
        let inboxes = HandlerChoice.Inboxes(common: common, byInbox: ["/srv/scan": .rank])
        #expect(inboxes.settings(forInbox: "/srv/scan/") == .rank)
        #expect(inboxes.settings(forInbox: "/elsewhere") == common)
        #expect(inboxes.anyAsks)
        #expect(!HandlerChoice.Inboxes().anyAsks)
    }

    @Test(arguments: [
        ("[Agent]\nChooseHandler=always\n", "/c:2: invalid ChooseHandler= 'always': expected ask or rank"),
        ("[Agent]\nChooseTimeoutSec=soon\n", "/c:2: invalid ChooseTimeoutSec=: invalid time span 'soon'"),
        ("[Agent]\nChooseTimeoutSec=0\n", "/c:2: invalid ChooseTimeoutSec=: must be more than 0 (infinity: never)"),
        ("[Inbox]\nPath=/a\nChooseHandler=Ask\n", "/c:3: invalid ChooseHandler= 'Ask': expected ask or rank"),
    ])
    func badValues(_ text: String, _ expected: String) {
        let (configuration, diagnostics) = Self.parse(text)
        #expect(diagnostics.contains(expected), "\(diagnostics)")
        #expect(configuration.choice.mode == nil)
        #expect(configuration.inboxSections.isEmpty)
    }
}
