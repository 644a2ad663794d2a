import Testing
@testable import InboxCore

/// The property-list reader: XML and binary values, every error with its line or offset, and inputs that must
/// never make it trap.
@Suite("Property lists")
struct PropertyListTests {
    // MARK: XML values

    struct ValueCase: Sendable, CustomTestStringConvertible {
        let body: String
        let value: PropertyListValue
        var testDescription: String { body }
    }

    static let xmlValues: [ValueCase] = [
        ValueCase(body: "<string>plain</string>", value: .string("plain")),
        ValueCase(body: "<string>  spaced\tout  </string>", value: .string("  spaced\tout  ")),
        ValueCase(body: "<string>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;</string>", value: .string("a <b> & \"c\" 'd'")),
        ValueCase(body: "<string>&#65;&#x42;&#x2603;</string>", value: .string("AB\u{2603}")),
        ValueCase(body: "<string><![CDATA[<not> & markup]]></string>", value: .string("<not> & markup")),
        ValueCase(body: "<string>a<!-- a comment -->b</string>", value: .string("ab")),
        ValueCase(body: "<string>h\u{E9}llo \u{2603}</string>", value: .string("h\u{E9}llo \u{2603}")),
        ValueCase(body: "<string/>", value: .string("")),
        ValueCase(body: "<string></string>", value: .string("")),
        ValueCase(body: "<integer>-42</integer>", value: .integer(-42)),
        ValueCase(body: "<integer> 0x1F </integer>", value: .integer(31)),
        ValueCase(body: "<integer>18446744073709551615</integer>", value: .integer(Int128(UInt64.max))),
        ValueCase(body: "<integer>-9223372036854775808</integer>", value: .integer(Int128(Int64.min))),
        ValueCase(body: "<real>2.5</real>", value: .real(2.5)),
        ValueCase(body: "<real>-1e3</real>", value: .real(-1000)),
        ValueCase(body: "<real>7</real>", value: .real(7)),
        ValueCase(body: "<true/>", value: .bool(true)),
        ValueCase(body: "<false></false>", value: .bool(false)),
        ValueCase(body: "<date>2024-01-02T03:04:05Z</date>", value: .date(725_857_445)),
        ValueCase(body: "<date>2001-01-01T00:00:00Z</date>", value: .date(0)),
        ValueCase(body: "<date>2000-12-31T23:59:59Z</date>", value: .date(-1)),
        ValueCase(body: "<date>2024-02-29Z</date>", value: .date(730_857_600)),
        ValueCase(body: "<data>AAH+/w==</data>", value: .data([0x00, 0x01, 0xFE, 0xFF])),
        ValueCase(body: "<data>\n\tAAH+\n\t/w==\n</data>", value: .data([0x00, 0x01, 0xFE, 0xFF])),
        ValueCase(body: "<data>aGk=</data>", value: .data(Array("hi".utf8))),
        ValueCase(body: "<data/>", value: .data([])),
        ValueCase(body: "<array/>", value: .array([])),
        ValueCase(body: "<dict/>", value: .dict([])),
    ]

    @Test(arguments: xmlValues)
    func xmlValue(_ example: ValueCase) throws {
        let node = try PropertyList.parse(xml(example.body))
        #expect(node.value == example.value)
        #expect(node.location == .line(4))
    }

    @Test func xmlKeepsOrderAndLines() throws {
        let root = try PropertyList.parse(Self.xmlDocument)
        guard case .dict(let entries) = root.value else {
            Issue.record("not a dict: \(root.value)")
            return
        }
        #expect(root.location == .line(5))
        #expect(entries.map(\.key) == ["zeta", "alpha", "list"])
        #expect(entries.map(\.keyLocation) == [.line(7), .line(9), .line(10)])
        #expect(entries.map(\.value.location) == [.line(8), .line(9), .line(11)])
        guard case .array(let list) = entries[2].value.value else {
            Issue.record("not an array")
            return
        }
        #expect(list.map(\.location) == [.line(12), .line(12), .line(14)])
        #expect(list.map(\.value) == [.integer(1), .integer(2), .dict([
            PropertyListEntry(key: "inner", at: .line(14), value: PropertyListNode(.bool(true), at: .line(14))),
        ])])
    }

    static let xmlDocument = lines(
        "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
        "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">",
        "<!-- a comment before the root -->",
        "<plist version=\"1.0\">",
        "<dict>",
        "    <!-- keys keep file order -->",
        "    <key>zeta</key>",
        "    <string>last letter</string>",
        "    <key>alpha</key> <integer>1</integer>",
        "    <key>list</key>",
        "    <array>",
        "        <integer>1</integer><integer>2</integer>",
        "        <?some processing instruction?>",
        "        <dict><key>inner</key><true/></dict>",
        "    </array>",
        "</dict>",
        "</plist>",
        "")

    // MARK: XML errors

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        let error: String
        var testDescription: String { name }
    }

    static let xmlErrors: [ErrorCase] = [
        ErrorCase(name: "empty", input: [], error: "line 1: no <plist> element"),
        ErrorCase(name: "only whitespace", input: lines("", "  "), error: "line 2: no <plist> element"),
        ErrorCase(name: "text", input: lines("just text"), error: "line 1: expected <plist>"),
        ErrorCase(name: "other root", input: lines("<dict/>"), error: "line 1: expected <plist>, found <dict>"),
        ErrorCase(name: "empty plist", input: lines("<plist/>"), error: "line 1: <plist> holds no value"),
        ErrorCase(name: "plist without value", input: lines("<plist>", "</plist>"), error: "line 1: <plist> holds no value"),
        ErrorCase(name: "two values", input: lines("<plist>", "<true/>", "<false/>", "</plist>"),
                  error: "line 3: <plist> holds more than one value"),
        ErrorCase(name: "unclosed plist", input: lines("<plist>", "<string>a</string>"), error: "line 1: <plist> is never closed"),
        ErrorCase(name: "unclosed tag", input: lines("<plist version=\"1.0\""), error: "line 1: tag <plist is never closed"),
        ErrorCase(name: "unclosed string", input: lines("<plist>", "<string>abc", ""),
                  error: "line 2: <string> is never closed"),
        ErrorCase(name: "unclosed dict", input: lines("<plist>", "<dict>", "<key>a</key><true/>"),
                  error: "line 2: <dict> is never closed"),
        ErrorCase(name: "unclosed array", input: lines("<plist>", "<array>", "<true/>"),
                  error: "line 2: <array> is never closed"),
        ErrorCase(name: "mismatched", input: lines("<plist>", "<string>a", "</key>"),
                  error: "line 3: mismatched tag: <string> from line 2 closed by </key>"),
        ErrorCase(name: "mismatched container", input: lines("<plist>", "<array>", "</dict>", "</plist>"),
                  error: "line 3: mismatched tag: <array> from line 2 closed by </dict>"),
        ErrorCase(name: "value without key", input: lines("<plist><dict>", "<string>x</string>", "</dict></plist>"),
                  error: "line 2: <string> in <dict> without a <key> before it"),
        ErrorCase(name: "two keys in a row", input: lines("<plist><dict>", "<key>a</key>", "<key>b</key><true/>",
                                                         "</dict></plist>"),
                  error: "line 2: key 'a' has no value"),
        ErrorCase(name: "key at the end", input: lines("<plist><dict>", "<key>a</key>", "</dict></plist>"),
                  error: "line 2: key 'a' has no value"),
        ErrorCase(name: "duplicate key", input: lines("<plist><dict>", "<key>a</key><true/>", "<key>a</key><false/>",
                                                      "</dict></plist>"),
                  error: "line 3: duplicate key 'a' (first on line 2)"),
        ErrorCase(name: "key outside dict", input: lines("<plist><array>", "<key>a</key>", "</array></plist>"),
                  error: "line 2: <key> outside a <dict>"),
        ErrorCase(name: "text in dict", input: lines("<plist><dict>", "  hello", "</dict></plist>"),
                  error: "line 2: unexpected text 'hello' in <dict>"),
        ErrorCase(name: "CDATA in array", input: lines("<plist><array>", "<![CDATA[x]]>", "</array></plist>"),
                  error: "line 2: unexpected CDATA section in <array>"),
        ErrorCase(name: "unknown element", input: lines("<plist>", "<foo/>", "</plist>"), error: "line 2: unknown element <foo>"),
        ErrorCase(name: "element in string", input: lines("<plist>", "<string>a<b/></string>", "</plist>"),
                  error: "line 2: unexpected <b> inside <string>"),
        ErrorCase(name: "bad integer", input: xml("<integer>12a</integer>"), error: "line 4: invalid integer '12a'"),
        ErrorCase(name: "empty integer", input: xml("<integer/>"), error: "line 4: invalid integer ''"),
        ErrorCase(name: "integer too large", input: xml("<integer>18446744073709551616</integer>"),
                  error: "line 4: invalid integer '18446744073709551616'"),
        ErrorCase(name: "integer too small", input: xml("<integer>-9223372036854775809</integer>"),
                  error: "line 4: invalid integer '-9223372036854775809'"),
        ErrorCase(name: "bad real", input: xml("<real>1.2.3</real>"), error: "line 4: invalid real '1.2.3'"),
        ErrorCase(name: "bad date", input: xml("<date>2024-13-01T00:00:00Z</date>"),
                  error: "line 4: invalid date '2024-13-01T00:00:00Z': expected YYYY-MM-DDTHH:MM:SSZ"),
        ErrorCase(name: "date without zone", input: xml("<date>2024-01-01T00:00:00</date>"),
                  error: "line 4: invalid date '2024-01-01T00:00:00': expected YYYY-MM-DDTHH:MM:SSZ"),
        ErrorCase(name: "bad base64 length", input: xml("<data>abc</data>"), error: "line 4: invalid base64 in <data>"),
        ErrorCase(name: "bad base64 character", input: xml("<data>ab!d</data>"), error: "line 4: invalid base64 in <data>"),
        ErrorCase(name: "base64 after padding", input: xml("<data>aG==aGk=</data>"), error: "line 4: invalid base64 in <data>"),
        ErrorCase(name: "true with content", input: xml("<true>yes</true>"), error: "line 4: <true> must be empty"),
        ErrorCase(name: "unknown entity", input: xml("<string>&nbsp;</string>"), error: "line 4: unknown entity '&nbsp;'"),
        ErrorCase(name: "bare ampersand", input: xml("<string>a & b</string>"),
                  error: "line 4: '&' starts no entity: write &amp; for a literal '&'"),
        ErrorCase(name: "NUL reference", input: xml("<string>&#0;</string>"), error: "line 4: invalid character reference '&#0;'"),
        ErrorCase(name: "reference past Unicode", input: xml("<string>&#x110000;</string>"),
                  error: "line 4: invalid character reference '&#x110000;'"),
        ErrorCase(name: "surrogate reference", input: xml("<string>&#xD800;</string>"),
                  error: "line 4: invalid character reference '&#xD800;'"),
        ErrorCase(name: "unclosed comment", input: lines("<plist>", "<!-- never", "closed"), error: "line 2: comment is never closed"),
        ErrorCase(name: "unclosed CDATA", input: xml("<string><![CDATA[x</string>"), error: "line 4: CDATA section is never closed"),
        ErrorCase(name: "unclosed DOCTYPE", input: lines("<!DOCTYPE plist [", "<plist>"), error: "line 1: <!DOCTYPE is never closed"),
        ErrorCase(name: "late declaration", input: lines("<plist>", "<?xml version=\"1.0\"?>", "<true/></plist>"),
                  error: "line 2: the XML declaration must come first"),
        ErrorCase(name: "other encoding", input: lines("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>", "<plist/>"),
                  error: "line 1: encoding 'ISO-8859-1' is not supported: use UTF-8"),
        ErrorCase(name: "trailing garbage", input: lines("<plist><true/></plist>", "<!-- fine -->", "junk"),
                  error: "line 3: unexpected content after </plist>"),
        ErrorCase(name: "second root", input: lines("<plist><true/></plist>", "<plist><true/></plist>"),
                  error: "line 2: unexpected content after </plist>"),
        ErrorCase(name: "non-UTF-8", input: lines("<plist>", "<string>") + [0xFF] + lines("</string>", "</plist>"),
                  error: "line 2: not valid UTF-8"),
        ErrorCase(name: "UTF-16", input: [0xFF, 0xFE, 0x3C, 0x00], error: "line 1: not valid UTF-8"),
        ErrorCase(name: "NUL byte", input: lines("<plist>", "<string>a\u{0}b</string>", "</plist>"), error: "line 2: NUL byte"),
        ErrorCase(name: "65 levels", input: xml(String(repeating: "<array>", count: 65) + String(repeating: "</array>", count: 65)),
                  error: "line 4: nested deeper than 64 levels"),
    ]

    @Test(arguments: xmlErrors)
    func xmlError(_ example: ErrorCase) {
        #expect(throws: PropertyListError.self) { try PropertyList.parse(example.input) }
        do {
            _ = try PropertyList.parse(example.input)
        } catch {
            #expect(error.description == example.error)
        }
    }

    @Test func sixtyFourLevelsAreFine() throws {
        let depth = PropertyList.maximumDepth
        let nested = String(repeating: "<dict><key>k</key>", count: depth - 1) + "<array/>"
            + String(repeating: "</dict>", count: depth - 1)
        var node = try PropertyList.parse(xml(nested))
        var levels = 1
        while case .dict(let entries) = node.value, let first = entries.first {
            node = first.value
            levels += 1
        }
        #expect(levels == depth)
        #expect(node.value == .array([]))
    }

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
        ErrorCase(name: "duplicate key", input: bplist([[0xD2, 0x01, 0x01, 0x02, 0x02], [0x51, 0x61], [0x09]]),
                  error: "offset 13: duplicate key 'a'"),
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

    // MARK: Nothing traps

    @Test func everyTruncationOfABinaryFileIsHandled() {
        for fixture in [PropertyListFixtures.allTypes, PropertyListFixtures.profileEditor] {
            for length in 0..<fixture.count {
                // Cutting a binary plist loses its trailer: always an error, never a trap.
                #expect(throws: PropertyListError.self) { try PropertyList.parse(Array(fixture.prefix(length))) }
            }
        }
    }

    @Test func randomByteFlipsNeverTrap() {
        var garbage = Garbage(state: 0x5EED_F00D)
        var parsed = 0
        for fixture in [PropertyListFixtures.allTypes, PropertyListFixtures.profileEditor, Array(Self.xmlDocument)] {
            for _ in 0..<1500 {
                var bytes = fixture
                let flips = Int(garbage.next() % 4) + 1
                for _ in 0..<flips {
                    let index = Int(garbage.next() % UInt64(bytes.count))
                    bytes[index] = UInt8(truncatingIfNeeded: garbage.next())
                }
                if (try? PropertyList.parse(bytes)) != nil { parsed += 1 }
            }
        }
        // Many flips land in string bytes and still parse; the point is that none trapped.
        #expect(parsed > 0)
    }

    @Test func truncatedAndGarbageXMLNeverTraps() {
        let document = Array(Self.xmlDocument)
        for length in 0..<document.count - 1 {
            #expect(throws: PropertyListError.self) { try PropertyList.parse(Array(document.prefix(length))) }
        }
        var garbage = Garbage(state: 42)
        for size in [1, 7, 64, 4096] {
            for _ in 0..<50 {
                _ = try? PropertyList.parse(garbage.bytes(size))
                _ = try? PropertyList.parse(Array("bplist00".utf8) + garbage.bytes(size))
                _ = try? PropertyList.parse(Array("<plist>".utf8) + garbage.bytes(size))
            }
        }
    }

    @Test func deepInputsAreErrorsNotStackOverflows() {
        let opens = String(repeating: "<array>", count: 10_000)
        #expect(throws: PropertyListError.self) { try PropertyList.parse(xml(opens)) }
        // 5,000 arrays, each holding the next.
        let objects = (0..<5000).map { index -> [UInt8] in [0xA1, UInt8((index + 1) >> 8), UInt8((index + 1) & 0xFF)] }
        do {
            _ = try PropertyList.parse(bplist(objects + [[0x09]], offsetSize: 2, referenceSize: 2))
            Issue.record("parsed")
        } catch {
            #expect(error.message == "nested deeper than 64 levels")
        }
    }

    @Test func hugeXMLIsReadInBoundedTime() throws {
        // A 1 MiB string: the size limit the registration parser enforces.
        let big = String(repeating: "x", count: 1 << 20)
        #expect(try PropertyList.parse(xml("<string>\(big)</string>")).value == .string(big))
    }
}

// MARK: Helpers

/// A value wrapped in the standard XML header: line 1 declaration, 2 DOCTYPE, 3 `<plist>`, 4 the value.
func xml(_ body: String) -> [UInt8] {
    lines("<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
          "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">",
          "<plist version=\"1.0\">", body, "</plist>", "")
}

/// A hand-made `bplist00`: the objects in order after the magic, an offset table and the trailer; each field can
/// be overridden to make it wrong.
func bplist(_ objects: [[UInt8]], top: UInt64 = 0, offsetSize: UInt8 = 1, referenceSize: UInt8 = 1,
            count: UInt64? = nil, table: UInt64? = nil, offsets: [Int]? = nil) -> [UInt8] {
    func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
    }
    var bytes = Array("bplist00".utf8)
    var starts: [Int] = []
    for object in objects {
        starts.append(bytes.count)
        bytes += object
    }
    let tableStart = bytes.count
    for start in offsets ?? starts { bytes += bigEndian(UInt64(start), max(Int(offsetSize), 1)) }
    bytes += [0, 0, 0, 0, 0, 0, offsetSize, referenceSize]
    bytes += bigEndian(count ?? UInt64(objects.count), 8) + bigEndian(top, 8) + bigEndian(table ?? UInt64(tableStart), 8)
    return bytes
}

/// A node at a placeholder location, for comparing values without their places.
func node(_ value: PropertyListValue) -> PropertyListNode { PropertyListNode(value, at: .offset(0)) }

/// The value with every location (of nested nodes and keys) replaced by a placeholder, and dict keys sorted.
func stripped(_ value: PropertyListValue?) -> PropertyListValue? {
    guard let value else { return nil }
    switch value {
    case .array(let elements):
        return .array(elements.map { node(stripped($0.value)!) })
    case .dict(let entries):
        // Sorted too: plistlib writes binary dicts in key order.
        return .dict(entries.sorted { $0.key < $1.key }.map {
            PropertyListEntry(key: $0.key, at: .offset(0), value: node(stripped($0.value.value)!))
        })
    default:
        return value
    }
}
