import Foundation
import Testing

/// A print hot folder (`Print=DEST` in a registration) with the real agent and a real, private cupsd (PrintServer):
/// what comes out of the queue is the document, with its pages and text; the job's steps are journal entries; a
/// stopped queue or a server that does not answer defers the file (tried again without using an attempt) until it can
/// print; a job cancelled at the printer is a failed attempt, and the file goes to failed/ with the IPP reason.
@Suite(.serialized, .enabled(if: (PrintServer.available || PrintServer.required) && Journal.available,
                             Comment(rawValue: PrintServer.missing + "; " + Journal.unavailableReason)))
struct PrintHotFolderTests {
    let world: AgentHarness
    let server: PrintServer
    let handler: String

    init() throws {
        try #require(PrintServer.available, "CI=true: cupsd must be installed (\(PrintServer.missing))")
        world = try AgentHarness()
        server = try PrintServer()
        handler = "test.print.\(world.tag)"
    }

    /// Registers the hot folder for PDF and text on `queue`, and starts the agent with the server as CUPS_SERVER.
    func start(queue: String = "q", maxAttempts: Int = 1) throws {
        try world.write("""
            [Handler]
            Identifier=\(handler)
            Print=\(queue)

            [DocumentType]
            Name=Printed documents
            ContentTypes=com.adobe.pdf public.plain-text
            Rank=Owner
            """, to: world.handlerFile(handler))
        try world.start(config: "[Agent]\nMaxAttempts=\(maxAttempts)\nRetryDelaySec=200ms\n",
                        environment: ["CUPS_SERVER": server.socket])
    }

    /// A two-page PDF whose pages say `first page` and `second page`.
    func twoPagePDF() throws -> [UInt8] {
        var pages: [String] = []
        for (index, words) in ["first page", "second page"].enumerated() {
            let text = world.root.appendingPathComponent("page\(index).txt")
            try (words + "\n").write(to: text, atomically: true, encoding: .utf8)
            let pdf = world.root.appendingPathComponent("page\(index).pdf").path
            _ = try run("/usr/bin/pango-view", ["--no-display", "--output=" + pdf, text.path])
            pages.append(pdf)
        }
        let pdf = world.root.appendingPathComponent("made.pdf")
        _ = try run("/usr/bin/pdfunite", pages + [pdf.path])
        return Array(try Data(contentsOf: pdf))
    }

    func pageCount(_ pdf: URL) throws -> Int? {
        let info = try run("/usr/bin/pdfinfo", [pdf.path]).stdout
        return info.split(separator: "\n").first { $0.hasPrefix("Pages:") }
            .flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) }
    }

    func text(_ pdf: URL) throws -> String { try run("/usr/bin/pdftotext", [pdf.path, "-"]).stdout }

    @Test func aPDFDroppedIsPrintedAndItsCopyRemoved() throws {
        let output = try server.addQueue("q")
        try start()
        try world.drop("report.pdf", contents: try twoPagePDF(), attributes: ["user.inbox.source-app": "com.example.scan"])
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(finished.first?[field: "INBOX_PRINTER"] == "q")
        let submitted = try #require(world.events("print-submitted").first)
        #expect(submitted["MESSAGE_ID"] as? String == "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c65")
        #expect(submitted[field: "INBOX_PRINT_JOB"] == "q-1")
        #expect(submitted[field: "INBOX_PRINT_FORMAT"] == "application/pdf")
        #expect(submitted[field: "INBOX_PRINTER"] == "q")
        #expect(submitted[field: "INBOX_SOURCE_APP"] == "com.example.scan")
        let ended = try #require(world.events("print-ended").first)
        #expect(ended["MESSAGE_ID"] as? String == "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c66")
        #expect(ended[field: "INBOX_PRINT_STATE"] == "completed")
        #expect(ended[field: "INBOX_PRINT_JOB"] == "q-1")
        #expect(try pageCount(output) == 2)
        let printed = try text(output)
        #expect(printed.contains("first page") && printed.contains("second page"), "\(printed)")
        try waitUntil("the copy is removed") {
            world.contents(of: world.inbox).isEmpty && world.contents(of: world.failedDirectory).isEmpty
        }
    }

    @Test func aTextFileIsPrintedAsItsPreviewIsDrawn() throws {
        let output = try server.addQueue("q")
        try start()
        try world.drop("note.txt", contents: Array("hello from the hot folder\nsecond line\n".utf8))
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        let submitted = try #require(world.events("print-submitted").first)
        #expect(submitted[field: "INBOX_PRINT_CONVERTED"] == "text")
        #expect(try pageCount(output) == 1)
        #expect(try text(output).contains("hello from the hot folder"))
    }

    /// A Word document is made a PDF by LibreOffice inside the print job (as nobody, under the job's sandbox).
    @Test(.enabled(if: Office.available || Office.required, Comment(rawValue: Office.missing)))
    func aWordDocumentIsConvertedByLibreOfficeInTheJob() throws {
        try #require(Office.available, "CI=true: LibreOffice must be installed (\(Office.missing))")
        let output = try server.addQueue("q")
        try world.write("""
            [Handler]
            Identifier=\(handler)
            Print=q
            TimeoutSec=120s

            [DocumentType]
            Name=Letters
            ContentTypes=org.openxmlformats.wordprocessingml.document
            Rank=Owner
            """, to: world.handlerFile(handler))
        try world.start(config: "[Agent]\nMaxAttempts=1\n", environment: ["CUPS_SERVER": server.socket])
        let docx = world.root.appendingPathComponent("made.docx")
        let made = try run("/usr/bin/python3", ["-c", "import docx, sys; d = docx.Document(); "
                                                + "d.add_paragraph('A letter from the hot folder'); d.save(sys.argv[1])",
                                                docx.path])
        try #require(made.status == 0, "python3-docx: \(made.stderr)")
        try world.drop("letter.docx", contents: Array(try Data(contentsOf: docx)))
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"], timeout: 120)
        #expect(world.events("print-submitted").first?[field: "INBOX_PRINT_CONVERTED"] == "office")
        #expect(try pageCount(output) == 1)
        #expect(try text(output).contains("A letter from the hot folder"))
    }

    /// A server that keeps no job history forgets a job as soon as it ended: the job is done, said so, not followed
    /// until its timeout.
    @Test func aJobTheServerForgetsAtOnceIsDone() throws {
        let forgetful = try PrintServer(keepsHistory: false)
        let output = try forgetful.addQueue("q")
        try world.write("[Handler]\nIdentifier=\(handler)\nPrint=q\nTimeoutSec=20s\n\n[DocumentType]\nContentTypes=com.adobe.pdf\n",
                        to: world.handlerFile(handler))
        try world.start(config: "[Agent]\nMaxAttempts=1\n", environment: ["CUPS_SERVER": forgetful.socket])
        try world.drop("report.pdf", contents: try twoPagePDF())
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"], timeout: 15)
        let ended = try #require(world.events("print-ended").first)
        #expect(ended[field: "INBOX_PRINT_STATE"] == "purged")
        #expect((ended[field: "INBOX_PRINT_MESSAGE"] ?? "").contains("keeps no record of job 1"))
        try waitUntil("the job's output", timeout: 20) { (try? pageCount(output)) == 2 }
    }

    /// A stopped queue defers the file again and again, beyond MaxAttempts=1, and it prints once the queue is enabled.
    @Test func aStoppedQueueDefersUntilItIsEnabled() throws {
        let output = try server.addQueue("q")
        try server.lp("/usr/sbin/cupsdisable", ["q"])
        try start(maxAttempts: 1)
        try world.drop("report.pdf", contents: try twoPagePDF())
        let retries = try world.waitForEvents("retry", ["INBOX_HANDLER=\(handler)"], count: 3)
        let reason = retries.first?[field: "INBOX_REASON"] ?? ""
        #expect(reason.hasPrefix("could not take it now (q is stopped"), "\(reason)")
        #expect(world.events("failed").isEmpty)
        #expect(try server.lp("/usr/bin/lpstat", ["-W", "all", "-o"]).isEmpty, "a job was left on the stopped queue")
        try server.lp("/usr/sbin/cupsenable", ["q"])
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(finished.first?[field: "INBOX_ATTEMPT"] == "1", "a deferred attempt was counted")
        #expect(try pageCount(output) == 2)
    }

    @Test func aServerThatDoesNotAnswerDefersUntilItIsBack() throws {
        let output = try server.addQueue("q")
        server.stop()
        try start(maxAttempts: 1)
        try world.drop("report.pdf", contents: try twoPagePDF())
        let retries = try world.waitForEvents("retry", ["INBOX_HANDLER=\(handler)"], count: 2)
        let reason = retries.first?[field: "INBOX_REASON"] ?? ""
        #expect(reason.hasPrefix("could not take it now (no CUPS server answers"), "\(reason)")
        try server.start()
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(try pageCount(output) == 2)
        #expect(world.events("failed").isEmpty)
    }

    /// A network printer that takes the job and never finishes it (a socket that is never read): the job is cancelled
    /// at the printer, which fails the attempt; with MaxAttempts=1 the file goes to failed/ with the IPP state.
    @Test func aJobCancelledAtThePrinterIsAFailedAttempt() throws {
        let listener = try StalledPrinter()
        defer { listener.close() }
        try server.lp("/usr/sbin/lpadmin", ["-p", "slow", "-E", "-v", "socket://127.0.0.1:\(listener.port)",
                                            "-m", "lsb/usr/cupsfilters/Generic-PDF_Printer-PDF.ppd"])
        try start(queue: "slow", maxAttempts: 1)
        try world.drop("report.pdf", contents: try twoPagePDF())
        let submitted = try #require(try world.waitForEvents("print-submitted").first)
        let job = try #require(submitted[field: "INBOX_PRINT_JOB"])
        try waitUntil("the job is processing", timeout: 20) {
            try server.lp("/usr/bin/lpstat", ["-o", "slow"]).contains(job)
        }
        try server.lp("/usr/bin/cancel", [job])
        let failed = try #require(try world.waitForEvents("failed", ["INBOX_HANDLER=\(handler)"]).first)
        let reason = failed[field: "INBOX_REASON"] ?? ""
        #expect(reason.hasPrefix("could not print it (\(job) ended canceled"), "\(reason)")
        #expect(reason.hasSuffix("after 1 attempt"), "\(reason)")
        #expect(world.events("print-ended", ["INBOX_PRINT_STATE=canceled"]).count == 1)
        #expect(world.contents(of: world.failedDirectory).contains("report.pdf"))
    }

    @Test func aTypeNothingConvertsFailsWithoutSendingAnything() throws {
        try server.addQueue("q")
        try world.write("""
            [Handler]
            Identifier=\(handler)
            Print=q

            [DocumentType]
            Name=Anything
            ContentTypes=public.data
            Rank=Alternate
            """, to: world.handlerFile(handler))
        try world.start(config: "[Agent]\nMaxAttempts=1\n", environment: ["CUPS_SERVER": server.socket])
        try world.drop("blob.bin", contents: (0..<4096).map { _ in UInt8.random(in: 0...255) })
        let failed = try #require(try world.waitForEvents("failed", ["INBOX_HANDLER=\(handler)"]).first)
        #expect(failed[field: "INBOX_REASON"] == "could not print it (nothing converts public.data into a document a "
                + "printer takes) after 1 attempt", "\(failed)")
        #expect(try server.lp("/usr/bin/lpstat", ["-W", "all", "-o"]).isEmpty)
    }

    /// `inboxctl verify` asks the server about the destination: unknown or stopped is a warning at the Print= line,
    /// a server that does not answer a notice; a destination that takes jobs says nothing.
    @Test func verifyChecksTheDestination() throws {
        try server.addQueue("q")
        func verify(_ destination: String) throws -> String {
            try world.write("[Handler]\nIdentifier=\(handler)\nPrint=\(destination)\n\n[DocumentType]\nContentTypes=com.adobe.pdf\n",
                            to: world.handlerFile(handler))
            let result = try run(Binaries.inboxctl.path, ["verify", world.handlerFile(handler).path],
                                 environment: server.environment)
            return result.stdout + result.stderr
        }
        let path = world.handlerFile(handler).path
        #expect(try !verify("q").contains(":3:"))
        #expect(try verify("nowhere").contains("\(path):3: warning: Print=nowhere: no destination is named nowhere on the "
                                              + "CUPS server; `lpstat -e` lists the destinations"))
        try server.lp("/usr/sbin/cupsdisable", ["q"])
        #expect(try verify("q").contains("\(path):3: warning: Print=q: q is stopped"))
        server.stop()
        #expect(try verify("q").contains("\(path):3: notice: Print=q not checked: no CUPS server answers"))
    }

    @Test func printExcludesExecAndResident() throws {
        try world.write("""
            [Handler]
            Identifier=\(handler)
            Exec=/bin/true %f
            Print=q
            Activation=resident

            [DocumentType]
            ContentTypes=com.adobe.pdf
            """, to: world.handlerFile(handler))
        let result = try run(Binaries.inboxctl.path, ["verify", world.handlerFile(handler).path])
        #expect(result.status != 0)
        #expect(result.stdout.contains(":3: Exec= and Print= exclude each other") || result.stderr.contains(":3: Exec= and Print= exclude each other"),
                "\(result.stdout)\(result.stderr)")
        #expect((result.stdout + result.stderr).contains(":5: Activation=resident and Print= exclude each other"))
    }
}

/// A network printer that accepts a connection and never reads from it nor closes it: a job sent to it stays
/// processing until it is cancelled. Closed by the test.
final class StalledPrinter: @unchecked Sendable {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard fd >= 0, bound == 0, listen(fd, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() { _ = Glibc.close(descriptor) }
}
