import Glibc
import InboxCore
@testable import InboxSystem
import Testing

/// Quick Look's built-in generators with the real tools on real files: poppler, Ghostscript, gdk-pixbuf, LibreOffice,
/// unzip, pango-view, chafa, each sandboxed by the renderer. Serialized: each run starts real processes, some heavy.
@Suite(.serialized)
struct PreviewRendererTests {
    // MARK: The generator process: bounds, sandbox, failures

    @Test func aGeneratorPastItsTimeIsStoppedWithItsWholeProcessGroup() throws {
        let rig = try RendererRig(timeout: .seconds(1))
        let marker = "31.\(getpid() % 10_000)"
        let started = ContinuousClock.now
        let result = rig.run("sh", ["-c", "sleep \(marker)1 & sleep \(marker)2; wait"])
        let took = ContinuousClock.now - started
        guard case .failure(.timedOut(let limit)) = result else {
            Issue.record("expected a time-out, got \(result)")
            return
        }
        #expect(limit == .seconds(1))
        #expect(took < .seconds(5), "stopped after \(took)")
        #expect(processes(containing: "sleep \(marker)").isEmpty, "a sleep of its group survived")
    }

    @Test func aGeneratorWritingPastTheFileSizeBoundFailsSayingSo() throws {
        let rig = try RendererRig(fileSize: 1 << 20)
        let result = rig.run("sh", ["-c", "head -c 2G /dev/zero > big"], workingIn: rig.renderer.scratch.tmp)
        guard case .failure(.failed(let why)) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(why == "sh was stopped: it wrote more than 1 MiB")
    }

    @Test func aGeneratorOutOfMemorySaysWhichBound() throws {
        let rig = try RendererRig(addressSpace: 256 << 20)
        let result = rig.run("python3", ["-c", "x = bytearray(1 << 30)"])
        guard case .failure(.failed(let why)) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(why.hasPrefix("python3 ran out of its 256 MiB of memory"), "\(why)")
    }

    @Test func aFailedGeneratorIsReportedWithItsStatusAndLastLine() throws {
        let rig = try RendererRig()
        let result = rig.run("sh", ["-c", "echo first >&2; printf 'the \\033[31mlast\\033[0m line\\n\\n' >&2; exit 3"])
        guard case .failure(.failed(let why)) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        // The escape sequences' ESC bytes are dropped: a tool's output never drives the terminal.
        #expect(why == "sh exited with status 3: the [31mlast[0m line")
        let crashed = rig.run("sh", ["-c", "kill -SEGV $$"])
        guard case .failure(.failed(let crash)) = crashed else {
            Issue.record("expected a failure, got \(crashed)")
            return
        }
        #expect(crash == "sh crashed (signal 11, SIGSEGV)")
    }

    @Test(.enabled(if: LandlockRuleset.abi() > 0 || ci, "the kernel has no Landlock"))
    func aGeneratorWritesOnlyInItsScratchDirectory() throws {
        // As the caller (root here, when the tests run as root): Landlock, not file modes, is what stops it.
        let rig = try RendererRig(identity: nil)
        let escape = "/tmp/inboxd-preview-escape-\(getpid())"
        defer { unlink(escape) }
        let result = rig.run("sh", ["-c", "echo x > \(escape); echo x > $HOME/../../escape-too; echo y > $HOME/inside"
                                    + "; echo z > $TMPDIR/inside; test -f $HOME/inside && test -f $TMPDIR/inside"])
        guard case .success = result else {
            Issue.record("its own HOME and TMPDIR should be writable: \(result)")
            return
        }
        #expect(access(escape, F_OK) != 0, "it wrote outside its scratch directory")
        #expect(access(parentPath(rig.renderer.scratch.root.path) + "/escape-too", F_OK) != 0)
    }

    @Test func toolsAreFoundInTheDistributionsDirectoriesFirst() {
        if access("/usr/bin/convert", X_OK) == 0 { #expect(GeneratorTool.locate("convert") == "/usr/bin/convert") }
        #expect(GeneratorTool.locate("sh") == "/usr/bin/sh" || GeneratorTool.locate("sh") == "/bin/sh")
        #expect(GeneratorTool.locate("../bin/sh") == nil)
        let missing = GeneratorTool(name: "inboxd-no-such-tool", package: "inboxd-tools").locate()
        guard case .failure(.unsupported(let why)) = missing else {
            Issue.record("expected unsupported, got \(missing)")
            return
        }
        #expect(why == "inboxd-no-such-tool is not installed; install inboxd-tools")
    }

    @Test func theScratchDirectoryIsRemovedWithTheRenderer() throws {
        var path = ""
        do {
            let rig = try RendererRig()
            path = rig.renderer.scratch.root.path
            #expect(access(path, F_OK) == 0)
            _ = rig.run("sh", ["-c", "mkdir -p $HOME/a/b && echo x > $HOME/a/b/c && chmod 000 $HOME/a/b"])
        }
        #expect(!path.isEmpty)
        #expect(access(path, F_OK) != 0, "\(path) is left")
    }

    // MARK: PDF, PostScript, text pages, terminal pictures

    @Test(.enabled(if: has("pdftoppm", "groff"), "poppler-utils or groff is not installed"),
          arguments: [true, false])
    func aPDFsPagesArePictures(asPreviewer: Bool) throws {
        let fixtures = try Fixtures()
        let pdf = try fixtures.threePagePDF()
        var options = PreviewRenderer.Options()
        options.size = 200
        options.maximumPages = 2
        let identity = asPreviewer ? PreviewRenderer.defaultIdentity : nil
        let renderer = try PreviewRenderer(identity: identity, landlockABI: LandlockRuleset.abi(), options: options,
                                           thumbnailers: [])
        let rendered = try render(renderer, pdf, type: "com.adobe.pdf", with: .pdf)
        #expect(rendered.pageCount == 3)
        let pictures = try #require(shownPictures(rendered))
        #expect(pictures.count == 2)
        for picture in pictures {
            let size = try #require(pngSize(picture))
            #expect(max(size.width, size.height) == 200, "\(picture): \(size)")
            #expect(standardDeviation(picture) > 0, "\(picture) is blank")
        }
        #expect(rendered.notes.contains("pages 3–3 of 3 were left out (a preview draws at most 2)"))
    }

    @Test(.enabled(if: has("gs"), "ghostscript is not installed"))
    func postScriptPagesArePictures() throws {
        let fixtures = try Fixtures()
        let ps = try fixtures.write("two.ps", """
            %!PS-Adobe-3.0
            /Helvetica findfont 40 scalefont setfont
            72 700 moveto (First page) show showpage
            72 700 moveto (Second page) show showpage

            """)
        var options = PreviewRenderer.Options()
        options.size = 400
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: options, thumbnailers: [])
        let rendered = try render(renderer, ps, type: "com.adobe.postscript", with: .postscript)
        #expect(rendered.pageCount == 2)
        let pictures = try #require(shownPictures(rendered))
        #expect(pictures.count == 2)
        for picture in pictures {
            let size = try #require(pngSize(picture))
            // 34 dpi: an A4 page is 281 × 397.
            #expect(max(size.width, size.height) <= 400 && max(size.width, size.height) >= 380, "\(size)")
            #expect(standardDeviation(picture) > 0, "\(picture) is blank")
        }
    }

    @Test(.enabled(if: has("pango-view"), "pango1.0-tools is not installed"))
    func textPagesAreDrawnInAMonospaceFont() throws {
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let result = renderer.pictures(ofTextPages: [["first line", "\tsecond, tabbed"], ["page two"], []])
        let pictures = try result.get()
        #expect(pictures.count == 3)
        let sizes = try pictures.map { try #require(pngSize($0)) }
        // Two lines are taller than one; the empty page is the margins and one empty line.
        #expect(sizes[0].height > sizes[1].height && sizes[1].height >= sizes[2].height, "\(sizes)")
        #expect(standardDeviation(pictures[0]) > 0)
        #expect(pixel(pictures[0], x: 1, y: 1) == "white", "the margin is white")
    }

    @Test(.enabled(if: has("chafa"), "chafa is not installed"))
    func aPictureIsDrawnForTheTerminal() throws {
        let fixtures = try Fixtures()
        let png = try fixtures.redPicture()
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let bytes = try renderer.terminalPicture(png, columns: 20, rows: 5, format: "symbols",
                                                 environment: ["TERM=xterm-256color", "HOME=/root", "COLORTERM="])
            .get()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(bytes.contains(0x1B), "no colour in \(text.debugDescription)")
        #expect(text.split(separator: "\n").count <= 5)
        let missing = renderer.terminalPicture(fixtures.path("none.png"), columns: 20, rows: 5, format: nil,
                                               environment: [])
        guard case .failure(.system) = missing else {
            Issue.record("a missing picture: \(missing)")
            return
        }
    }

    // MARK: Office, iWork, packages

    @Test(.enabled(if: has("soffice") || ci, "LibreOffice (soffice) is not installed"))
    func anRTFDocumentIsConvertedByLibreOfficeThenShownAsPDF() throws {
        let fixtures = try Fixtures()
        let rtf = try fixtures.write("letter.rtf", "{\\rtf1\\ansi{\\fonttbl\\f0 DejaVu Sans;}\\f0\\fs48 Hello from RTF\\par}\n")
        var options = PreviewRenderer.Options()
        options.size = 300
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: options, thumbnailers: [])
        let rendered = try render(renderer, rtf, type: "public.rtf", mimeTypes: ["text/rtf"], with: .office)
        #expect(rendered.pageCount == 1)
        let pictures = try #require(shownPictures(rendered))
        let size = try #require(pngSize(pictures[0]))
        #expect(max(size.width, size.height) == 300)
        #expect(standardDeviation(pictures[0]) > 0, "the page is blank")
        #expect(rendered.notes.contains("converted to PDF by LibreOffice"))
        if let identity = renderer.identity {
            #expect(PreviewRenderer.officePipes(ownedBy: identity.uid).isEmpty, "its pipe is left in /tmp")
        }
    }

    @Test(.enabled(if: has("pdftoppm", "groff"), "poppler-utils or groff is not installed"))
    func anIWorkPackageShowsThePreviewItCarries() throws {
        let fixtures = try Fixtures()
        let pdf = try fixtures.threePagePDF()
        try fixtures.shell("mkdir -p Report.pages/QuickLook && cp \(pdf) Report.pages/QuickLook/Preview.pdf")
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let rendered = try render(renderer, fixtures.path("Report.pages"), type: "com.apple.iwork.pages.sffpages",
                                  package: true, with: .iWork)
        #expect(rendered.pageCount == 3)
        #expect(try #require(shownPictures(rendered)).count == 3)
        #expect(rendered.notes.contains("the preview the document carries (QuickLook/Preview.pdf)"))
    }

    @Test func anIWorkPackagesLinkIsNeverFollowed() throws {
        let fixtures = try Fixtures()
        _ = try fixtures.write("outside.pdf", "%PDF-1.4\n")
        try fixtures.shell("mkdir -p Linked.key/QuickLook && ln -s ../../outside.pdf Linked.key/QuickLook/Preview.pdf"
                           + " && mkdir -p Dir.key && ln -s ../.. Dir.key/QuickLook")
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        for package in ["Linked.key", "Dir.key"] {
            let result = try renderResult(renderer, fixtures.path(package), type: "com.apple.iwork.keynote.key",
                                          package: true, with: .iWork)
            guard case .failure(.unsupported(let why)) = result else {
                Issue.record("\(package): \(result)")
                continue
            }
            #expect(why == "carries no Quick Look preview (QuickLook/Preview.pdf), and LibreOffice imports no package")
        }
        // Only the iWork generator reads a package.
        let other = try renderResult(renderer, fixtures.path("Dir.key"), type: "com.apple.rtfd", package: true, with: .pdf)
        guard case .failure(.unsupported(let why)) = other else {
            Issue.record("a package as a PDF: \(other)")
            return
        }
        #expect(why == "is a package (a directory); no built-in generator reads com.apple.rtfd packages")
    }

    @Test func aTypeWithoutAGeneratorIsUnsupported() throws {
        let fixtures = try Fixtures()
        let file = try fixtures.write("data.bin", "\u{1}\u{2}")
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let result = try renderResult(renderer, file, type: "public.data", with: .facts)
        guard case .failure(.unsupported(let why)) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(why == "no built-in generator reads public.data")
    }

    @Test func officeComponentsAreNamedByType() {
        func package(_ type: String, _ mime: String) -> String {
            PreviewRenderer.officeComponent(PreviewDocument(descriptor: .standardInput, name: "x", contentType: type,
                                                            mimeTypes: [mime], size: 0, package: false)).package
        }
        #expect(package("org.openxmlformats.wordprocessingml.document",
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
                == "libreoffice-writer-nogui")
        #expect(package("public.rtf", "text/rtf") == "libreoffice-writer-nogui")
        #expect(package("org.openxmlformats.spreadsheetml.sheet",
                        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet") == "libreoffice-calc-nogui")
        #expect(package("com.microsoft.excel.xls", "application/vnd.ms-excel") == "libreoffice-calc-nogui")
        #expect(package("org.openxmlformats.presentationml.presentation",
                        "application/vnd.openxmlformats-officedocument.presentationml.presentation")
                == "libreoffice-impress-nogui")
        #expect(package("com.apple.iwork.keynote.key", "application/vnd.apple.keynote") == "libreoffice-impress-nogui")
    }

    @Test func helpersReadAsAPersonWould() {
        #expect(byteCount(1 << 30) == "1 GiB")
        #expect(byteCount(2 << 30) == "2 GiB")
        #expect(byteCount(1536 << 20) == "1.5 GiB")
        #expect(byteCount(1500) == "1.5 KiB")
        #expect(byteCount(100) == "100 bytes")
        #expect(PreviewInput.grouped(268_435_456) == "268,435,456")
        #expect(PreviewInput.grouped(30000) == "30,000")
        #expect(PreviewInput.grouped(999) == "999")
        #expect(PreviewInput.safeExtension(of: "Report.final.DOCX") == "DOCX")
        #expect(PreviewInput.safeExtension(of: ".hidden") == "")
        #expect(PreviewInput.safeExtension(of: "a.b/c d") == "")
        #expect(PreviewInput.fileURI("/tmp/a b/ü.pdf") == "file:///tmp/a%20b/%C3%BC.pdf")
        #expect(PreviewRenderer.pageCount(pdfinfo: "Title:  Pages: 9\nPages:          12\nEncrypted: no\n") == 12)
        #expect(PreviewRenderer.pageCount(pdfinfo: "Creator: x\n") == nil)
    }

    // MARK: Paths that need the core's bodies (ImageHeader, ZipDirectory, ThumbnailerEntry, TextDecoding, DelimitedTable)

    @Test(.enabled(if: has("gdk-pixbuf-thumbnailer", "convert"),
                   "gdk-pixbuf-thumbnailer or ImageMagick is not installed"))
    func aPictureKeepsItsSizeAndAHugeOneIsRefused() throws {
        let fixtures = try Fixtures()
        let png = try fixtures.redPicture()
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let rendered = try render(renderer, png, type: "public.png", with: .image)
        let picture = try #require(shownPictures(rendered)?.first)
        #expect(pngSize(picture).map { [$0.width, $0.height] } == [40, 30], "a small picture is not scaled up")
        #expect(pixel(picture, x: 5, y: 5) == "red")
        // A header alone, declaring 30000 × 30000: refused before any decoder sees it.
        var header: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        header += bigEndian(30000) + bigEndian(30000) + [8, 2, 0, 0, 0] + [0, 0, 0, 0]
        let huge = try fixtures.write("huge.png", bytes: header)
        let result = try renderResult(renderer, huge, type: "public.png", with: .image)
        guard case .failure(.refused(let why)) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(why == "is 30,000 × 30,000 pixels, more than the 268,435,456 a preview decodes")
    }

    @Test(.enabled(if: has("python3"),
                   "python3 is not installed"))
    func aZipBombPosingAsADocumentIsRefused() throws {
        let fixtures = try Fixtures()
        try fixtures.shell("""
            /usr/bin/python3 -c 'import zipfile
            z = zipfile.ZipFile("bomb.docx", "w", zipfile.ZIP_DEFLATED)
            z.writestr("[Content_Types].xml", "<Types/>")
            z.writestr("word/document.xml", b"\\0" * (120 << 20))
            z.close()'
            """)
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let result = try renderResult(renderer, fixtures.path("bomb.docx"), type: "org.openxmlformats.wordprocessingml.document",
                                      with: .office)
        guard case .failure(.refused(let why)) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(why.hasPrefix("has a member (word/document.xml) that expands "), "\(why)")
        var options = PreviewRenderer.Options()
        options.maximumUnpackedSize = 1 << 20
        let strict = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                         landlockABI: LandlockRuleset.abi(), options: options, thumbnailers: [])
        let bounded = try renderResult(strict, fixtures.path("bomb.docx"), type: "org.openxmlformats.wordprocessingml.document",
                                       with: .office)
        guard case .failure(.refused(let total)) = bounded else {
            Issue.record("\(bounded)")
            return
        }
        #expect(total == "would unpack to 120.0 MiB, more than the 1 MiB a preview unpacks")
    }

    @Test(.enabled(if: has("python3", "soffice"),
                   "python3 or LibreOffice is not installed"))
    func aWordDocumentIsConvertedByLibreOffice() throws {
        let fixtures = try Fixtures()
        try fixtures.shell("""
            /usr/bin/python3 -c 'import docx; d = docx.Document(); d.add_paragraph("Hello from a docx"); d.save("a.docx")'
            """)
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let rendered = try render(renderer, fixtures.path("a.docx"), type: "org.openxmlformats.wordprocessingml.document",
                                  with: .office)
        #expect(rendered.pageCount == 1)
        #expect(standardDeviation(try #require(shownPictures(rendered)?.first)) > 0)
    }

    @Test(.enabled(if: has("python3", "unzip", "pdftoppm", "groff"),
                   "python3, unzip or poppler-utils is not installed"))
    func aSingleFileIWorkDocumentShowsThePreviewItCarries() throws {
        let fixtures = try Fixtures()
        let pdf = try fixtures.threePagePDF()
        try fixtures.shell("""
            /usr/bin/python3 -c 'import zipfile
            z = zipfile.ZipFile("Deck.key", "w", zipfile.ZIP_DEFLATED)
            z.writestr("Index/Document.iwa", b"x" * 100)
            z.write("\(pdf)", "QuickLook/Preview.pdf")
            z.close()'
            """)
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let rendered = try render(renderer, fixtures.path("Deck.key"), type: "com.apple.iwork.keynote.key", with: .iWork)
        #expect(rendered.pageCount == 3)
        #expect(try #require(shownPictures(rendered)).count == 3)
    }

    @Test(.enabled(if: has("gdk-pixbuf-thumbnailer", "convert"),
                   "gdk-pixbuf-thumbnailer or ImageMagick is not installed"))
    func aDesktopThumbnailerDrawsThePicture() throws {
        let fixtures = try Fixtures()
        let png = try fixtures.redPicture()
        var options = PreviewRenderer.Options()
        options.size = 64
        options.timeout = .seconds(1)
        options.fileSize = 1 << 20
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: options, thumbnailers: [])
        let entry = ThumbnailerEntry(path: "/usr/share/thumbnailers/gdk-pixbuf-thumbnailer.thumbnailer",
                                     tryExec: "gdk-pixbuf-thumbnailer",
                                     exec: ["gdk-pixbuf-thumbnailer", "-s", "%s", "%u", "%o"], mimeTypes: ["image/png"])
        let rendered = try render(renderer, png, type: "public.png", with: .thumbnailer(entry))
        let picture = try #require(shownPictures(rendered)?.first)
        #expect(pngSize(picture).map { max($0.width, $0.height) } == 64)
        #expect(pixel(picture, x: 5, y: 5) == "red")

        let sleeper = ThumbnailerEntry(path: "sleep.thumbnailer", tryExec: nil, exec: ["sh", "-c", "sleep 30", "%o"],
                                       mimeTypes: ["image/png"])
        let started = ContinuousClock.now
        let slept = try renderResult(renderer, png, type: "public.png", with: .thumbnailer(sleeper))
        guard case .failure(.timedOut) = slept else {
            Issue.record("\(slept)")
            return
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        let writer = ThumbnailerEntry(path: "big.thumbnailer", tryExec: nil,
                                      exec: ["sh", "-c", "head -c 2G /dev/zero > \"$0\"", "%o"], mimeTypes: ["image/png"])
        let wrote = try renderResult(renderer, png, type: "public.png", with: .thumbnailer(writer))
        guard case .failure(.failed(let why)) = wrote else {
            Issue.record("\(wrote)")
            return
        }
        #expect(why == "sh was stopped: it wrote more than 1 MiB")
        let missing = ThumbnailerEntry(path: "gone.thumbnailer", tryExec: "inboxd-no-such-thumbnailer",
                                       exec: ["inboxd-no-such-thumbnailer", "%i", "%o"], mimeTypes: ["image/png"])
        let unsupported = try renderResult(renderer, png, type: "public.png", with: .thumbnailer(missing))
        guard case .failure(.unsupported(let reason)) = unsupported else {
            Issue.record("\(unsupported)")
            return
        }
        #expect(reason == "its thumbnailer (gone.thumbnailer) needs inboxd-no-such-thumbnailer, which is not installed")
    }

    @Test func textAndTablesAreReadBoundedFromTheDescriptor() throws {
        let fixtures = try Fixtures()
        let text = try fixtures.write("notes.txt", "caf\u{E9}\nsecond line\n")
        let table = try fixtures.write("sheet.csv", "name,count\n\"a, b\",2\n")
        var options = PreviewRenderer.Options()
        options.maximumTextBytes = 8
        let renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                           landlockABI: LandlockRuleset.abi(), options: options, thumbnailers: [])
        let shown = try render(renderer, text, type: "public.plain-text", with: .text)
        guard case .text(let decoded) = shown.content else {
            Issue.record("\(shown.content)")
            return
        }
        #expect(decoded.truncated)
        #expect(decoded.lines.first == "café")
        #expect(shown.pageCount == 1)
        let wide = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                       landlockABI: LandlockRuleset.abi(), options: .init(), thumbnailers: [])
        let rows = try render(wide, table, type: "public.comma-separated-values-text", with: .table(.comma))
        guard case .table(let parsed) = rows.content else {
            Issue.record("\(rows.content)")
            return
        }
        #expect(parsed.rows.prefix(2) == [["name", "count"], ["a, b", "2"]])
    }
}

// MARK: - Support

/// Whether the tests run under CI, where a missing tool is a failure, not a skip.
private let ci = CurrentProcess.environment("CI") == "true"

/// Whether every tool is installed (in /usr/bin or /bin, as the renderer looks first) — or CI says they must be.
private func has(_ tools: String...) -> Bool {
    ci || tools.allSatisfy { GeneratorTool.locate($0) != nil }
}

/// A renderer with bounds for the runner's own tests, and a way to run one tool under its sandbox.
private struct RendererRig {
    let renderer: PreviewRenderer

    init(identity: Identity? = PreviewRenderer.defaultIdentity, timeout: Duration = .seconds(30),
         fileSize: UInt64 = 1 << 30, addressSpace: UInt64 = 2 << 30) throws {
        var options = PreviewRenderer.Options()
        options.timeout = timeout
        options.fileSize = fileSize
        options.addressSpace = addressSpace
        renderer = try PreviewRenderer(identity: identity, landlockABI: LandlockRuleset.abi(), options: options,
                                       thumbnailers: [])
    }

    func run(_ tool: String, _ arguments: [String], workingIn directory: String? = nil) -> Result<String, PreviewError> {
        guard let executable = GeneratorTool.locate(tool) else { return .failure(.unsupported("\(tool) is missing")) }
        var process = GeneratorProcess(tool, executable: executable, arguments: arguments,
                                       addressSpace: renderer.options.addressSpace, fileSize: renderer.options.fileSize)
        process.workingDirectory = directory
        return renderer.sandbox.run(process)
    }
}

/// A test's own directory of fixtures, removed afterwards.
private final class Fixtures {
    let path: String

    init() throws {
        path = try FileSystem.makeTemporaryDirectory(prefix: "/tmp/inboxd-preview-test-")
        // Readable by the previewer identity (it reads packages' members through copies, but a tool may look).
        chmod(path, 0o755)
    }

    deinit { _ = try? run(["/bin/rm", "-rf", path]) }

    func path(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func shell(_ script: String) throws -> String {
        let outcome = try run(["/bin/sh", "-c", "cd \(path) && " + script], environment: ["PATH=/usr/bin:/bin"])
        guard outcome.status == .exited(0) else {
            throw SystemError("sh: \(script): \(outcome.errorOutput)", errno: .invalidArgument)
        }
        return outcome.output
    }

    func write(_ name: String, _ text: String) throws -> String { try write(name, bytes: Array(text.utf8)) }

    func write(_ name: String, bytes: [UInt8]) throws -> String {
        let directory = try Directory(path: path)
        try directory.writeFile(name, bytes: bytes, mode: 0o644)
        return self.path(name)
    }

    /// Three pages of text, one word each, by groff.
    func threePagePDF() throws -> String {
        try shell("printf '.LP\\nPage one\\n.bp\\nPage two\\n.bp\\nPage three\\n' | groff -ms -Tpdf > three.pdf")
        return path("three.pdf")
    }

    /// A 40 × 30 red PNG by ImageMagick's real convert.
    func redPicture() throws -> String {
        try shell("/usr/bin/convert -size 40x30 xc:red red.png")
        return path("red.png")
    }
}

/// Opens `path` as inboxctl does (never through a link) and renders it.
private func renderResult(_ renderer: PreviewRenderer, _ path: String, type: String, mimeTypes: [String] = [],
                          package: Bool = false,
                          with generator: PreviewGenerator) throws -> Result<RenderedPreview, PreviewError> {
    let file = try FileDescriptor.open(path, .readOnly, options: package ? [.noFollow, .directory]
                                       : [.noFollow, .nonBlocking])
    defer { file.close() }
    let size = try file.status().st_size
    let document = PreviewDocument(descriptor: file, name: lastPathComponent(path), contentType: type,
                                   mimeTypes: mimeTypes, size: Int64(size), package: package)
    return renderer.render(document, with: generator)
}

private func render(_ renderer: PreviewRenderer, _ path: String, type: String, mimeTypes: [String] = [],
                    package: Bool = false, with generator: PreviewGenerator) throws -> RenderedPreview {
    try renderResult(renderer, path, type: type, mimeTypes: mimeTypes, package: package, with: generator).get()
}

private func shownPictures(_ rendered: RenderedPreview) -> [String]? {
    if case .pictures(let paths) = rendered.content { return paths }
    return nil
}

/// A PNG's width and height from its IHDR chunk, read here (PNGFile is another engineer's).
private func pngSize(_ path: String) -> (width: Int, height: Int)? {
    guard case .success(let bytes) = readBounded(path, limit: 64 << 20), bytes.count >= 24,
          bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
          Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
    func number(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (number(16), number(20))
}

private func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

/// ImageMagick's standard deviation of the picture's pixels: 0 for a blank page.
private func standardDeviation(_ path: String) -> Double {
    let outcome = try? run(["/usr/bin/convert", path, "-format", "%[fx:standard_deviation]", "info:"])
    return Double(outcome?.output ?? "") ?? 0
}

/// A pixel's colour by name ("red", "white"), as ImageMagick says it (or as sRGB values, by name here).
private func pixel(_ path: String, x: Int, y: Int) -> String {
    let said = (try? run(["/usr/bin/convert", path, "-format", "%[pixel:p{\(x),\(y)}]", "info:"]))?.output ?? ""
    return ["srgb(255,0,0)": "red", "srgb(255,255,255)": "white"][said] ?? said
}

/// Processes whose command line contains `text` (/proc/PID/cmdline, NULs read as spaces).
private func processes(containing text: String) -> [String] {
    FileSystem.entries(atPath: "/proc").compactMap { name -> String? in
        let pid = String(decoding: name, as: UTF8.self)
        guard Int(pid) != nil, case .success(let bytes) = readBounded("/proc/\(pid)/cmdline", limit: 4096) else {
            return nil
        }
        let line = String(decoding: bytes.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        return line.contains(text) ? "\(pid): \(line)" : nil
    }
}
