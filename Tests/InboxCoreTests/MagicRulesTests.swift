import Foundation
import InboxCore
import Testing

/// shared-mime-info's compiled magic format: parsing (forgiving, bounded) and matching (priorities, ranges, masks,
/// word sizes, nested matchlets), table-driven.
@Suite("shared-mime-info magic rules")
struct MagicRulesTests {
    /// One matchlet line: `[indent]>offset=<len><value>[&mask][~size][+range]\n`.
    static func line(_ indent: Int = 0, _ offset: Int, _ value: [UInt8], mask: [UInt8]? = nil, word: Int? = nil,
                     range: Int? = nil) -> [UInt8] {
        var bytes = Array((indent == 0 ? "" : "\(indent)").utf8) + Array(">\(offset)=".utf8)
        bytes += [UInt8(value.count >> 8), UInt8(value.count & 0xFF)] + value
        if let mask { bytes += Array("&".utf8) + mask }
        if let word { bytes += Array("~\(word)".utf8) }
        if let range { bytes += Array("+\(range)".utf8) }
        return bytes + [0x0A]
    }

    static func section(_ priority: Int, _ type: String, _ lines: [UInt8]...) -> [UInt8] {
        Array("[\(priority):\(type)]\n".utf8) + lines.flatMap { $0 }
    }

    static func file(_ sections: [UInt8]...) -> [UInt8] { MagicRules.header + sections.flatMap { $0 } }

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let rules: [UInt8]
        let data: [UInt8]
        let expected: String?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a value at an offset", rules: file(section(50, "image/png", line(0, 0, png))),
             data: png + [0, 0], expected: "image/png"),
        Case(name: "too short to hold the value", rules: file(section(50, "image/png", line(0, 0, png))),
             data: Array(png.prefix(5)), expected: nil),
        Case(name: "a range: the value anywhere in it", rules: file(section(50, "text/x-foo", line(0, 2, Array("foo".utf8), range: 10))),
             data: Array("..........foo".utf8).suffix(13).map { $0 }, expected: "text/x-foo"),
        Case(name: "past the range", rules: file(section(50, "text/x-foo", line(0, 2, Array("foo".utf8), range: 3))),
             data: Array("abcdefgfoo".utf8), expected: nil),
        Case(name: "a mask", rules: file(section(50, "application/x-m", line(0, 0, [0x40, 0x00], mask: [0xF0, 0x00]))),
             data: [0x4A, 0x99], expected: "application/x-m"),
        Case(name: "a mask that does not fit", rules: file(section(50, "application/x-m", line(0, 0, [0x40], mask: [0xF0]))),
             data: [0x5A], expected: nil),
        Case(name: "a 16-bit word is compared in host order",
             rules: file(section(50, "application/x-w", line(0, 0, [0x12, 0x34], word: 2))),
             data: UInt16(1).littleEndian == 1 ? [0x34, 0x12] : [0x12, 0x34], expected: "application/x-w"),
        Case(name: "higher priority first, whatever the file order",
             rules: file(section(40, "application/x-low", line(0, 0, Array("AB".utf8))),
                         section(80, "application/x-high", line(0, 0, Array("A".utf8)))),
             data: Array("ABC".utf8), expected: "application/x-high"),
        Case(name: "equal priorities: file order",
             rules: file(section(50, "application/x-first", line(0, 0, Array("A".utf8))),
                         section(50, "application/x-second", line(0, 0, Array("A".utf8)))),
             data: Array("A".utf8), expected: "application/x-first"),
        Case(name: "a child must match too",
             rules: file(section(50, "application/x-nested", line(0, 0, Array("PK".utf8)), line(1, 30, Array("mimetype".utf8)))),
             data: Array("PK".utf8) + [UInt8](repeating: 0, count: 40), expected: nil),
        Case(name: "a child that matches",
             rules: file(section(50, "application/x-nested", line(0, 0, Array("PK".utf8)), line(1, 4, Array("xy".utf8)))),
             data: Array("PK..xy".utf8), expected: "application/x-nested"),
        Case(name: "the second top-level line after a failing child chain",
             rules: file(section(50, "application/x-alt", line(0, 0, Array("A".utf8)), line(1, 1, Array("Z".utf8)),
                                 line(0, 0, Array("AB".utf8)))),
             data: Array("AB".utf8), expected: "application/x-alt"),
        Case(name: "a broken section is skipped, the next still counts",
             rules: file(Array("[50:application/x-broken]\n>zz\n".utf8), section(50, "image/png", line(0, 0, png))),
             data: png, expected: "image/png"),
        Case(name: "an indent that skips a level breaks its section",
             rules: file(section(50, "application/x-skip", line(0, 0, Array("A".utf8)), line(2, 1, Array("B".utf8))),
                         section(40, "application/x-ok", line(0, 0, Array("A".utf8)))),
             data: Array("AB".utf8), expected: "application/x-ok"),
        Case(name: "no header: no rules", rules: Array("[50:image/png]\n".utf8) + line(0, 0, png), data: png, expected: nil),
    ]

    @Test(arguments: cases) func matches(_ test: Case) {
        let rules = MagicRules(sources: [test.rules])
        #expect(rules.match(test.data)?.mimeType == test.expected)
    }

    @Test func skippedSectionsAreCountedAndExtentBoundsReads() {
        let rules = MagicRules(sources: [Self.file(
            Self.section(50, "application/x-broken", Array(">5x\n".utf8)),
            Self.section(50, "text/x-foo", Self.line(0, 100, Array("foo".utf8), range: 50)),
            Array("[999:application/x-priority]\n".utf8) + Self.line(0, 0, [1]),
            Self.section(50, "application/x-offset", Self.line(0, MagicRules.maximumOffset + 1, [1])),
            Self.section(50, "application/x-value", Self.line(0, 0, [UInt8](repeating: 7, count: MagicRules.maximumValueLength + 1))))])
        #expect(rules.sections.map(\.mimeType) == ["text/x-foo"])
        #expect(rules.skippedSections == 4)
        #expect(rules.extent == 100 + 50 - 1 + 3)
        // A match at the end of the range, and none one byte later (the extent cuts it).
        #expect(rules.match([UInt8](repeating: 0, count: 149) + Array("foo".utf8))?.mimeType == "text/x-foo")
        #expect(rules.match([UInt8](repeating: 0, count: 150) + Array("foo".utf8)) == nil)
    }

    @Test func aMoreImportantDirectoryOverridesATypesRules() {
        let user = Self.file(Self.section(50, "image/png", Self.line(0, 0, Array("NOTPNG".utf8))),
                             Array("[50:image/gif]\n__NOMAGIC__\n".utf8))
        let system = Self.file(Self.section(50, "image/png", Self.line(0, 0, Self.png)),
                               Self.section(50, "image/gif", Self.line(0, 0, Array("GIF8".utf8))))
        let rules = MagicRules(sources: [user, system])
        #expect(rules.match(Self.png) == nil)
        #expect(rules.match(Array("NOTPNG".utf8))?.mimeType == "image/png")
        #expect(rules.match(Array("GIF89a".utf8)) == nil)
    }

    /// What the rules leave to libmagic, and how the two answers combine.
    @Test func libmagicRefinesOnlyGenericAnswers() {
        let zip = MagicRules.Match(mimeType: "application/zip", priority: 40)
        let png = MagicRules.Match(mimeType: "image/png", priority: 50)
        #expect(MagicRules.needsLibmagic(nil))
        #expect(MagicRules.needsLibmagic(zip))
        #expect(!MagicRules.needsLibmagic(png))
        #expect(MagicRules.combine(rules: zip, libmagic: "application/octet-stream") == ("application/zip", .both))
        #expect(MagicRules.combine(rules: zip, libmagic: "application/vnd.oasis.opendocument.text")
                == ("application/vnd.oasis.opendocument.text", .both))
        #expect(MagicRules.combine(rules: nil, libmagic: "application/octet-stream") == ("application/octet-stream", .libmagic))
    }

    /// After libmagic's built-in checks (MAGIC_NO_CHECK_SOFT), whether its whole database must be searched: for
    /// text, for a container the rules named, and for binary nothing named only when the decision has no claim.
    @Test(arguments: [
        (nil, "text/plain", false, true),
        (nil, "text/plain", true, true),
        ("application/zip", "application/octet-stream", false, true),
        ("application/x-ole-storage", "application/octet-stream", false, true),
        ("text/plain", "application/octet-stream", false, true),
        (nil, "application/octet-stream", true, true),
        (nil, "application/octet-stream", false, false),
        (nil, "application/json", true, false),
        (nil, "text/csv", true, false),
        (nil, "application/x-tar", true, false),
        ("application/x-ole-storage", "application/vnd.ms-excel", true, false),
    ] as [(String?, String, Bool, Bool)])
    func libmagicsDatabaseOnlyWhereTheDecisionNeedsIt(rules: String?, quick: String, namingBinary: Bool,
                                                      searched: Bool) {
        let match = rules.map { MagicRules.Match(mimeType: $0, priority: 40) }
        #expect(MagicRules.needsSoftMagic(rules: match, quick: quick, namingBinary: namingBinary) == searched)
    }

    @Test func costsRoundTripThroughTheStatusFile() throws {
        var costs = SniffCosts()
        costs.add(.rules, microseconds: 20)
        costs.add(.rules, microseconds: 40)
        costs.add(.libmagic, microseconds: 450)
        costs.add(.quick, microseconds: 9)
        let read = SniffCosts(try JSONValue.parse(Array(costs.json().utf8)).get())
        #expect(read == costs)
        #expect(read[.rules].meanMicroseconds == 30)
        #expect(read[.both].files == 0)
        #expect(read[.quick].files == 1 && read[.quick].microseconds == 9)
    }

    /// The host's own compiled file (when there is one) parses without a skipped section, and its extent is
    /// what GLib reads for it: the largest offset + range + value length of any line.
    @Test func theHostsMagicFileParses() throws {
        guard let data = FileManager.default.contents(atPath: "/usr/share/mime/magic") else { return }
        let bytes = [UInt8](data)
        let rules = MagicRules(sources: [bytes])
        #expect(rules.sections.count > 300)
        #expect(rules.skippedSections == 0)
        #expect(rules.extent > 1000 && rules.extent <= MagicRules.maximumExtent)
        #expect(rules.match(Self.png + [0, 0, 0, 0x0D] + Array("IHDR".utf8))?.mimeType == "image/png")
        #expect(rules.match(Array("%PDF-1.4\n".utf8))?.mimeType == "application/pdf")
        #expect(FuzzEntry.magic(bytes) == [])
    }
}
