import Testing
@testable import InboxCore

/// The binary property-list reader: what plistlib writes, and every error with its offset.
@Suite("Binary property lists")
struct BinaryPropertyListTests {
    typealias ErrorCase = PropertyListErrorCase

    // MARK: Binary values

    @Test func binaryFromPlistlib() throws {
        let root = try PropertyList.parse(PropertyListFixtures.allTypes)
        guard case .dict(let entries) = root.value else {
            Issue.record("not a dict")
            return
        }
        // plistlib sorts keys.
        #expect(entries.map(\.key) == ["array", "big", "data", "date", "empty", "int", "negative", "nested", "no",
                                       "real", "string", "uid", "unicode", "yes"])
        let values = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value.value) })
        #expect(values["string"] == .string("hello"))
        #expect(values["unicode"] == .string("h\u{E9}llo \u{2603}"))
        #expect(values["int"] == .integer(42))
        #expect(values["negative"] == .integer(-7))
        #expect(values["big"] == .integer(Int128(UInt64.max)))
        #expect(values["real"] == .real(2.5))
        #expect(values["yes"] == .bool(true))
        #expect(values["no"] == .bool(false))
        #expect(values["date"] == .date(725_857_445))
        #expect(values["data"] == .data([0x00, 0x01, 0xFE, 0xFF]))
        #expect(values["uid"] == .uid(7))
        #expect(values["empty"] == .dict([]))
        #expect(stripped(values["array"]) == .array([node(.integer(1)), node(.string("two")), node(.array([node(.real(3))]))]))
        #expect(stripped(values["nested"]) == .dict([PropertyListEntry(key: "k", at: .offset(0), value: node(.string("v")))]))
        // Binary nodes carry their object's offset: the top dict follows the magic.
        #expect(root.location == .offset(8))
        #expect(entries.allSatisfy { if case .offset(let offset) = $0.value.location { offset > 8 } else { false } })
    }

    @Test func binaryAndXMLAgree() throws {
        // The same value written both ways by plistlib (sets become arrays; XML has no UID, so it is left out).
        let binary = try PropertyList.parse(PropertyListFixtures.profileEditor)
        let text = try PropertyList.parse(Array(InfoPlistTests.xmlInfoPlist.utf8))
        #expect(stripped(binary.value) == stripped(text.value))
    }

    // MARK: Binary errors (hand-made: no tool writes these)

    static let binaryErrors: [ErrorCase] = [
        ErrorCase(name: "other version", input: Array("bplist01".utf8) + [UInt8](repeating: 0, count: 40),
                  error: "offset 6: unsupported binary property list version '01'"),
        ErrorCase(name: "magic only", input: Array("bplist00".utf8),
                  error: "offset 0: truncated: 8 bytes is too short for a binary property list"),
        ErrorCase(name: "zero offset size", input: bplist([[0x09]], offsetSize: 0),
                  error: "offset 10: trailer: invalid offset size 0 or reference size 1"),
        ErrorCase(name: "reference size 9", input: bplist([[0x09]], referenceSize: 9),
                  error: "offset 10: trailer: invalid offset size 1 or reference size 9"),
        ErrorCase(name: "no objects", input: bplist([[0x09]], count: 0),
                  error: "offset 10: trailer: object count 0 does not fit in the file"),
        ErrorCase(name: "object count overflows", input: bplist([[0x09]], count: .max),
                  error: "offset 10: trailer: object count 18446744073709551615 does not fit in the file"),
        ErrorCase(name: "top object out of range", input: bplist([[0x09]], top: 1),
                  error: "offset 10: trailer: top object 1 is not one of the 1 objects"),
        ErrorCase(name: "offset table past the end", input: bplist([[0x09]], table: 1000),
                  error: "offset 10: trailer: offset table at 1000 (1 entries) lies outside the file"),
        ErrorCase(name: "offset table in the header", input: bplist([[0x09]], table: 3),
                  error: "offset 10: trailer: offset table at 3 (1 entries) lies outside the file"),
        ErrorCase(name: "offset table overflows", input: bplist([[0x09]], table: .max),
                  error: "offset 10: trailer: offset table at 18446744073709551615 (1 entries) lies outside the file"),
        ErrorCase(name: "object offset past the objects", input: bplist([[0x09]], offsets: [200]),
                  error: "offset 9: object 0 has offset 200, outside the objects"),
        ErrorCase(name: "object offset in the header", input: bplist([[0x09]], offsets: [2]),
                  error: "offset 9: object 0 has offset 2, outside the objects"),
        ErrorCase(name: "array containing itself", input: bplist([[0xA1, 0x00]]),
                  error: "offset 8: reference cycle: object 0 contains itself"),
        ErrorCase(name: "two arrays containing each other", input: bplist([[0xA1, 0x01], [0xA1, 0x00]]),
                  error: "offset 8: reference cycle: object 0 contains itself"),
        ErrorCase(name: "dict containing itself", input: bplist([[0xD1, 0x01, 0x00], [0x51, 0x61]]),
                  error: "offset 8: reference cycle: object 0 contains itself"),
        ErrorCase(name: "reference out of range", input: bplist([[0xA1, 0x05]]),
                  error: "offset 8: reference 5 is not one of the 1 objects"),
        ErrorCase(name: "truncated string", input: bplist([[0x55, 0x61]]),
                  error: "offset 8: object runs past the end of the objects (truncated?)"),
        ErrorCase(name: "truncated integer", input: bplist([[0x13, 0x00, 0x01]]),
                  error: "offset 8: object runs past the end of the objects (truncated?)"),
        ErrorCase(name: "truncated array", input: bplist([[0xA4, 0x00]]),
                  error: "offset 8: object runs past the end of the objects (truncated?)"),
        ErrorCase(name: "huge array count", input: bplist([[0xAF, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]),
                  error: "offset 8: length 9223372036854775807 runs past the end of the objects"),
        ErrorCase(name: "huge dict count", input: bplist([[0xDF, 0x12, 0x40, 0x00, 0x00, 0x00]], referenceSize: 8),
                  error: "offset 8: length 1073741824 runs past the end of the objects"),
        ErrorCase(name: "dict references past the end", input: bplist([[0xDF, 0x10, 0x0A]], referenceSize: 8),
                  error: "offset 8: object runs past the end of the objects (truncated?)"),
        ErrorCase(name: "bad length marker", input: bplist([[0x5F, 0x22]]), error: "offset 8: invalid length marker 0x22"),
        ErrorCase(name: "null", input: bplist([[0x00]]), error: "offset 8: null is not a property-list value"),
        ErrorCase(name: "fill byte", input: bplist([[0x0F]]), error: "offset 8: unknown object type 0x0f"),
        ErrorCase(name: "unknown type", input: bplist([[0x70]]), error: "offset 8: unknown object type 0x70"),
        ErrorCase(name: "32-byte integer", input: bplist([[0x15] + [UInt8](repeating: 0, count: 32)]),
                  error: "offset 8: integer of 32 bytes is not supported"),
        ErrorCase(name: "2-byte real", input: bplist([[0x21, 0x00, 0x00]]), error: "offset 8: real of 2 bytes is not supported"),
        ErrorCase(name: "bad date marker", input: bplist([[0x32, 0, 0, 0, 0]]), error: "offset 8: unknown object type 0x32"),
        ErrorCase(name: "9-byte UID", input: bplist([[0x88] + [UInt8](repeating: 0, count: 9)]),
                  error: "offset 8: UID of 9 bytes is not supported"),
        ErrorCase(name: "non-ASCII ASCII string", input: bplist([[0x51, 0xC3]]),
                  error: "offset 8: ASCII string holds a non-ASCII byte"),
        ErrorCase(name: "lone surrogate", input: bplist([[0x61, 0xD8, 0x00]]), error: "offset 8: string is not valid UTF-16"),
        ErrorCase(name: "integer key", input: bplist([[0xD1, 0x01, 0x02], [0x10, 0x01], [0x09]]),
                  error: "offset 11: dict key is an integer, not a string"),
        ErrorCase(name: "65 levels", input: bplist((0..<65).map { $0 == 64 ? [0xA0] : [0xA1, UInt8($0 + 1)] }),
                  error: "offset 136: nested deeper than 64 levels"),
        ErrorCase(name: "shared data expanding past 16 MiB",
                  input: bplist([[0xAF, 0x11, 0x01, 0x2C] + [UInt8](repeating: 0x01, count: 300),
                                 [0x4F, 0x11, 0xEA, 0x60] + [UInt8](repeating: 0x61, count: 60_000)], offsetSize: 2),
                  error: "offset 312: more than 16777216 bytes of strings and data once shared references are expanded"),
    ]

    @Test(arguments: binaryErrors)
    func binaryError(_ example: ErrorCase) {
        #expect(throws: PropertyListError.self) { try PropertyList.parse(example.input) }
        do {
            _ = try PropertyList.parse(example.input)
        } catch {
            #expect(error.description == example.error)
        }
    }

    @Test func binaryHandMadeValues() throws {
        // 64 levels are fine; a set and an ordered set read as arrays; 0xF lengths; sized references and offsets.
        let deep = bplist((0..<64).map { $0 == 63 ? [0xA0] : [0xA1, UInt8($0 + 1)] })
        #expect(throws: Never.self) { try PropertyList.parse(deep) }
        #expect(try PropertyList.parse(bplist([[0xC2, 0x01, 0x02], [0x09], [0x08]])).value
                == .array([PropertyListNode(.bool(true), at: .offset(11)), PropertyListNode(.bool(false), at: .offset(12))]))
        #expect(try PropertyList.parse(bplist([[0xB1, 0x01], [0x10, 0x05]])).value
                == .array([PropertyListNode(.integer(5), at: .offset(10))]))
        let long = [UInt8](repeating: 0x62, count: 20)
        #expect(try PropertyList.parse(bplist([[0x5F, 0x10, 0x14] + long])).value == .string(String(repeating: "b", count: 20)))
        let wide = bplist([[0xA1, 0x00, 0x01], [0x22, 0x3F, 0xC0, 0x00, 0x00]], offsetSize: 2, referenceSize: 2)
        #expect(try PropertyList.parse(wide).value == .array([PropertyListNode(.real(1.5), at: .offset(11))]))
    }

    @Test func sharingThatExpandsTooFarIsAnError() {
        // Ten levels of arrays, each holding the next one fifteen times: 15^10 values once expanded.
        let objects: [[UInt8]] = (0..<11).map { level in
            level == 10 ? [0x09] : [0xAF, 0x10, 0x0F] + [UInt8](repeating: UInt8(level + 1), count: 15)
        }
        do {
            _ = try PropertyList.parse(bplist(objects))
            Issue.record("parsed")
        } catch {
            #expect(error.message == "more than 262144 values once shared references are expanded")
        }
    }
}
