import Testing
@testable import InboxCore

/// The decision rule's classes of hard cases, on a small MIME database with the host's lines for them: text against
/// binary claims, equal-weight glob ties, generic containers, libmagic's names, specific globs, reported MIME types
/// and siblings in one container family.
@Suite("Type decision classes")
struct TypeDecisionClassTests {
    static func lines(_ text: String...) -> [UInt8] { Array(text.joined(separator: "\n").utf8) }

    static let database = TypeDatabase.builtin.attaching(MIMEDatabase(sources: [MIMEDatabase.Source(
        directory: "/usr/share/mime",
        globs2: lines(
            "50:video/mp2t:*.ts", "50:text/vnd.trolltech.linguist:*.ts",
            "50:application/vnd.ms-powerpoint:*.pot", "50:text/x-gettext-translation-template:*.pot",
            "50:application/vnd.ms-powerpoint:*.ppt",
            "50:text/x-objcsrc:*.m", "50:text/x-matlab:*.m",
            "50:application/msword-template:*.dot", "50:text/vnd.graphviz:*.dot",
            "50:text/x-maven+xml:pom.xml", "50:application/xml:*.xml",
            "50:application/x-gzpostscript:*.ps.gz", "50:application/gzip:*.gz",
            "50:application/x-source-rpm:*.src.rpm", "50:application/x-rpm:*.rpm",
            "50:application/x-xzpdf:*.pdf.xz", "50:application/x-xz:*.xz",
            "50:application/geo+json:*.geo.json", "50:application/json:*.json",
            "50:application/vnd.ms-works:*.xlr", "50:application/vnd.ms-excel:*.xls",
            "50:audio/x-m4r:*.m4r", "50:audio/mp4:*.m4a",
            "50:image/x-portable-pixmap:*.ppm", "50:application/msword:*.doc",
            "80:application/vnd.apple.keynote:*.key", "50:application/pgp-keys:*.key",
            "50:application/winhlp:*.hlp", "50:video/x-flic:*.fli", "50:video/x-flic:*.flc",
            "50:application/x-ole-storage:*.ole"),
        subclasses: lines(
            "application/msword application/x-ole-storage", "application/vnd.ms-works application/x-ole-storage",
            "application/msword-template application/msword", "application/x-gzpostscript application/gzip",
            "application/x-compressed-tar application/gzip",
            "text/vnd.trolltech.linguist application/xml", "application/xml text/plain",
            "text/x-maven+xml application/xml", "application/geo+json application/json",
            "application/x-source-rpm application/x-rpm", "application/x-xzpdf application/x-xz",
            "audio/x-m4r video/mp4", "application/pgp-keys text/plain"),
        aliases: lines("video/x-fli video/x-flic", "audio/x-m4a audio/mp4", "application/x-gzip application/gzip"))]))

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let content: String?
        let identifier: String
        let mimeType: String?
        var testDescription: String { "\(name) [\(content ?? "not sniffed")]" }
    }

    static let cases: [Case] = [
        // Text content overturns a claim whose type cannot be text, to the best text type the name allows.
        Case(name: "app.ts", content: "text/plain", identifier: "com.microsoft.typescript",
             mimeType: "application/x-typescript"),
        Case(name: "strings.ts", content: "text/xml", identifier: "dyn.mime.text.vnd.trolltech.linguist",
             mimeType: "text/vnd.trolltech.linguist"),
        Case(name: "movie.ts", content: "video/mp2t", identifier: "public.mpeg-2-transport-stream", mimeType: "video/mp2t"),
        Case(name: "messages.pot", content: "text/plain", identifier: "dyn.mime.text.x-gettext-translation-template",
             mimeType: "text/x-gettext-translation-template"),
        Case(name: "secret.key", content: "application/pgp-keys", identifier: "dyn.mime.application.pgp-keys",
             mimeType: "application/pgp-keys"),
        Case(name: "photo.png", content: "text/x-shellscript", identifier: "public.shell-script",
             mimeType: "application/x-shellscript"),
        // Equal-weight glob ties settled by content.
        Case(name: "main.m", content: "text/x-objective-c", identifier: "public.objective-c-source", mimeType: "text/x-objcsrc"),
        Case(name: "main.m", content: "text/x-matlab", identifier: "dyn.mime.text.x-matlab", mimeType: "text/x-matlab"),
        Case(name: "graph.dot", content: "text/plain", identifier: "dyn.mime.text.vnd.graphviz", mimeType: "text/vnd.graphviz"),
        Case(name: "letter.dot", content: "application/msword", identifier: "dyn.mime.application.msword-template",
             mimeType: "application/msword-template"),
        Case(name: "slides.pot", content: "application/vnd.ms-powerpoint", identifier: "com.microsoft.powerpoint.ppt",
             mimeType: "application/vnd.ms-powerpoint"),
        // A generic container never overturns a name whose type is a kind of it.
        Case(name: "talk.ppt", content: "application/x-ole-storage", identifier: "com.microsoft.powerpoint.ppt",
             mimeType: "application/vnd.ms-powerpoint"),
        Case(name: "talk.ppt", content: "application/CDFV2", identifier: "com.microsoft.powerpoint.ppt",
             mimeType: "application/vnd.ms-powerpoint"),
        Case(name: "letter.doc", content: "application/vnd.ms-office", identifier: "com.microsoft.word.doc",
             mimeType: "application/msword"),
        Case(name: "doc.ps.gz", content: "application/gzip", identifier: "dyn.mime.application.x-gzpostscript",
             mimeType: "application/x-gzpostscript"),
        Case(name: "tune.m4r", content: "video/mp4", identifier: "com.apple.mpeg-4-ringtone", mimeType: "audio/x-m4r"),
        // libmagic's names in the host's terms.
        Case(name: "help", content: "application/winhelp", identifier: "dyn.mime.application.winhlp",
             mimeType: "application/winhlp"),
        Case(name: "anim", content: "video/x-flc", identifier: "dyn.mime.video.x-flic", mimeType: "video/x-flic"),
        Case(name: "anim.fli", content: "video/x-fli", identifier: "dyn.mime.video.x-flic", mimeType: "video/x-flic"),
        Case(name: "link", content: "application/x-ms-shortcut", identifier: "dyn.mime.application.x-ms-shortcut",
             mimeType: "application/x-ms-shortcut"),
        // A longer or literal host glob beats a shorter built-in extension.
        Case(name: "pom.xml", content: nil, identifier: "dyn.mime.text.x-maven+xml", mimeType: "text/x-maven+xml"),
        Case(name: "pom.xml", content: "text/xml", identifier: "dyn.mime.text.x-maven+xml", mimeType: "text/x-maven+xml"),
        Case(name: "doc.ps.gz", content: nil, identifier: "dyn.mime.application.x-gzpostscript",
             mimeType: "application/x-gzpostscript"),
        Case(name: "tool-1.0.src.rpm", content: "application/x-rpm", identifier: "dyn.mime.application.x-source-rpm",
             mimeType: "application/x-source-rpm"),
        Case(name: "paper.pdf.xz", content: "application/x-xz", identifier: "dyn.mime.application.x-xzpdf",
             mimeType: "application/x-xzpdf"),
        Case(name: "map.geo.json", content: "application/json", identifier: "public.geojson", mimeType: "application/geo+json"),
        Case(name: "backup.tar.gz", content: "application/gzip", identifier: "org.gnu.gnu-zip-tar-archive",
             mimeType: "application/x-compressed-tar"),
        // The reported MIME type is the one found, not the UTI's preferred one.
        Case(name: "photo.ppm", content: nil, identifier: "public.pbm", mimeType: "image/x-portable-pixmap"),
        Case(name: "picture", content: "image/x-portable-greymap", identifier: "public.pbm",
             mimeType: "image/x-portable-graymap"),
        Case(name: "run.bash", content: nil, identifier: "public.bash-script", mimeType: "application/x-shellscript"),
        Case(name: "Info.plist", content: nil, identifier: "com.apple.property-list", mimeType: "application/x-plist"),
        // Siblings in one container family: the name, which is specific, wins.
        Case(name: "budget.xlr", content: "application/vnd.ms-excel", identifier: "dyn.mime.application.vnd.ms-works",
             mimeType: "application/vnd.ms-works"),
        Case(name: "tune.m4r", content: "audio/x-m4a", identifier: "com.apple.mpeg-4-ringtone", mimeType: "audio/x-m4r"),
        // Not siblings: an executable is no kind of OLE2 file.
        Case(name: "letter.doc", content: "application/x-executable", identifier: "public.unix-executable",
             mimeType: "application/x-executable"),
    ]

    @Test(arguments: cases)
    func decide(_ testCase: Case) {
        let resolved = TypeResolver.resolve(explicit: nil, fileName: testCase.name, content: testCase.content,
                                            in: Self.database)
        #expect(resolved.identifier == testCase.identifier)
        #expect(resolved.mimeType == testCase.mimeType)
        // Whatever the decision, its identifier and the content's resolve as `inboxctl types` resolves them.
        #expect(Self.database.knownIdentifier(resolved.identifier) == resolved.identifier)
        if let content = resolved.contentIdentifier {
            #expect(Self.database.knownIdentifier(content) == content, "\(content)")
        }
    }

    @Test func aTextTypeTheNameAllowsIsNamedInTheMismatch() throws {
        let resolved = TypeResolver.resolve(explicit: nil, fileName: "app.ts", content: "application/javascript",
                                            in: Self.database)
        let mismatch = try #require(resolved.mismatch)
        #expect(mismatch.claimed == "public.mpeg-2-transport-stream")
        #expect(mismatch.content == "com.netscape.javascript-source")
        #expect(mismatch.contentWon && mismatch.decided == "com.microsoft.typescript")
        #expect(resolved.source == .extension)
        let png = try #require(TypeResolver.resolve(explicit: nil, fileName: "photo.png", content: "text/plain",
                                                    in: Self.database).mismatch)
        #expect(png.decided == png.content && png.contentWon)
        let kept = try #require(TypeResolver.resolve(explicit: nil, fileName: "budget.xlr",
                                                     content: "application/vnd.ms-excel", in: Self.database).mismatch)
        #expect(!kept.contentWon && kept.decided == kept.claimed)
    }

    @Test func libmagicsTypesNobodyElseKnowsStillResolve() {
        #expect(Self.database.knownIdentifier("dyn.mime.application.x-ms-shortcut") == "dyn.mime.application.x-ms-shortcut")
        #expect(Self.database.knownIdentifier("dyn.mime.application.x-never-heard-of") == nil)
    }

    @Test func binaryClaimsAskLibmagicAboutText() {
        let png = TypeResolver.claim(explicit: nil, fileName: "photo.png", in: Self.database)
        #expect(png.cannotBeText && png.needsTextClassified)
        let csv = TypeResolver.claim(explicit: nil, fileName: "table.csv", in: Self.database)
        #expect(!csv.cannotBeText && !csv.needsTextClassified)
        let tie = TypeResolver.claim(explicit: nil, fileName: "main.m", in: Self.database)
        #expect(tie.isTie && tie.needsTextClassified)
        for text in ["public.svg-image", "com.netscape.javascript-source", "public.html", "com.apple.ical.ics"] {
            #expect(!Self.database.cannotBeText(text), "\(text)")
        }
        for binary in ["public.png", "public.mpeg-2-transport-stream", "com.microsoft.powerpoint.ppt",
                       "com.apple.iwork.keynote.sffkey", "public.zip-archive", "dyn.mime.application.vnd.ms-works"] {
            #expect(Self.database.cannotBeText(binary), "\(binary)")
        }
    }
}
