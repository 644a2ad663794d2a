import Foundation
import Testing

/// Routing by Inbox and by name with the real agent: an Inbox bound to a handler in inboxd.conf (`[Inbox] Path=
/// Handler=`), and document types that claim files by name (`NamePatterns=`). The handler chosen is the one the
/// finished entry names.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxRoutingTests {
    /// Drops a file into `directory` the way `inboxctl send` does: a hidden name, then a rename into place.
    static func drop(_ name: String, _ contents: [UInt8], into directory: URL) throws {
        let hidden = directory.appendingPathComponent(".\(name).part")
        try AgentHarness.writeClosingOnExec(contents, to: hidden)
        guard rename(hidden.path, directory.appendingPathComponent(name).path) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    static let pdf = Array("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".utf8)

    @Test func aBoundInboxGivesEveryFileToItsHandler() throws {
        let world = try AgentHarness()
        let owner = "test.owner.\(world.tag)", bound = "test.bound.\(world.tag)", later = "test.later.\(world.tag)"
        let pictures = "test.pictures.\(world.tag)"
        try world.register(owner, contentTypes: "public.plain-text", rank: "Owner")
        try world.register(bound, contentTypes: "public.plain-text", rank: "Alternate")
        try world.register(pictures, contentTypes: "public.png", rank: "Owner")
        let scans = world.root.appendingPathComponent("Scans"), waiting = world.root.appendingPathComponent("Waiting")
        try world.start(config: """
            [Inbox]
            Path=\(scans.path)
            Handler=\(bound)

            [Inbox]
            Path=\(waiting.path)/
            Handler=\(later)
            """)
        // The handler the second Inbox is bound to is not registered: said at load, with the line.
        let warning = try Journal.wait(for: ["_PID=\(world.pid)", "CONFIG_LINE=7",
                                            "CONFIG_FILE=" + world.root.appendingPathComponent("inboxd.conf").path])
        #expect((warning.first?["MESSAGE"] as? String)?.contains("Handler= names '\(later)', which is not registered") == true)

        // The Owner of the type gets what comes through the ordinary Inbox; the bound handler what comes through its own.
        try world.drop("plain.txt", contents: Array("plain".utf8))
        #expect(try world.waitForEvents("finished", ["INBOX_HANDLER=\(owner)"]).count == 1)
        try Self.drop("scan.txt", Array("scanned".utf8), into: scans)
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(bound)"])
        #expect(finished.first?[field: "INBOX_CHOSEN_BY"] == "inbox")
        #expect(finished.first?[field: "INBOX_FILE"]?.hasSuffix("/scan.txt") == true)

        // A type the bound handler does not open waits in unhandled/, with the reason; the PNG Owner does not get it.
        try Self.drop("photo.png", pngBytes(width: 2, height: 2), into: scans)
        let unhandled = try world.waitForEvents("unhandled", ["INBOX_BOUND_HANDLER=\(bound)"])
        #expect((unhandled.first?["MESSAGE"] as? String)?.contains("is bound to \(bound), which does not open public.png")
                == true)
        // A file of an Inbox whose handler is not registered waits too.
        try Self.drop("later.txt", Array("later".utf8), into: waiting)
        try world.waitForEvents("unhandled", ["INBOX_BOUND_HANDLER=\(later)"])
        #expect(world.events("finished", ["INBOX_HANDLER=\(pictures)"]).isEmpty)

        // Once the registrations change, each goes to its Inbox's handler, from unhandled/ (the Inbox is recorded
        // on the file), never to the Owner of its type.
        try world.register(bound, contentTypes: "public.plain-text public.png", rank: "Alternate")
        try world.register(later, contentTypes: "public.plain-text", rank: "Alternate")
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(bound)", "INBOX_CONTENT_TYPE=public.png"])
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(later)"])
        #expect(world.events("finished", ["INBOX_HANDLER=\(pictures)"]).isEmpty)
        #expect(world.events("finished", ["INBOX_HANDLER=\(owner)"]).count == 1)
    }

    @Test func aRetriedFileGoesBackToItsBoundInbox() throws {
        let world = try AgentHarness()
        let owner = "test.owner.\(world.tag)", bound = "test.bound.\(world.tag)"
        try world.register(owner, contentTypes: "public.plain-text", rank: "Owner")
        try world.register(bound, contentTypes: "public.plain-text", rank: "Alternate", exit: 1)
        let scans = world.root.appendingPathComponent("Scans")
        try FileManager.default.createDirectory(at: scans, withIntermediateDirectories: true)
        try world.start(config: "[Agent]\nInbox=\(world.inbox.path)\nMaxAttempts=1\n\n[Inbox]\nPath=\(scans.path)\nHandler=\(bound)\n")
        try Self.drop("scan.txt", Array("scanned".utf8), into: scans)
        try world.waitForEvents("failed", ["INBOX_HANDLER=\(bound)"])

        // Fixed, and retried without --inbox: back into its own Inbox, so to the bound handler again, not the Owner.
        try world.register(bound, contentTypes: "public.plain-text", rank: "Alternate")
        try world.waitForRegistrationLoads(2)
        let retried = try inboxctl(["retry", "scan.txt", "--config", world.root.appendingPathComponent("inboxd.conf").path,
                                    "--handlers", world.handlers.path, "--state", world.state.path,
                                    "--runtime-dir", world.runtime.path])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stdout.contains("-> \(scans.path)/scan.txt"))
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(bound)"])
        #expect(world.events("finished", ["INBOX_HANDLER=\(owner)"]).isEmpty)
    }

    @Test func aNamePatternClaimsItsNamesAndNoOthers() throws {
        let world = try AgentHarness()
        let viewer = "test.pdf.\(world.tag)", invoices = "test.invoices.\(world.tag)"
        try world.register(viewer, contentTypes: "com.adobe.pdf", rank: "Owner")
        // Alternate, and still first for its names: a claim by name comes before every claim by type.
        try world.register(invoices, contentTypes: "com.adobe.pdf", rank: "Alternate",
                           extraSections: "[DocumentType]\nName=Invoices\nContentTypes=com.adobe.pdf\n"
                               + "NamePatterns=*.invoice.pdf\nRank=Alternate\n")
        try world.start()

        try world.drop("report.invoice.pdf", contents: Self.pdf)
        try world.drop("report.pdf", contents: Self.pdf)
        try world.drop("REPORT.INVOICE.PDF", contents: Self.pdf)
        let byName = try world.waitForEvents("finished", ["INBOX_HANDLER=\(invoices)"], count: 2)
        #expect(Set(byName.compactMap { $0[field: "INBOX_FILE"].map { Self.lastPathComponent($0) } })
                == ["report.invoice.pdf", "REPORT.INVOICE.PDF"])
        #expect(byName.allSatisfy { $0[field: "INBOX_CHOSEN_BY"] == "name-pattern" })
        let byType = try world.waitForEvents("finished", ["INBOX_HANDLER=\(viewer)"])
        #expect(byType.first?[field: "INBOX_FILE"].map { Self.lastPathComponent($0) } == "report.pdf")
        #expect(byType.first?[field: "INBOX_CHOSEN_BY"] == nil)
    }

    static func lastPathComponent(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }
}

/// What inboxctl says of the same rule, without an agent.
struct InboxRoutingInspectTests: InspectsWorkspace {
    let workspace: InspectWorkspace

    init() throws { workspace = try InspectWorkspace() }

    @Test func handlersAndInfoShowThePatternAndTheBinding() throws {
        try register("com.example.pdf", "[DocumentType]\nContentTypes=com.adobe.pdf\nRank=Owner\n")
        try register("com.example.invoices",
                     "[DocumentType]\nName=Invoices\nContentTypes=com.adobe.pdf\nNamePatterns=*.invoice.pdf\n")
        let scans = directory.appendingPathComponent("Scans")
        try FileManager.default.createDirectory(at: scans, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("inboxd.conf")
        try "[Inbox]\nPath=\(scans.path)\nHandler=com.example.pdf\n\n[Inbox]\nPath=/srv/nowhere\nHandler=com.example.pfd\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let pdf = String(decoding: InboxRoutingTests.pdf, as: UTF8.self)
        let invoice = try write("march.invoice.pdf", pdf), report = try write("march.pdf", pdf)
        let scanned = try write("april.invoice.pdf", pdf, in: scans)

        let named = try inboxctl(["handlers", invoice.path] + agentOptions)
        #expect(named.status == 0)
        #expect(named.stdout.contains("com.example.invoices  Default    com.adobe.pdf  distance 0  name *.invoice.pdf\n"))
        #expect(named.stdout.hasSuffix("  Chosen: com.example.invoices (name matches *.invoice.pdf)\n"))
        #expect(try inboxctl(["handlers", report.path] + agentOptions).stdout
            .hasSuffix("  Chosen: com.example.pdf (only candidate)\n"))
        let bound = try inboxctl(["handlers", scanned.path] + agentOptions)
        #expect(bound.stdout.hasSuffix("  Chosen: com.example.pdf (Inbox \(scans.path) is bound to com.example.pdf)\n"))
        let boundJSON = try #require(try json(try inboxctl(["handlers", "--json", scanned.path] + agentOptions).stdout)
                                     as? [String: Any])
        #expect(boundJSON["binding"] as? [String: String] == ["inbox": scans.path, "handler": "com.example.pdf"])
        #expect(boundJSON["reason"] as? String == "Inbox \(scans.path) is bound to com.example.pdf")
        let namedJSON = try #require(try json(try inboxctl(["handlers", "--json", invoice.path] + agentOptions).stdout)
                                     as? [String: Any])
        let first = try #require((namedJSON["candidates"] as? [[String: Any]])?.first)
        #expect(first["namePattern"] as? String == "*.invoice.pdf")
        #expect(namedJSON["binding"] is NSNull)
        let byType = try inboxctl(["handlers", "--type", "com.adobe.pdf"] + agentOptions)
        #expect(byType.stdout.contains("By name, for files of this type named so:\n    com.example.invoices  *.invoice.pdf  Default\n"))
        let listed = try inboxctl(["handlers"] + agentOptions)
        #expect(listed.stdout.contains("  Invoices: com.adobe.pdf named *.invoice.pdf (Default, Viewer)\n"))
        #expect(listed.stdout.contains("Inboxes bound to a handler:\n  \(scans.path)  com.example.pdf\n"))

        let info = try #require(try json(try inboxctl(["info", "--json", scanned.path] + agentOptions).stdout) as? [[String: Any]])
        let binding = try #require(info.first?["binding"] as? [String: String])
        #expect(binding == ["inbox": scans.path, "handler": "com.example.pdf"])
        #expect(info.first?["chosen"] as? String == "com.example.pdf")
        let infoText = try inboxctl(["info", invoice.path] + agentOptions).stdout
        #expect(infoText.contains("Chosen: com.example.invoices (name matches *.invoice.pdf)"))

        // verify names the Handler= that no registration has, at its line, with the close one.
        let verified = try inboxctl(["verify", config.path, "--handlers", handlers.path])
        #expect(verified.stdout.contains("\(config.path):7: warning: Handler= names 'com.example.pfd', which is not "
                                         + "registered: files dropped in /srv/nowhere wait in unhandled/ until it is; "
                                         + "did you mean 'com.example.pdf'?"))

        // open refuses up front what the agent would refuse: another handler for a bound Inbox.
        let open = try inboxctl(["open", "--with", "com.example.invoices", "--inbox", scans.path, invoice.path]
                                + agentOptions)
        #expect(open.status == 1)
        #expect(open.stderr.contains("Inbox \(scans.path) is bound to com.example.pdf"))
    }
}
