import Testing
@testable import InboxCore

/// Text previews: which encoding, which lines, and nothing that could drive a terminal.
@Suite("Preview: text decoding")
struct PreviewTextDecodingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        let truncated: Bool
        let encoding: TextEncoding
        let lines: [String]
        var testDescription: String { name }
    }

    static func utf16LE(_ text: String) -> [UInt8] { text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
    static func utf16BE(_ text: String) -> [UInt8] { text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }

    static let cases: [Case] = [
        Case(name: "ASCII", input: bytes("one\ntwo\n"), truncated: false, encoding: .utf8, lines: ["one", "two"]),
        Case(name: "UTF-8", input: bytes("caf\u{E9} \u{65E5}\u{672C}\nna\u{EF}ve"), truncated: false, encoding: .utf8,
             lines: ["caf\u{E9} \u{65E5}\u{672C}", "na\u{EF}ve"]),
        Case(name: "UTF-8 with a byte order mark", input: [0xEF, 0xBB, 0xBF] + bytes("\u{E9}t\u{E9}"), truncated: false,
             encoding: .utf8, lines: ["\u{E9}t\u{E9}"]),
        Case(name: "a byte order mark decides even over bad bytes", input: [0xEF, 0xBB, 0xBF, 0x61, 0xFF, 0x62],
             truncated: false, encoding: .utf8, lines: ["a\u{FFFD}b"]),
        Case(name: "Latin-1 café", input: [0x63, 0x61, 0x66, 0xE9], truncated: false, encoding: .latin1, lines: ["caf\u{E9}"]),
        Case(name: "windows-1252 curly quotes and euro", input: [0x93, 0x68, 0x69, 0x94, 0x20, 0x80, 0x35], truncated: false,
             encoding: .windows1252, lines: ["\u{201C}hi\u{201D} \u{20AC}5"]),
        Case(name: "windows-1252's undefined bytes alone are Latin-1's C1 controls, made visible",
             input: [0x61, 0x81, 0x8D, 0xE9], truncated: false, encoding: .latin1, lines: ["a<U+0081><U+008D>\u{E9}"]),
        Case(name: "windows-1252 with an undefined byte", input: [0x93, 0x81, 0x94], truncated: false,
             encoding: .windows1252, lines: ["\u{201C}<U+0081>\u{201D}"]),
        Case(name: "UTF-16LE with a mark", input: [0xFF, 0xFE] + utf16LE("h\u{E9}\u{65E5}\n\u{1F600}"), truncated: false,
             encoding: .utf16LE, lines: ["h\u{E9}\u{65E5}", "\u{1F600}"]),
        Case(name: "UTF-16BE with a mark", input: [0xFE, 0xFF] + utf16BE("h\u{E9}\r\nx"), truncated: false,
             encoding: .utf16BE, lines: ["h\u{E9}", "x"]),
        Case(name: "UTF-16LE without a mark", input: utf16LE("hello, world\nline two"), truncated: false,
             encoding: .utf16LE, lines: ["hello, world", "line two"]),
        Case(name: "UTF-16BE without a mark, some non-ASCII", input: utf16BE("na\u{EF}ve r\u{E9}sum\u{E9}"), truncated: false,
             encoding: .utf16BE, lines: ["na\u{EF}ve r\u{E9}sum\u{E9}"]),
        Case(name: "UTF-16 cut in a surrogate pair", input: [0xFF, 0xFE] + Array(utf16LE("a\u{1F600}").dropLast(2)),
             truncated: true, encoding: .utf16LE, lines: ["a"]),
        Case(name: "UTF-16 cut in a code unit", input: [0xFF, 0xFE] + utf16LE("ab") + [0x63], truncated: true,
             encoding: .utf16LE, lines: ["ab"]),
        Case(name: "UTF-16 of odd length, whole", input: [0xFF, 0xFE] + utf16LE("ab") + [0x63], truncated: false,
             encoding: .utf16LE, lines: ["ab\u{FFFD}"]),
        Case(name: "UTF-16 with a lone surrogate", input: [0xFF, 0xFE, 0x61, 0x00, 0x00, 0xD8, 0x62, 0x00], truncated: false,
             encoding: .utf16LE, lines: ["a\u{FFFD}b"]),
        Case(name: "CRLF, CR and LF", input: bytes("a\r\nb\rc\nd"), truncated: false, encoding: .utf8, lines: ["a", "b", "c", "d"]),
        Case(name: "empty lines kept, a last line break makes none", input: bytes("\n\r\n\ra\n"), truncated: false,
             encoding: .utf8, lines: ["", "", "", "a"]),
        Case(name: "CR then LF over the end of a line", input: bytes("a\r"), truncated: false, encoding: .utf8, lines: ["a"]),
        Case(name: "an escape sequence made visible", input: bytes("\u{1B}[31mred\u{1B}[0m\u{1B}]0;title\u{07}"),
             truncated: false, encoding: .utf8, lines: ["^[[31mred^[[0m^[]0;title^G"]),
        Case(name: "tab stays, other C0 and DEL in caret notation", input: bytes("a\tb\u{00}\u{08}\u{1F}\u{7F}"),
             truncated: false, encoding: .utf8, lines: ["a\tb^@^H^_^?"]),
        Case(name: "C1 controls in UTF-8 (CSI U+009B)", input: bytes("x\u{9B}2Jy\u{85}"), truncated: false,
             encoding: .utf8, lines: ["x<U+009B>2Jy<U+0085>"]),
        Case(name: "bidirectional overrides and isolates", input: bytes("a\u{202E}b\u{2066}c\u{2069}\u{200F}"),
             truncated: false, encoding: .utf8, lines: ["a<U+202E>b<U+2066>c<U+2069><U+200F>"]),
        Case(name: "a cut UTF-8 sequence at the end of a truncated buffer is dropped",
             input: bytes("caf\u{E9} ") + Array(bytes("\u{65E5}").prefix(2)), truncated: true, encoding: .utf8,
             lines: ["caf\u{E9} "]),
        Case(name: "a cut 4-byte sequence", input: bytes("x") + Array(bytes("\u{1F600}").prefix(3)), truncated: true,
             encoding: .utf8, lines: ["x"]),
        Case(name: "the same cut bytes in a whole file are not UTF-8",
             input: bytes("caf\u{E9} ") + Array(bytes("\u{65E5}").prefix(2)),
             truncated: false, encoding: .windows1252, lines: ["caf\u{C3}\u{A9} \u{E6}\u{2014}"]),
        Case(name: "invalid UTF-8 bytes", input: [0x61, 0xC3, 0x28, 0xFF], truncated: false, encoding: .latin1,
             lines: ["a\u{C3}(\u{FF}"]),
        Case(name: "empty", input: [], truncated: false, encoding: .utf8, lines: []),
        Case(name: "empty and truncated", input: [], truncated: true, encoding: .utf8, lines: []),
        Case(name: "NULs in both halves are not UTF-16", input: [0, 0, 0, 0, 0x61, 0], truncated: false, encoding: .utf8,
             lines: ["^@^@^@^@a^@"]),
    ]

    @Test(arguments: cases)
    func decoding(_ testCase: Case) {
        let decoded = TextDecoding.decode(testCase.input, truncated: testCase.truncated)
        #expect(decoded.encoding == testCase.encoding)
        #expect(decoded.lines == testCase.lines)
        #expect(decoded.truncated == testCase.truncated)
    }

    /// Whatever the bytes, nothing below U+0020 but tab and nothing in U+007F...U+009F reaches a line.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func garbageNeverCarriesAControlCharacter(_ seed: UInt64) {
        var garbage = Garbage(state: 0x6465_636F_6465 &* seed)
        for round in 0..<50 {
            let input = garbage.bytes(Int(garbage.next() % 4096))
            let decoded = TextDecoding.decode(input, truncated: round % 2 == 0)
            for line in decoded.lines {
                #expect(!line.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || (0x7F...0x9F).contains($0.value) })
            }
        }
    }

    @Test func aMegabyteIsDecodedWhole() {
        let line = bytes("0123456789 abcdefghij\r\n")
        let input = Array([[UInt8]](repeating: line, count: 50_000).joined())
        let decoded = TextDecoding.decode(input, truncated: false)
        #expect(decoded.lines.count == 50_000)
        #expect(decoded.lines.allSatisfy { $0 == "0123456789 abcdefghij" })
    }
}
