import Testing
@testable import InboxCore

/// Terminal keys from raw bytes, and the pager's moves over items and pages.
@Suite("Preview: terminal keys and the pager")
struct PreviewPagerTests {
    @Test(arguments: [
        ("letters", bytes("qN]"), [TerminalKey.character("q"), .character("N"), .character("]")]),
        ("UTF-8 characters", bytes("\u{E9}\u{65E5}\u{1F600}"),
         [.character("\u{E9}"), .character("\u{65E5}"), .character("\u{1F600}")]),
        ("escape alone", [0x1B], [.escape]),
        ("escape then a key in one read", bytes("\u{1B}q"), [.escape, .character("q")]),
        ("two escapes", [0x1B, 0x1B], [.escape, .escape]),
        ("CSI arrows", bytes("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D"), [.up, .down, .right, .left]),
        ("SS3 arrows", bytes("\u{1B}OA\u{1B}OB\u{1B}OC\u{1B}OD"), [.up, .down, .right, .left]),
        ("page keys", bytes("\u{1B}[5~\u{1B}[6~"), [.pageUp, .pageDown]),
        ("home", bytes("\u{1B}[H\u{1B}[1~\u{1B}OH\u{1B}[7~"), [.home, .home, .home, .home]),
        ("end", bytes("\u{1B}[F\u{1B}[4~\u{1B}OF\u{1B}[8~"), [.end, .end, .end, .end]),
        ("an arrow with a modifier", bytes("\u{1B}[1;5C"), [.right]),
        ("unknown CSI consumed whole", bytes("\u{1B}[2~x\u{1B}[15;2~\u{1B}[Z"), [.unknown, .character("x"), .unknown, .unknown]),
        ("unknown SS3", bytes("\u{1B}OPa"), [.unknown, .character("a")]),
        ("a cut CSI", bytes("\u{1B}[5"), [.unknown]),
        ("a cut SS3", bytes("\u{1B}O"), [.unknown]),
        ("enter as CR, LF and CRLF", bytes("\r\n\r\n"), [.enter, .enter]),
        ("CR LF LF", bytes("\r\n\n"), [.enter, .enter]),
        ("tab and Ctrl-C", [0x09, 0x03], [.character("\t"), .character("\u{03}")]),
        ("not UTF-8", [0xFF, 0x61, 0xC3], [.unknown, .character("a"), .unknown]),
        ("a cut UTF-8 sequence", [0xE6, 0x97], [.unknown, .unknown]),
        ("nothing", [], []),
    ])
    func keys(_ name: String, _ input: [UInt8], _ expected: [TerminalKey]) {
        #expect(TerminalKey.parse(input) == expected, "\(name)")
    }

    @Test func garbageIsAlwaysConsumed() {
        var garbage = Garbage(state: 0x6B657973)
        for _ in 0..<500 {
            let input = garbage.bytes(Int(garbage.next() % 64)).map { $0 % 3 == 0 ? 0x1B : $0 }
            let keys = TerminalKey.parse(input)
            #expect(keys.count <= input.count)
            #expect(input.isEmpty == keys.isEmpty)
        }
    }

    /// A key pressed in a state (item, page) and what it should do; pages per item are [3, 1, 2].
    struct Step: Sendable, CustomTestStringConvertible {
        let name: String
        let from: (item: Int, page: Int)
        let key: TerminalKey
        let action: PreviewPager.Action
        var testDescription: String { name }
    }

    static let steps: [Step] = [
        Step(name: "space: next page", from: (0, 0), key: .character(" "), action: .show(item: 0, page: 1)),
        Step(name: "n, →, ↓, PageDown: next page", from: (0, 1), key: .pageDown, action: .show(item: 0, page: 2)),
        Step(name: "past the last page: the next item's first", from: (0, 2), key: .character("n"), action: .show(item: 1, page: 0)),
        Step(name: "↓ past a one-page item", from: (1, 0), key: .down, action: .show(item: 2, page: 0)),
        Step(name: "→ at the very end: nothing", from: (2, 1), key: .right, action: .none),
        Step(name: "b: previous page", from: (2, 1), key: .character("b"), action: .show(item: 2, page: 0)),
        Step(name: "before the first page: the previous item's last", from: (1, 0), key: .up, action: .show(item: 0, page: 2)),
        Step(name: "p at the very start: nothing", from: (0, 0), key: .character("p"), action: .none),
        Step(name: "← at the very start: nothing", from: (0, 0), key: .left, action: .none),
        Step(name: "PageUp into a one-page item", from: (2, 0), key: .pageUp, action: .show(item: 1, page: 0)),
        Step(name: "]: next item's first page", from: (0, 1), key: .character("]"), action: .show(item: 1, page: 0)),
        Step(name: "Tab: next item", from: (1, 0), key: .character("\t"), action: .show(item: 2, page: 0)),
        Step(name: "N at the last item: nothing", from: (2, 1), key: .character("N"), action: .none),
        Step(name: "[: previous item's first page", from: (2, 1), key: .character("["), action: .show(item: 1, page: 0)),
        Step(name: "P: previous item's first page, not its last", from: (1, 0), key: .character("P"),
             action: .show(item: 0, page: 0)),
        Step(name: "P at the first item: nothing", from: (0, 2), key: .character("P"), action: .none),
        Step(name: "g: first page", from: (0, 2), key: .character("g"), action: .show(item: 0, page: 0)),
        Step(name: "Home on the first page: nothing", from: (0, 0), key: .home, action: .none),
        Step(name: "G: last page", from: (0, 0), key: .character("G"), action: .show(item: 0, page: 2)),
        Step(name: "End on a one-page item: nothing", from: (1, 0), key: .end, action: .none),
        Step(name: "q dismisses", from: (1, 0), key: .character("q"), action: .dismiss),
        Step(name: "Q dismisses", from: (0, 0), key: .character("Q"), action: .dismiss),
        Step(name: "Escape dismisses", from: (2, 1), key: .escape, action: .dismiss),
        Step(name: "Ctrl-C dismisses", from: (2, 1), key: .character("\u{03}"), action: .dismiss),
        Step(name: "another letter: nothing", from: (0, 1), key: .character("x"), action: .none),
        Step(name: "Enter: nothing", from: (0, 1), key: .enter, action: .none),
        Step(name: "an unknown key: nothing", from: (0, 1), key: .unknown, action: .none),
    ]

    /// Walks to `from` with keys, so the test uses only the public interface.
    static func pager(at from: (item: Int, page: Int)) -> PreviewPager {
        var pager = PreviewPager(pageCounts: [3, 1, 2])
        for _ in 0..<from.item { _ = pager.handle(.character("]")) }
        for _ in 0..<from.page { _ = pager.handle(.character(" ")) }
        return pager
    }

    @Test(arguments: steps)
    func moves(_ step: Step) {
        var pager = Self.pager(at: step.from)
        #expect((pager.item, pager.page) == step.from)
        #expect(pager.handle(step.key) == step.action)
        if case let .show(item, page) = step.action {
            #expect((pager.item, pager.page) == (item, page))
        } else {
            #expect((pager.item, pager.page) == step.from)
        }
    }

    @Test func aWalkThroughEveryPageAndBack() {
        var pager = PreviewPager(pageCounts: [2, 0, 3])
        var forward: [PreviewPager.Action] = []
        for _ in 0..<7 { forward.append(pager.handle(.character(" "))) }
        // An item that says 0 pages has one.
        #expect(forward == [.show(item: 0, page: 1), .show(item: 1, page: 0), .show(item: 2, page: 0),
                            .show(item: 2, page: 1), .show(item: 2, page: 2), .none, .none])
        var back: [PreviewPager.Action] = []
        for _ in 0..<7 { back.append(pager.handle(.left)) }
        #expect(back == [.show(item: 2, page: 1), .show(item: 2, page: 0), .show(item: 1, page: 0),
                         .show(item: 0, page: 1), .show(item: 0, page: 0), .none, .none])
    }

    @Test func noItems() {
        var pager = PreviewPager(pageCounts: [])
        for key in [TerminalKey.character(" "), .left, .home, .end, .character("]"), .character("[")] {
            #expect(pager.handle(key) == .none)
        }
        #expect(pager.handle(.character("q")) == .dismiss)
    }

    @Test func pageCountsThatShrinkAreRespected() {
        var pager = PreviewPager(pageCounts: [1, 5])
        _ = pager.handle(.character("]"))
        _ = pager.handle(.end)
        #expect((pager.item, pager.page) == (1, 4))
        pager.pageCounts = [1, 2]
        #expect(pager.handle(.character("b")) == .show(item: 1, page: 0))
        pager.pageCounts = [4]
        #expect(pager.handle(.character("b")) == .none)
        #expect(pager.handle(.character("G")) == .show(item: 0, page: 3))
    }
}
