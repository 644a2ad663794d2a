import Foundation
import Testing

/// `inboxctl print` against a real, private cupsd (PrintServer): what comes out of the queue is checked as a person
/// would, a PDF with the document's pages and text; a stopped queue, a missing server, a type nothing converts, a job
/// cancelled at the printer each end as the help says.
@Suite(.serialized, .enabled(if: PrintServer.available || PrintServer.required, Comment(rawValue: PrintServer.missing)))
struct PrintTests {
    let world: AgentHarness
    let server: PrintServer

    init() throws {
        try #require(PrintServer.available, "CI=true: cupsd must be installed (\(PrintServer.missing))")
        world = try AgentHarness()
        server = try PrintServer()
    }

    func print(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.inboxctl.path, ["print"] + arguments + ["--handlers", world.handlers.path, "--state", world.state.path],
                environment: server.environment)
    }

    func file(_ name: String, _ text: String) throws -> URL {
        let url = world.root.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// A two-page PDF whose pages say `first page` and `second page`.
    func twoPagePDF() throws -> URL {
        var pages: [String] = []
        for (index, words) in ["first page", "second page"].enumerated() {
            let text = try file("page\(index).txt", words + "\n")
            let pdf = world.root.appendingPathComponent("page\(index).pdf").path
            _ = try run("/usr/bin/pango-view", ["--no-display", "--output=" + pdf, text.path])
            pages.append(pdf)
        }
        let pdf = world.root.appendingPathComponent("report.pdf")
        _ = try run("/usr/bin/pdfunite", pages + [pdf.path])
        return pdf
    }

    func pageCount(_ pdf: URL) throws -> Int? {
        let info = try run("/usr/bin/pdfinfo", [pdf.path]).stdout
        return info.split(separator: "\n").first { $0.hasPrefix("Pages:") }
            .flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) }
    }

    func text(_ pdf: URL) throws -> String { try run("/usr/bin/pdftotext", [pdf.path, "-"]).stdout }

    @Test func aPDFIsPrintedWithItsPagesAndText() throws {
        let output = try server.addQueue("q")
        let result = try print(["--printer", "q", try twoPagePDF().path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try pageCount(output) == 2)
        let printed = try text(output)
        #expect(printed.contains("first page") && printed.contains("second page"), "\(printed)")
    }

    @Test func aTextFileIsPrintedAsItsPreviewIsDrawn() throws {
        let output = try server.addQueue("q")
        let note = try file("note.txt", "hello printed world\nsecond line\n")
        let result = try print(["--printer", "q", "--json", note.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"job\":\"q-1\""), "\(result.stdout)")
        #expect(result.stdout.contains("\"state\":\"completed\""), "\(result.stdout)")
        #expect(try pageCount(output) == 1)
        #expect(try text(output).contains("hello printed world"))
    }

    @Test func aPictureIsPrintedAsOnePage() throws {
        let output = try server.addQueue("q")
        let png = world.root.appendingPathComponent("photo.png")
        _ = try run("/usr/bin/convert", ["-size", "300x200", "xc:red", png.path])
        let result = try print(["--printer", "q", png.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try pageCount(output) == 1)
        let images = try run("/usr/bin/pdfimages", ["-list", output.path]).stdout
        #expect(images.split(separator: "\n").count >= 3, "no picture in the printed PDF: \(images)")
    }

    @Test(.enabled(if: Office.available || Office.required, Comment(rawValue: Office.missing)))
    func aWordDocumentIsPrintedThroughLibreOffice() throws {
        try #require(Office.available, "CI=true: LibreOffice must be installed (\(Office.missing))")
        let output = try server.addQueue("q")
        let docx = world.root.appendingPathComponent("letter.docx")
        let made = try run("/usr/bin/python3", ["-c", "import docx, sys; d = docx.Document(); "
                                                + "d.add_paragraph('A letter printed through LibreOffice'); d.save(sys.argv[1])",
                                                docx.path])
        try #require(made.status == 0, "python3-docx: \(made.stderr)")
        let result = try print(["--printer", "q", docx.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try pageCount(output) == 1)
        #expect(try text(output).contains("A letter printed through LibreOffice"))
    }

    @Test func aStoppedQueueIsItsOwnExitStatusAndNothingIsSent() throws {
        let output = try server.addQueue("q")
        try server.lp("/usr/sbin/cupsdisable", ["q"])
        let result = try print(["--printer", "q", try file("note.txt", "hello\n").path])
        #expect(result.status == 3)
        #expect(result.stderr == "inboxctl: cannot print: q is stopped (paused); `cupsenable q` starts it again; "
                + "nothing was sent\n", "\(result.stderr)")
        #expect(try server.lp("/usr/bin/lpstat", ["-W", "all", "-o"]).isEmpty)
        #expect(try Data(contentsOf: output).isEmpty)
    }

    @Test func noServerIsItsOwnExitStatus() throws {
        try server.addQueue("q")
        server.stop()
        let result = try print(["--printer", "q", try file("note.txt", "hello\n").path])
        #expect(result.status == 4)
        #expect(result.stderr.hasPrefix("inboxctl: cannot print: no CUPS server answers"), "\(result.stderr)")
    }

    @Test func aTypeNothingConvertsIsAClearErrorAndNothingIsSent() throws {
        let output = try server.addQueue("q")
        let random = world.root.appendingPathComponent("random.bin")
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255) }).write(to: random)
        let result = try print(["--printer", "q", random.path])
        #expect(result.status == 1)
        #expect(result.stderr == "inboxctl: cannot print \(random.path): nothing converts public.data into a document a "
                + "printer takes; nothing was sent\n", "\(result.stderr)")
        #expect(try server.lp("/usr/bin/lpstat", ["-W", "all", "-o"]).isEmpty)
        #expect(try Data(contentsOf: output).isEmpty)
    }

    /// A server that keeps no job history: the job it forgot at once was taken, exit 0, not followed for ever.
    @Test func aJobTheServerForgetsAtOnceWasSent() throws {
        let forgetful = try PrintServer(keepsHistory: false)
        let output = try forgetful.addQueue("q")
        let result = try run(Binaries.inboxctl.path, ["print", "--printer", "q", "--json", try twoPagePDF().path,
                                                      "--handlers", world.handlers.path, "--state", world.state.path],
                             environment: forgetful.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"job\":\"q-1\""), "\(result.stdout)")
        try waitUntil("the job's output", timeout: 20) { (try? pageCount(output)) == 2 }
    }

    @Test func noWaitPrintsTheJobID() throws {
        try server.addQueue("q")
        let result = try print(["--printer", "q", "--no-wait", try file("note.txt", "hello\n").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "q-1\n")
    }

    @Test func aJobCancelledAtThePrinterWhileFollowedFailsWithItsReason() throws {
        try server.addQueue("q")
        let note = try file("note.txt", "hello\n")
        let process = Process()
        process.executableURL = Binaries.inboxctl
        // Held: the job waits on the queue until the test cancels it.
        process.arguments = ["print", "--printer", "q", "-o", "job-hold-until=indefinite", note.path,
                             "--handlers", world.handlers.path, "--state", world.state.path]
        process.environment = server.environment
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try waitUntil("the job is queued", timeout: 20) {
            try server.lp("/usr/bin/lpstat", ["-o"]).contains("q-1")
        }
        try server.lp("/usr/bin/cancel", ["q-1"])
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        // The reasons are cupsd's (2.4 says processing-to-stop-point of a job cancelled while held).
        #expect(stderr.hasPrefix("inboxctl: cannot print \(note.path): q-1 was canceled ("),
                "\(stderr)")
    }

    @Test func usageErrorsExitTwo() throws {
        let result = try print(["--copies", "0", "x"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("Error: --copies '0' is not a number from 1 to 9999\n"))
        #expect(try print(["--pages", "3-1", "x"]).status == 2)
        #expect(try print(["-o", "=x", "x"]).status == 2)
    }
}
