import Testing
import InboxCore

/// The name a handler is given for what a sender dropped: valid UTF-8, printable, no slash, not hidden, at most 200
/// bytes, whatever bytes the sender chose.
@Suite("Names handed to handlers")
struct FileNameTests {
    @Test(arguments: [
        (Array("report.pdf".utf8), "report.pdf"),
        (Array("a b,c;d'e\"f~.txt".utf8), "a b,c;d'e\"f~.txt"),
        (Array("tab\there".utf8), "tab_here"),
        (Array("bell\u{07}.txt".utf8), "bell_.txt"),
        (Array("del\u{7F}.txt".utf8), "del_.txt"),
        ([0x61, 0xFF, 0x62], "a_b"),
        (Array(".hidden".utf8), "hidden"),
        (Array("...dots".utf8), "dots"),
        (Array("..".utf8), "file"),
        ([], "file"),
        (Array("ünïcödé 😀.txt".utf8), "ünïcödé 😀.txt"),
        (Array(".ünï".utf8), "ünï"),
    ] as [([UInt8], String)])
    func sanitized(name: [UInt8], expected: String) {
        #expect(FileNames.sanitized(name) == expected)
    }

    @Test func aLongNameKeepsItsLast200BytesAndItsExtension() {
        let ascii = FileNames.sanitized(Array((String(repeating: "x", count: 300) + ".txt").utf8))
        #expect(ascii.utf8.count == 200)
        #expect(ascii.hasSuffix("x.txt"))
        let wide = FileNames.sanitized(Array((String(repeating: "é", count: 150) + ".txt").utf8))
        #expect(wide.utf8.count <= 200)
        #expect(wide.hasSuffix("é.txt"))
        #expect(FileNames.sanitized(Array(String(repeating: "y", count: 200).utf8)).utf8.count == 200)
    }

    /// The tail a long name is cut to, or a dot that starts a grapheme, never makes the name hidden.
    @Test(arguments: [
        String(repeating: "x", count: 100) + "." + String(repeating: "y", count: 199),
        String(repeating: "x", count: 100) + "..." + String(repeating: "y", count: 199),
        ".\u{301}accent",
        "..\u{301}",
    ])
    func neverHidden(_ name: String) {
        let cleaned = FileNames.sanitized(Array(name.utf8))
        #expect(!FileNames.isHidden(Array(cleaned.utf8)), "\(cleaned.prefix(8))")
        #expect(cleaned.utf8.count <= 200)
        #expect(!cleaned.isEmpty)
    }

    /// Cleaning a clean name changes nothing, so a name cleaned on one host is the same name on another.
    @Test(arguments: [
        String(repeating: "x", count: 100) + "." + String(repeating: "y", count: 199),
        ".\u{301}accent", "report.pdf", "tab\there", "..", "", String(repeating: "é", count: 150) + ".txt",
    ])
    func cleaningIsIdempotent(_ name: String) {
        let once = FileNames.sanitized(Array(name.utf8))
        #expect(FileNames.sanitized(Array(once.utf8)) == once)
    }
}
