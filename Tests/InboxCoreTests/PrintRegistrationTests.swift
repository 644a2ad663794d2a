import Testing
@testable import InboxCore

/// `Print=DEST` (a print hot folder): the destination's rules, what it excludes, the launch kind it makes, and the
/// report lines its print job writes.
@Suite("Print= registrations and print job reports")
struct PrintRegistrationTests {
    func parse(_ handler: String) -> RegistrationFile {
        RegistrationParser.parse(Array("[Handler]\n\(handler)\n\n[DocumentType]\nContentTypes=com.adobe.pdf\n".utf8),
                                 path: "/etc/inboxd/handlers.d/org.example.print.handler")
    }

    @Test(arguments: ["office", "office/duplex", "Office_Laser-2", "a.b@c"])
    func aDestinationAsLpTakesIt(_ name: String) throws {
        let file = parse("Print=\(name)")
        let registration = try #require(file.registration, "\(file.diagnostics)")
        #expect(registration.printer?.description == name)
        #expect(registration.printerLine == 2)
        #expect(registration.exec.arguments.isEmpty)
        #expect(LaunchKind(registration, alone: false) == .print)
        #expect(LaunchKind.print.ownsProcess)
    }

    @Test(arguments: ["two words", "a/b/c", "/q", "q/", "q#1", "q?", "it's", "a\\b", String(repeating: "q", count: 128)])
    func aNameCUPSRefusesIsAnError(_ name: String) {
        let file = parse("Print=\(name)")
        #expect(file.registration == nil)
        #expect(file.diagnostics.contains { $0.message.hasPrefix("invalid destination") && $0.location.line == 2 },
                "\(file.diagnostics)")
    }

    @Test func printStandsInForExec() {
        #expect(parse("Print=office").diagnostics.allSatisfy { !$0.message.contains("Exec") })
        #expect(parse("Print=").diagnostics.contains { $0.message == "missing Exec= in [Handler]" })
    }

    @Test func whatPrintExcludes() {
        let file = parse("Exec=/bin/true %f\nPrint=office\nUnit=x@.service\nActivation=resident\nBatchSize=4")
        #expect(file.registration == nil)
        let messages = file.diagnostics.map { "\($0.location.line): \($0.message)" }
        #expect(messages.contains { $0.hasPrefix("2: Exec= and Print= exclude each other") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("4: Unit= and Print= exclude each other") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("5: Activation=resident and Print= exclude each other") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("6: BatchSize= has no effect with Print=") }, "\(messages)")
    }

    @Test func anInfoPlistSaysPrintInInboxdHandler() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>CFBundleIdentifier</key><string>org.example.print</string>
              <key>InboxdHandler</key><dict><key>Print</key><string>office</string></dict>
              <key>CFBundleDocumentTypes</key><array><dict>
                <key>LSItemContentTypes</key><array><string>com.adobe.pdf</string></array>
              </dict></array>
            </dict></plist>
            """
        let file = RegistrationParser.parse(Array(plist.utf8), path: "/etc/inboxd/handlers.d/org.example.print.plist")
        let registration = try #require(file.registration, "\(file.diagnostics)")
        #expect(registration.printer?.description == "office")
        #expect(LaunchKind(registration, alone: false) == .print)
    }

    static let reports: [PrintReport] = [
        .submitted(job: "office-12", format: "application/pdf", converted: nil),
        .submitted(job: "office-13", format: "application/pdf", converted: "office"),
        .ended(state: "completed", pages: 3, reasons: [], message: nil),
        .ended(state: "aborted", pages: nil, reasons: ["job-aborted-by-system", "document-format-error"],
               message: "Filter \"pdftopdf\" failed"),
        .deferred("office is stopped (Paused; paused); `cupsenable office` starts it again"),
        .failed("nothing converts public.data into a document a printer takes"),
    ]

    @Test(arguments: reports)
    func aReportReadsBackAsWritten(_ report: PrintReport) {
        var line = Array(report.line.utf8)
        #expect(line.last == UInt8(ascii: "\n"))
        line.removeLast()
        #expect(PrintReport.parse(line) == report)
    }

    @Test(arguments: [
        "", "null", "[]", "{}", "{\"event\":\"submitted\"}", "{\"event\":\"submitted\",\"job\":1,\"format\":\"x\"}",
        "{\"event\":\"ended\"}", "{\"event\":\"deferred\"}", "{\"event\":\"done\",\"reason\":\"x\"}", "{\"event\":",
    ])
    func whatIsNoReport(_ text: String) {
        #expect(PrintReport.parse(Array(text.utf8)) == nil)
    }

    @Test func reportsAreBounded() {
        let long = String(repeating: "x", count: 4000)
        let line = Array("{\"event\":\"failed\",\"reason\":\"\(long)\"}".utf8)
        #expect(PrintReport.parse(line) == .failed(String(repeating: "x", count: PrintReport.maximumText)))
        let overlong = Array("{\"event\":\"failed\",\"reason\":\"\(String(repeating: "y", count: PrintReport.maximumLine))\"}".utf8)
        #expect(PrintReport.parse(overlong) == nil)
    }

    @Test func everyBuiltInGeneratorHasAWord() {
        let generators: [PreviewGenerator] = [.image, .pdf, .postscript, .text, .table(.comma), .table(.tab), .office,
                                              .iWork, .facts]
        for generator in generators {
            let word = generator.word
            #expect(word != nil && PreviewGenerator(word: word!) == generator)
        }
        #expect(PreviewGenerator(word: "thumbnailer") == nil)
        #expect(PreviewGenerator(word: "") == nil)
    }
}
