import Testing
@testable import InboxCore

/// CSV and TSV as RFC 4180 has them, forgiving, bounded.
@Suite("Preview: delimited tables")
struct PreviewDelimitedTableTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let delimiter: TableDelimiter
        let rows: [[String]]
        var testDescription: String { name }
        init(_ name: String, _ text: String, _ rows: [[String]]) {
            self.init(name, text, .comma, rows)
        }
        init(_ name: String, _ text: String, _ delimiter: TableDelimiter, _ rows: [[String]]) {
            self.name = name
            self.text = text
            self.delimiter = delimiter
            self.rows = rows
        }
    }

    static let cases: [Case] = [
        Case("plain cells", "a,b,c\n1,2,3\n", [["a", "b", "c"], ["1", "2", "3"]]),
        Case("CRLF", "a,b\r\n1,2\r\n", [["a", "b"], ["1", "2"]]),
        Case("a lone CR ends a row too", "a,b\r1,2", [["a", "b"], ["1", "2"]]),
        Case("no line break at the end", "a,b\n1,2", [["a", "b"], ["1", "2"]]),
        Case("a quoted delimiter", "name,place\n\"Smith, J.\",\"Paris, FR\"\n", [["name", "place"], ["Smith, J.", "Paris, FR"]]),
        Case("doubled quotes", "\"say \"\"hi\"\"\",\"\"\"\",x", [["say \"hi\"", "\"", "x"]]),
        Case("line breaks in quotes", "\"two\nlines\",\"crlf\r\nhere\"\nnext", [["two\nlines", "crlf\r\nhere"], ["next"]]),
        Case("an empty quoted cell", "\"\",a", [["", "a"]]),
        Case("empty cells", ",,\n,", [["", "", ""], ["", ""]]),
        Case("ragged rows", "a\nb,c,d\ne,f", [["a"], ["b", "c", "d"], ["e", "f"]]),
        Case("quotes inside an unquoted cell are characters", "5\" disk,it's", [["5\" disk", "it's"]]),
        Case("text after a closing quote stays in the cell", "\"a\"b,c", [["ab", "c"]]),
        Case("an empty line is a row of one empty cell", "a\n\nb\n", [["a"], [""], ["b"]]),
        Case("an unterminated quote runs to the end", "a,\"open\nstill, open", [["a", "open\nstill, open"]]),
        Case("TSV", "a\tb\n\"x\ty\"\tz\n", .tab, [["a", "b"], ["x\ty", "z"]]),
        Case("commas in TSV are characters", "a,b\tc", .tab, [["a,b", "c"]]),
        Case("non-ASCII and a CRLF grapheme", "caf\u{E9},\u{65E5}\u{672C}\r\n\u{1F600},x",
             [["caf\u{E9}", "\u{65E5}\u{672C}"], ["\u{1F600}", "x"]]),
        Case("empty text", "", []),
        Case("only a line break", "\n", [[""]]),
    ]

    @Test(arguments: cases)
    func parsing(_ testCase: Case) {
        let table = DelimitedTable.parse(testCase.text, delimiter: testCase.delimiter)
        #expect(table.rows == testCase.rows)
        #expect(!table.truncated)
    }

    @Test(arguments: [
        ("a\nb\nc\n", 2, 10, [["a"], ["b"]], true),
        ("a\nb\n", 2, 10, [["a"], ["b"]], false),
        ("a\r\nb\r\n", 2, 10, [["a"], ["b"]], false),
        ("a,b,c\nd", 5, 2, [["a", "b"], ["d"]], true),
        ("a,b\nd", 5, 2, [["a", "b"], ["d"]], false),
        ("a", 0, 10, [], true),
        ("", 0, 0, [], false),
        ("a,b", 5, 0, [[]], true),
        ("a", -1, -1, [], true),
    ])
    func bounds(_ text: String, _ maximumRows: Int, _ maximumColumns: Int, _ rows: [[String]], _ truncated: Bool) {
        let table = DelimitedTable.parse(text, delimiter: .comma, maximumRows: maximumRows, maximumColumns: maximumColumns)
        #expect(table.rows == rows)
        #expect(table.truncated == truncated)
    }

    @Test func garbageStaysWithinTheBounds() {
        var garbage = Garbage(state: 0x6373_7621)
        for _ in 0..<200 {
            let scalars = garbage.bytes(Int(garbage.next() % 500)).map { byte -> Character in
                switch byte % 8 {
                case 0: "\""
                case 1: ","
                case 2: "\n"
                case 3: "\r"
                default: Character(Unicode.Scalar(byte))
                }
            }
            let table = DelimitedTable.parse(String(scalars), delimiter: .comma, maximumRows: 7, maximumColumns: 5)
            #expect(table.rows.count <= 7)
            #expect(table.rows.allSatisfy { $0.count <= 5 })
        }
    }
}
