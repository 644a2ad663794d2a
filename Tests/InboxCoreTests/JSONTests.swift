import Testing
@testable import InboxCore

@Suite("JSON")
struct JSONTests {
    @Test(arguments: [
        "{}", "[]", "0", "-0", "1.5e10", "-12.25E-3", "true", "false", "null", "\"\"", " \t\r\n{ } \n",
        "{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u00e9\\n\\\"\\/\"}", "\"caf\u{E9} \u{1F600} \u{65E5}\"",
        "[\"\\uD83D\\uDE00\"]", "{\"k\" : \"v\" , \"n\" : [ ] }",
    ])
    func valid(_ text: String) {
        #expect(JSON.validate(bytes(text)) == nil)
    }

    @Test(arguments: [
        ("", "empty JSON text at byte 0"),
        ("   ", "empty JSON text at byte 3"),
        ("{", "unexpected end of input at byte 1"),
        ("{\"a\" 1}", "unexpected byte 0x31 at byte 5"),
        ("[1,]", "unexpected byte 0x5D at byte 3"),
        ("{\"a\":1,}", "unexpected byte 0x7D at byte 7"),
        ("[01]", "unexpected byte 0x31 at byte 2"),
        ("[1.]", "unexpected byte 0x5D at byte 3"),
        ("+1", "unexpected byte 0x2B at byte 0"),
        ("tru", "unexpected end of input at byte 3"),
        ("nul1", "unexpected byte 0x31 at byte 3"),
        ("{} {}", "unexpected data after the JSON value at byte 3"),
        ("\"abc", "unterminated string at byte 0"),
        ("\"a\tb\"", "control character in string at byte 2"),
        ("\"\\x\"", "invalid escape at byte 1"),
        ("\"\\u12G4\"", "invalid \\u escape at byte 5"),
        ("{1:2}", "unexpected byte 0x31 at byte 1"),
        ("'single'", "unexpected byte 0x27 at byte 0"),
        ("NaN", "unexpected byte 0x4E at byte 0"),
    ])
    func invalid(_ text: String, _ reason: String) {
        #expect(JSON.validate(bytes(text)) == reason)
    }

    @Test(arguments: [
        ([0x22, 0xFF, 0x22], "invalid UTF-8 at byte 1"),
        ([0x22, 0xC0, 0xAF, 0x22], "invalid UTF-8 at byte 1"),                 // overlong "/"
        ([0x22, 0xED, 0xA0, 0x80, 0x22], "invalid UTF-8 at byte 1"),           // UTF-16 surrogate
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], "invalid UTF-8 at byte 1"),     // past U+10FFFF
        ([0x22, 0xE6, 0x97], "invalid UTF-8 at byte 1"),                       // truncated
        ([0xEF, 0xBB, 0xBF, 0x7B, 0x7D], "unexpected byte 0xEF at byte 0"),    // byte order mark
        ([0x5B, 0x00, 0x5D], "unexpected byte 0x00 at byte 1"),
    ] as [([UInt8], String)])
    func invalidBytes(_ input: [UInt8], _ reason: String) {
        #expect(JSON.validate(input) == reason)
    }

    @Test func depthLimit() {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(JSON.validate(bytes(ok)) == nil)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(JSON.validate(bytes(deep)) == "nesting deeper than 64 at byte 64")
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        #expect(JSON.validate(bytes(hostile)) == "nesting deeper than 64 at byte 320")
    }

    @Test func hugeValidDocument() {
        let element = "{\"name\":\"caf\u{E9}\",\"values\":[1,2.5,-3e2,true,null]}"
        let text = "[" + Array(repeating: element, count: 20_000).joined(separator: ",") + "]"
        #expect(JSON.validate(bytes(text)) == nil)
    }

    @Test(arguments: 0..<32)
    func garbageIsRejectedWithoutCrashing(_ seed: Int) {
        var garbage = Garbage(state: UInt64(seed + 1) &* 0xD1B5_4A32_D192_ED03)
        let input = [UInt8(ascii: "[")] + garbage.bytes(512)
        #expect(JSON.validate(input) != nil)
    }

    @Test(arguments: [
        ("plain", "\"plain\""),
        ("", "\"\""),
        ("say \"hi\" \\ there", "\"say \\\"hi\\\" \\\\ there\""),
        ("line\nbreak\ttab\r", "\"line\\nbreak\\ttab\\r\""),
        ("\u{0}\u{1}\u{1F}\u{8}\u{C}", "\"\\u0000\\u0001\\u001f\\b\\f\""),
        ("caf\u{E9} \u{1F600} /", "\"caf\u{E9} \u{1F600} /\""),
    ])
    func quote(_ input: String, _ expected: String) {
        #expect(JSON.quote(input) == expected)
        #expect(JSON.validate(bytes(JSON.quote(input))) == nil)
    }
}

@Suite("JSON values")
struct JSONValueTests {
    @Test func parsesWhatTheAgentWrites() throws {
        let text = #"{"pid":42,"phase":"running","inboxes":["/a","/b \"q\""],"landlock":true,"x":null,"n":-1.5e2,"#
            + #""u":"caf\u00e9 \ud83d\ude00","inFlight":[{"handler":"h","ageUSec":1000}],"e":{}}"#
        let value = try JSONValue.parse(Array(text.utf8)).get()
        #expect(value["pid"]?.int == 42)
        #expect(value["phase"]?.string == "running")
        #expect(value["inboxes"]?.array?.compactMap(\.string) == ["/a", "/b \"q\""])
        #expect(value["landlock"]?.bool == true)
        #expect(value["x"] == .null)
        #expect(value["n"]?.number == -150)
        #expect(value["u"]?.string == "caf\u{E9} \u{1F600}")
        #expect(value["inFlight"]?.array?.first?["ageUSec"]?.int == 1000)
        #expect(value["e"] == .object([]))
        #expect(value["missing"] == nil)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "nul", "\"\\x\"", String(repeating: "[", count: 100)])
    func rejectsWhatIsNotJSON(_ text: String) {
        guard case .failure(let error) = JSONValue.parse(Array(text.utf8)) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(!error.message.isEmpty)
    }

    @Test func roundTripsQuotedStrings() throws {
        for text in ["plain", "tab\there", "quote\"back\\slash", "\u{01}\u{1F}", "ünïcödé 😀"] {
            #expect(try JSONValue.parse(Array(JSON.quote(text).utf8)).get().string == text)
        }
    }
}
