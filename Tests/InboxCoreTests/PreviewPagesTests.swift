import Testing
@testable import InboxCore

/// Display width, and text and tables laid out in pages.
@Suite("Preview: pages")
struct PreviewPagesTests {
    @Test(arguments: [
        ("", 0), ("abc", 3), ("caf\u{E9}", 4), ("e\u{301}", 1), ("\u{301}", 0), ("\u{65E5}\u{672C}", 4),
        ("\u{D55C}\u{AE00}", 4), ("\u{FF21}", 2), ("\u{FF71}", 1), ("\u{3000}", 2), ("\u{1F600}", 2),
        ("\u{2764}", 1), ("\u{2764}\u{FE0F}", 2), ("\u{1F1EB}\u{1F1F7}", 2), ("\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}", 2),
        ("\u{200B}", 0), ("a\u{200D}b", 2), ("\u{AD}", 1), ("\u{1100}\u{1161}\u{11A8}", 2), ("\t", 0),
        ("\u{20000}", 2), ("\u{0410}\u{0411}", 2),
    ])
    func displayWidth(_ text: String, _ width: Int) {
        #expect(PreviewPages.displayWidth(text) == width)
    }

    @Test(arguments: [
        ("wrapping", ["abcdefghij"], 4, 10, [["abcd", "efgh", "ij"]]),
        ("exact width", ["abcd"], 4, 10, [["abcd"]]),
        ("empty lines kept", ["", "a", ""], 4, 10, [["", "a", ""]]),
        ("wide characters are not split", ["\u{65E5}\u{672C}\u{8A9E}"], 5, 10, [["\u{65E5}\u{672C}", "\u{8A9E}"]]),
        ("a wide character alone on a line one column wide", ["a\u{65E5}b"], 1, 10, [["a", "\u{65E5}", "b"]]),
        ("a combining mark stays with its letter", ["abce\u{301}f"], 4, 10, [["abce\u{301}", "f"]]),
        ("tabs to 8-column stops", ["a\tb", "abcdefgh\tc", "\u{65E5}\tx"], 80, 10,
         [["a       b", "abcdefgh        c", "\u{65E5}      x"]]),
        ("tab stops count from the file's line, not the wrapped one", ["abcdef\tgh"], 10, 10, [["abcdef  gh"]]),
        ("a tab wraps like spaces", ["abcdefghij\tk"], 10, 10, [["abcdefghij", "      k"]]),
        ("pages", ["1", "2", "3", "4", "5"], 10, 2, [["1", "2"], ["3", "4"], ["5"]]),
        ("a wrapped line goes on on the next page", ["abcdef"], 2, 2, [["ab", "cd"], ["ef"]]),
        ("no lines: one empty page", [], 10, 10, [[]]),
        ("control characters made visible", ["\u{1B}[2J\u{9B}"], 80, 10, [["^[[2J<U+009B>"]]),
        ("width and height below 1 are 1", ["ab"], 0, -3, [["a"], ["b"]]),
    ])
    func text(_ name: String, _ lines: [String], _ width: Int, _ height: Int, _ expected: [[String]]) {
        #expect(PreviewPages.text(lines, width: width, height: height) == expected, "\(name)")
    }

    @Test(arguments: [1, 2, 3, 7, 40])
    func textNeverPassesTheWidth(_ width: Int) {
        let lines = ["\u{65E5}\u{672C}\u{8A9E}\u{306E}\u{6587}\u{7AE0}abc\tdef \u{1F600}\u{1F600} caf\u{E9}\u{301}", "", "\t\t\t"]
        let pages = PreviewPages.text(lines, width: width, height: 4)
        for line in pages.joined() {
            #expect(PreviewPages.displayWidth(line) <= max(width, 2), "\(line)")
        }
        #expect(pages.dropLast().allSatisfy { $0.count == 4 })
        #expect(pages.joined().joined() == lines.map(PreviewPages.expandingTabs).joined())
    }

    // MARK: tables

    static func table(_ rows: [[String]]) -> DelimitedTable { DelimitedTable(rows: rows, truncated: false) }

    @Test func columnsAlignedWithTwoSpacesAndARule() {
        let pages = PreviewPages.table(Self.table([["name", "city", "n"], ["Zo\u{EB}", "\u{6771}\u{4EAC}", "1"],
                                                    ["Bartholomew", "Paris", "22"]]), width: 80, height: 10)
        #expect(pages == [[
            "name         city   n",
            "───────────  ─────  ──",
            "Zo\u{EB}          \u{6771}\u{4EAC}   1",
            "Bartholomew  Paris  22",
        ]])
    }

    /// The display column where each shown column starts, read from a line: the given starts must each begin a
    /// character (not fall inside a wide one) that is not a space, with two spaces before it.
    static func startsAligned(_ line: String, at starts: [Int]) -> Bool {
        var characterAt: [Int: Character] = [:]
        var column = 0
        for character in line {
            characterAt[column] = character
            column += PreviewPages.displayWidth(character)
        }
        return starts.allSatisfy { start in
            guard let character = characterAt[start], character != " " else { return false }
            return start == 0 || (characterAt[start - 1] == " " && characterAt[start - 2] == " ")
        }
    }

    @Test(arguments: [80, 30, 20, 14])
    func everyColumnStartsAtTheSameDisplayColumn(_ width: Int) throws {
        let rows = [["ID", "Name", "City", "Note"], ["1", "\u{5C71}\u{7530}\u{592A}\u{90CE}", "\u{6771}\u{4EAC}", "x"],
                    ["22", "Zo\u{EB}", "Paris", "\u{1F600}ok"], ["333", "Bartholomew", "K\u{F8}benhavn", "long long note"]]
        let pages = PreviewPages.table(Self.table(rows), width: width, height: 100)
        let lines = try #require(pages.first)
        let rule = lines[1]
        // The rule's runs of ─ mark where each shown column starts.
        var starts: [Int] = []
        var previous: Character = " "
        for (column, character) in rule.enumerated() {
            if character == "─" && previous != "─" { starts.append(column) }
            previous = character
        }
        #expect(!starts.isEmpty && starts[0] == 0)
        for line in lines where line != rule {
            #expect(Self.startsAligned(line, at: starts), "\(line)")
            #expect(PreviewPages.displayWidth(line) <= width, "\(line)")
        }
        #expect(PreviewPages.displayWidth(rule) <= width)
    }

    @Test func theHeaderAndRuleTopEveryPage() {
        let rows = [["h1", "h2"]] + (1...7).map { ["r\($0)", "v\($0)"] }
        let pages = PreviewPages.table(Self.table(rows), width: 40, height: 5)
        #expect(pages.map(\.count) == [5, 5, 3])
        for page in pages { #expect(Array(page.prefix(2)) == ["h1  h2", "──  ──"]) }
        #expect(pages.joined().filter { $0.hasPrefix("r") } == (1...7).map { "r\($0)  v\($0)" })
    }

    @Test(arguments: [2, 1, 0])
    func aPageTooShortStillShowsARow(_ height: Int) {
        let pages = PreviewPages.table(Self.table([["h"], ["a"], ["b"]]), width: 10, height: height)
        #expect(pages == [["h", "─", "a"], ["h", "─", "b"]])
    }

    @Test func aWideCellIsCutToItsShare() {
        let pages = PreviewPages.table(Self.table([["id", "description"], ["1", "a very long description indeed"]]),
                                       width: 20, height: 10)
        #expect(pages == [["id  description", "──  ────────────────", "1   a very long des…"]])
    }

    @Test func aCutNeverSplitsAWideCharacter() {
        let pages = PreviewPages.table(Self.table([["\u{65E5}\u{672C}\u{8A9E}\u{306E}\u{6587}\u{7AE0}", "x"]]), width: 9, height: 10)
        // 9 columns: "x" keeps 1, the separator 2, the first column 6: two wide characters, then … and a space.
        #expect(pages == [["\u{65E5}\u{672C}…   x", "──────  ─"]])
    }

    @Test func columnsThatDoNotFitAreCounted() {
        let rows = [(0..<6).map { "column\($0)xyz" }, (0..<6).map { "value\($0)" }]
        let pages = PreviewPages.table(Self.table(rows), width: 30, height: 10)
        #expect(pages == [["column…  column…", "───────  ───────  (+4 columns)", "value0   value1"]])
    }

    @Test func onlyTheFirstColumnFitsBesideTheNote() {
        let pages = PreviewPages.table(Self.table([(0..<4).map { String(repeating: "\($0)", count: 10) }]), width: 20, height: 10)
        #expect(pages == [["00000…", "──────  (+3 columns)"]])
        #expect(TableLayout.note(1) == "(+1 column)")
    }

    /// The note costs more than a narrow column, so a column is shown rather than announced when it alone is missing.
    @Test func aColumnRatherThanTheNote() {
        let pages = PreviewPages.table(Self.table([["aaaaaaaaaa", "bbbbbbbbbb"]]), width: 12, height: 10)
        #expect(pages == [["aaaa…  bbbb…", "─────  ─────"]])
    }

    @Test func tooNarrowForTheNote() {
        let pages = PreviewPages.table(Self.table([["abcdefgh", "b", "c"]]), width: 4, height: 10)
        #expect(pages == [["abc…", "────"]])
    }

    @Test func multiLineCellsOnOneLineAndRaggedRows() {
        let table = DelimitedTable.parse("a,b,c\n\"two\nlines\",\"tab\there\"\nlast\n\"cr\r\nlf\",\u{1B}[1m,x", delimiter: .comma)
        let pages = PreviewPages.table(table, width: 80, height: 10)
        #expect(pages == [[
            "a          b         c",
            "─────────  ────────  ─",
            "two⏎lines  tab here",
            "last",
            "cr⏎lf      ^[[1m     x",
        ]])
    }

    /// Sizes from a terminal that lies, or from a caller's arithmetic, never trap.
    @Test(arguments: [(Int.max, Int.max), (Int.min, Int.min), (Int.max, Int.min), (Int.min, Int.max)])
    func extremeSizes(_ width: Int, _ height: Int) {
        let table = Self.table([["a", "b"], ["1", "2"], ["3", "4"]])
        let rows = PreviewPages.table(table, width: width, height: height).joined()
        #expect(rows.filter { $0.hasPrefix("1") || $0.hasPrefix("3") }.count == 2)
        #expect(PreviewPages.text(["abc", "d"], width: width, height: height).joined().joined() == "abcd")
    }

    @Test func anEmptyTableIsOneEmptyPage() {
        #expect(PreviewPages.table(Self.table([]), width: 80, height: 10) == [[]])
        #expect(PreviewPages.table(Self.table([[]]), width: 80, height: 10) == [[]])
        #expect(PreviewPages.table(Self.table([[""]]), width: 80, height: 10) == [["", "─"]])
    }

    @Test(arguments: [(10, [1, 2, 3], 10, [1, 2, 3]), (6, [10, 1, 10], 6, [3, 1, 2]), (9, [2, 30], 9, [2, 7]),
                      (10, [4, 4, 9, 9], 10, [3, 3, 2, 2])])
    func fairShares(_ available: Int, _ natural: [Int], _ total: Int, _ expected: [Int]) {
        let widths = TableLayout.share(natural, available)
        #expect(widths == expected)
        #expect(widths.reduce(0, +) <= total)
    }
}
