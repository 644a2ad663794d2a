import Foundation
import Testing
@testable import InboxCore

/// `.thumbnailer` files: the forgiving reader, its diagnostics at file:line, and the field codes.
@Suite("Preview: thumbnailer entries")
struct PreviewThumbnailerTests {
    /// A file's bytes and what reading it should give: the entry, or the diagnostics as printed.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        let entry: ThumbnailerEntry?
        let diagnostics: [String]
        var testDescription: String { name }
    }

    static func entry(tryExec: String? = nil, _ exec: [String], _ mimeTypes: [String]) -> ThumbnailerEntry {
        ThumbnailerEntry(path: "t", tryExec: tryExec, exec: exec, mimeTypes: mimeTypes)
    }

    static let cases: [Case] = [
        Case(name: "the desktop's usual file", input: lines(
            "[Thumbnailer Entry]",
            "TryExec=/usr/bin/evince-thumbnailer",
            "Exec=/usr/bin/evince-thumbnailer -s %s %u %o",
            "MimeType=application/pdf;application/x-bzpdf;"),
             entry: entry(tryExec: "/usr/bin/evince-thumbnailer", ["/usr/bin/evince-thumbnailer", "-s", "%s", "%u", "%o"],
                          ["application/pdf", "application/x-bzpdf"]), diagnostics: []),
        Case(name: "no TryExec, no trailing ';', a relative program, quotes", input: lines(
            "[Thumbnailer Entry]", "Exec=thumb \"--title=a b\" -i %i -o %o", "MimeType=text/x-a ; text/x-b"),
             entry: entry(["thumb", "--title=a b", "-i", "%i", "-o", "%o"], ["text/x-a", "text/x-b"]), diagnostics: []),
        Case(name: "other sections, unknown and localized keys, comments are ignored", input: lines(
            "# made by hand", "[Desktop Entry]", "Exec=/bin/other", "[Thumbnailer Entry]", "Name[fr]=Vignettes",
            "X-Vendor=x", "; comment", "Exec=/bin/t %o", "MimeType=image/x-t;", "[Later]", "MimeType=nope/nope"),
             entry: entry(["/bin/t", "%o"], ["image/x-t"]), diagnostics: []),
        Case(name: "a repeated key: the last wins; a repeated section merges", input: lines(
            "[Thumbnailer Entry]", "Exec=/bin/first %o", "[Thumbnailer Entry]", "Exec=/bin/second %o", "MimeType=a/b"),
             entry: entry(["/bin/second", "%o"], ["a/b"]), diagnostics: []),
        Case(name: "an empty TryExec is none", input: lines("[Thumbnailer Entry]", "TryExec=", "Exec=/t %o", "MimeType=a/b"),
             entry: entry(["/t", "%o"], ["a/b"]), diagnostics: []),
        Case(name: "UTF-8 byte order mark and CRLF",
             input: [0xEF, 0xBB, 0xBF] + bytes("[Thumbnailer Entry]\r\nExec=/t %o\r\nMimeType=a/b;\r\n"),
             entry: entry(["/t", "%o"], ["a/b"]), diagnostics: []),
        Case(name: "no Exec=", input: lines("", "[Thumbnailer Entry]", "MimeType=a/b"),
             entry: nil, diagnostics: ["t:2: [Thumbnailer Entry] has no Exec="]),
        Case(name: "no MimeType=", input: lines("[Thumbnailer Entry]", "Exec=/t %o"),
             entry: nil, diagnostics: ["t:1: [Thumbnailer Entry] has no MimeType="]),
        Case(name: "MimeType= of only separators", input: lines("[Thumbnailer Entry]", "Exec=/t %o", "MimeType=;;"),
             entry: nil, diagnostics: ["t:3: MimeType= names no type"]),
        Case(name: "Exec= without %o", input: lines("[Thumbnailer Entry]", "MimeType=a/b", "Exec=/t %i %s"),
             entry: nil, diagnostics: ["t:3: Exec= has no %o for the output file"]),
        // Found by the thumbnailer fuzz target's invariant: `%%o` is a literal `%o`, which `arguments` passes on as it is.
        Case(name: "Exec= with only %%o", input: lines("[Thumbnailer Entry]", "MimeType=a/b", "Exec=/t %%o --out=%%o%"),
             entry: nil, diagnostics: ["t:3: Exec= has no %o for the output file"]),
        Case(name: "Exec= with %%%o", input: lines("[Thumbnailer Entry]", "MimeType=a/b", "Exec=/t %%%o"),
             entry: entry(["/t", "%%%o"], ["a/b"]), diagnostics: []),
        Case(name: "empty Exec=", input: lines("[Thumbnailer Entry]", "Exec=", "MimeType=a/b"),
             entry: nil, diagnostics: ["t:2: Exec= is empty"]),
        Case(name: "bad quoting in Exec=", input: lines("[Thumbnailer Entry]", "MimeType=a/b", "Exec=/t \"%o"),
             entry: nil, diagnostics: ["t:3: bad quoting in Exec=: unterminated \" quote"]),
        Case(name: "no section", input: lines("Exec=/t %o"),
             entry: nil, diagnostics: ["t:1: key 'Exec' outside any section"]),
        Case(name: "only another section", input: lines("[Desktop Entry]", "Exec=/t %o", "MimeType=a/b"),
             entry: nil, diagnostics: ["t:1: no [Thumbnailer Entry] section"]),
        Case(name: "empty file", input: [], entry: nil, diagnostics: ["t:1: no [Thumbnailer Entry] section"]),
        Case(name: "a malformed line refuses the file", input: lines("[Thumbnailer Entry]", "Exec=/t %o", "junk", "MimeType=a/b"),
             entry: nil, diagnostics: ["t:3: expected a [Section], a comment or Key=Value, got 'junk'"]),
        Case(name: "not UTF-8", input: bytes("[Thumbnailer Entry]\nExec=/t %o\nMimeType=a/") + [0xC3, 0x28],
             entry: nil, diagnostics: ["t:3: line is not valid UTF-8", "t:1: [Thumbnailer Entry] has no MimeType="]),
        Case(name: "a NUL byte", input: bytes("[Thumbnailer Entry]\nExec=/t %o\0\nMimeType=a/b"),
             entry: nil, diagnostics: ["t:2: line contains a NUL byte", "t:1: [Thumbnailer Entry] has no Exec="]),
        Case(name: "larger than 64 KiB", input: [UInt8](repeating: 0x23, count: 64 * 1024 + 1),
             entry: nil, diagnostics: ["t:1: file is 65537 bytes, larger than the limit of 65536"]),
    ]

    @Test(arguments: cases)
    func reading(_ testCase: Case) {
        let (entry, diagnostics) = ThumbnailerEntry.parse(testCase.input, path: "t")
        #expect(entry == testCase.entry)
        #expect(diagnostics.map(\.description) == testCase.diagnostics)
    }

    @Test func garbageNeverCrashesAndGivesAnEntryOrAnError() {
        var garbage = Garbage(state: 0x7468_756D_626E_6169)
        let prefix = bytes("[Thumbnailer Entry]\nExec=/t %o\nMimeType=")
        for round in 0..<300 {
            let input = (round % 2 == 0 ? prefix : []) + garbage.bytes(Int(garbage.next() % 200))
            let (entry, diagnostics) = ThumbnailerEntry.parse(input, path: "g")
            #expect((entry == nil) == diagnostics.containsError)
            if let entry { #expect(!entry.mimeTypes.isEmpty && entry.exec.contains { $0.contains("%o") }) }
        }
    }

    @Test(arguments: [
        (["/t", "-s", "%s", "%u", "%o"], ["/t", "-s", "256", "file:///a%20b.png", "/tmp/out.png"]),
        (["/t", "--in=%i", "--out=%o"], ["/t", "--in=/a b.png", "--out=/tmp/out.png"]),
        (["/t", "100%%", "%%i"], ["/t", "100%", "%i"]),
        (["/t", "%x", "%o"], ["/t", "/tmp/out.png"]),
        (["/t", "a%xb", "%o%"], ["/t", "ab", "/tmp/out.png"]),
        (["/t", "", "%o"], ["/t", "", "/tmp/out.png"]),
        (["/t", "%i%i"], ["/t", "/a b.png/a b.png"]),
    ])
    func fieldCodes(_ exec: [String], _ expected: [String]) {
        let entry = ThumbnailerEntry(path: "t", tryExec: nil, exec: exec, mimeTypes: ["a/b"])
        #expect(entry.arguments(input: "/a b.png", uri: "file:///a%20b.png", output: "/tmp/out.png", size: 256) == expected)
    }

    @Test func anEmptyValueForAKnownCodeStaysAnArgument() {
        let entry = ThumbnailerEntry(path: "t", tryExec: nil, exec: ["/t", "%i", "%o"], mimeTypes: ["a/b"])
        #expect(entry.arguments(input: "", uri: "", output: "/o", size: 1) == ["/t", "", "/o"])
    }

    @Test(arguments: [("image/x-ms-bmp", true), ("IMAGE/PNG", true), ("image/png", true), ("image/jpeg", false), ("", false)])
    func declaresWithoutRegardToCase(_ mimeType: String, _ expected: Bool) {
        let entry = ThumbnailerEntry(path: "t", tryExec: nil, exec: ["/t", "%o"], mimeTypes: ["image/png", "image/x-MS-bmp"])
        #expect(entry.declares(mimeType) == expected)
    }

    /// The desktop's own files read as entries: whatever is installed here must parse cleanly.
    @Test func theInstalledThumbnailers() throws {
        let folder = "/usr/share/thumbnailers"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".thumbnailer") }
        for name in names {
            let path = folder + "/" + name
            let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
            let (entry, diagnostics) = ThumbnailerEntry.parse(bytes, path: path)
            #expect(diagnostics == [], "\(path)")
            let parsed = try #require(entry, "\(path)")
            #expect(!parsed.mimeTypes.isEmpty && parsed.mimeTypes.allSatisfy { $0.contains("/") }, "\(path)")
            #expect(parsed.arguments(input: "/i", uri: "file:///i", output: "/o.png", size: 128).contains { $0.contains("/o.png") })
        }
        let gdkPixbuf = folder + "/gdk-pixbuf-thumbnailer.thumbnailer"
        guard let data = FileManager.default.contents(atPath: gdkPixbuf) else {
            print("skipped: \(gdkPixbuf) is not installed (\(names.count) other thumbnailers read)")
            return
        }
        let entry = try #require(ThumbnailerEntry.parse([UInt8](data), path: gdkPixbuf).entry)
        #expect(entry.declares("image/png"))
        #expect(PreviewPlan.isGdkPixbuf(entry))
    }
}
