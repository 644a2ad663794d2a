import Foundation
import Testing

/// The agent decides a file's type from its attribute, name and content (README "How a file's type is decided").
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct TypeDecisionTests {
    static var executable: [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: "/bin/true"))) ?? Data()) }

    @Test func anExecutableNamedLikeAnImageNeverReachesTheImageViewer() throws {
        let world = try AgentHarness()
        let viewer = "test.viewer.\(world.tag)"
        try world.register(viewer, contentTypes: "public.image", rank: "Owner")
        try world.start()

        try world.drop("photo.png", contents: Self.executable)
        let unhandled = try world.waitForEvents("unhandled").first
        #expect(unhandled?[field: "INBOX_TYPE_SOURCE"] == "content")
        let type = unhandled?[field: "INBOX_CONTENT_TYPE"] ?? ""
        #expect(type.contains("executable"), "\(type)")
        let mismatch = try world.waitForEvents("mismatch").first
        #expect(mismatch?[field: "PRIORITY"] == "4")
        #expect(mismatch?[field: "INBOX_CLAIMED_TYPE"] == "public.png")
        #expect(mismatch?[field: "INBOX_CLAIM_SOURCE"] == "extension")
        #expect(mismatch?[field: "INBOX_SNIFFED_TYPE"] == type)
        #expect(mismatch?[field: "INBOX_SNIFFED_MIME_TYPE"]?.hasPrefix("application/x-") == true)
        #expect(mismatch?[field: "MESSAGE"]?.contains("typed by its content") == true)
        #expect(world.recordings().isEmpty)
        #expect(world.contents(of: world.unhandledDirectory) == ["photo.png"])

        // The same bytes sent with an explicit image type are not an image either.
        try world.drop("snapshot", contents: Self.executable, attributes: ["user.inbox.content-type": "public.png"])
        let second = try world.waitForEvents("mismatch", ["INBOX_CLAIM_SOURCE=attribute"]).first
        #expect(second?[field: "INBOX_CLAIMED_TYPE"] == "public.png")
        _ = try world.waitForEvents("unhandled", count: 2)
        #expect(world.recordings().isEmpty)
    }

    @Test func contentDecidesWhenTheNameSaysNothing() throws {
        let world = try AgentHarness()
        let viewer = "test.png.\(world.tag)"
        try world.register(viewer, contentTypes: "public.png")
        try world.start()

        try world.drop("snapshot", contents: pngBytes(width: 3, height: 3))
        let finished = try world.waitForEvents("finished").first
        #expect(finished?[field: "INBOX_HANDLER"] == viewer)
        #expect(finished?[field: "INBOX_CONTENT_TYPE"] == "public.png")
        #expect(finished?[field: "INBOX_TYPE_SOURCE"] == "content")
        #expect(world.recordings().values.first?.contains("INBOX_CONTENT_TYPE=public.png") == true)
        #expect(world.events("mismatch").isEmpty)
    }

    @Test func withSniffingOffTheNameDecides() throws {
        let world = try AgentHarness()
        let viewer = "test.viewer.\(world.tag)"
        try world.register(viewer, contentTypes: "public.png")
        try world.start(config: "[Agent]\nContentSniffing=no\n")

        try world.drop("photo.png", contents: Self.executable)
        let finished = try world.waitForEvents("finished").first
        #expect(finished?[field: "INBOX_HANDLER"] == viewer)
        #expect(finished?[field: "INBOX_TYPE_SOURCE"] == "extension")
        let warning = world.journal(["PRIORITY=4"]).compactMap { $0[field: "MESSAGE"] }
        #expect(warning.contains { $0.contains("ContentSniffing=no") }, "\(warning)")
    }

    @Test func aClaimOnACarrierIsKeptAndReportedOncePerPair() throws {
        let world = try AgentHarness()
        let owner = "test.profile.\(world.tag)"
        try world.register(owner, contentTypes: "com.example.jsonish", rank: "Owner", extraSections: """
            [ExportedType]
            Identifier=com.example.jsonish
            ConformsTo=public.data public.content
            Extensions=jsonish
            """)
        try world.start()

        for index in 0..<3 {
            try world.drop("p\(index).jsonish", contents: Array("{\"profile\": \(index), \"name\": \"x\"}\n".utf8))
        }
        let finished = try world.waitForEvents("finished", count: 3)
        #expect(finished.allSatisfy { $0[field: "INBOX_HANDLER"] == owner && $0[field: "INBOX_TYPE_SOURCE"] == "extension" })
        let mismatches = world.events("mismatch")
        #expect(mismatches.count == 1, "once per (claimed, content) pair")
        #expect(mismatches.first?[field: "PRIORITY"] == "5")
        // Text never disproves a concrete claim, so the agent spares libmagic's text heuristics: "some text".
        #expect(mismatches.first?[field: "INBOX_SNIFFED_TYPE"] == "public.plain-text")
    }

    @Test func registrationsMayNameMIMETypesAndDynamicTypes() throws {
        let world = try AgentHarness()
        let pngByMIME = "test.png-by-mime.\(world.tag)", sqlite = "test.sqlite.\(world.tag)"
        try world.register(pngByMIME, contentTypes: "image/png")
        try world.register(sqlite, contentTypes: "dyn.mime.application.vnd.sqlite3")
        try world.start()

        try world.drop("a.png", contents: pngBytes(width: 1, height: 1))
        #expect(try world.waitForEvents("finished", ["INBOX_HANDLER=\(pngByMIME)"]).first?[field: "INBOX_CONTENT_TYPE"]
            == "public.png")

        // A real SQLite database, written by Python's sqlite3 module, with no name to go by.
        let database = world.root.appendingPathComponent("made.db")
        let made = try run("/usr/bin/python3", ["-c", """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1]); c.execute('create table t (x)'); c.execute('insert into t values (1)')
            c.commit(); c.close()
            """, database.path])
        try #require(made.status == 0, "\(made.stderr)")
        try world.drop("records", contents: Array(try Data(contentsOf: database)))
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(sqlite)"]).first
        #expect(finished?[field: "INBOX_CONTENT_TYPE"] == "dyn.mime.application.vnd.sqlite3")
        #expect(finished?[field: "INBOX_TYPE_SOURCE"] == "content")
    }

    @Test func aDynamicIdentifierOfAClaimedMIMETypeNamesItsType() throws {
        let world = try AgentHarness()
        let handler = "test.dyn-png.\(world.tag)"
        try world.register(handler, contentTypes: "dyn.mime.image.png")
        try world.start()
        try world.drop("b.png", contents: pngBytes(width: 1, height: 1))
        let finished = try world.waitForEvents("finished").first
        #expect(finished?[field: "INBOX_HANDLER"] == handler)
        #expect(finished?[field: "INBOX_CONTENT_TYPE"] == "public.png")
    }

    @Test func aMisspeltMIMETypeInContentTypesIsAWarningAtItsLine() throws {
        let world = try AgentHarness()
        let handler = "test.typo.\(world.tag)"
        try world.register(handler, contentTypes: "image/pgn image/png")
        try world.start()
        let path = world.handlerFile(handler).path
        let warning = try Journal.wait(for: ["_PID=\(world.pid)", "CONFIG_FILE=\(path)"]).first
        // ContentTypes= is line 10 of what the harness writes.
        #expect(warning?[field: "CONFIG_LINE"] == "10")
        #expect(warning?[field: "PRIORITY"] == "4")
        #expect(warning?[field: "MESSAGE"]?.contains("'image/pgn'") == true)

        let verify = try run(Binaries.inboxctl.path, ["verify", path])
        #expect(verify.status == 0, "a warning does not fail the file")
        #expect((verify.stdout + verify.stderr).contains(
            "\(path):10: warning: ContentTypes= names MIME type 'image/pgn', which no type and no shared-mime-info entry "
            + "declares; did you mean 'image/png'?"))

        // The registration still works for the MIME type that exists.
        try world.drop("a.png", contents: pngBytes(width: 1, height: 1))
        #expect(try world.waitForEvents("finished").first?[field: "INBOX_HANDLER"] == handler)
    }
}
