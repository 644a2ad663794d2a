import Testing
@testable import InboxCore

/// The XML property-list reader: values, their lines, and every error with its line.
@Suite("XML property lists")
struct XMLPropertyListTests {
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

    typealias ErrorCase = PropertyListErrorCase

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
        ErrorCase(name: "UTF-16 cut short", input: [0xFF, 0xFE, 0x3C, 0x00, 0x3F],
                  error: "line 1: not valid UTF-16 (the file starts with a UTF-16 byte-order mark)"),
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
}
