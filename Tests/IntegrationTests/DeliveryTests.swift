import Foundation
import Testing

/// The real `inboxd` against real directories, real inotify, real handler processes and journald.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct DeliveryTests {
    @Test func pngWithSourceAppAndAnnotationReachesThePNGHandler() throws {
        let world = try AgentHarness()
        let handler = "test.png-viewer.\(world.tag)"
        try world.register(handler, contentTypes: "public.png")
        try world.register("test.image-fallback.\(world.tag)", contentTypes: "public.image", rank: "Alternate")
        try world.start()
        let annotation = #"{"subject":"Holiday","count":2}"#
        try world.drop("photo.png", contents: pngBytes(width: 3, height: 2),
                       attributes: ["user.inbox.source-app": "com.example.mail", "user.inbox.annotation": annotation])

        try waitUntil("the PNG handler recorded a delivery") { world.recordings().count == 1 }
        let record = try #require(world.recordings().values.first)
        let path = world.containerInbox(handler).appendingPathComponent("photo.png").path
        #expect(record.contains("argv: [--file] [\(path)] [--type] [public.png] [--source] [com.example.mail]"))
        #expect(record.contains("INBOX_SOURCE_APP=com.example.mail"))
        #expect(record.contains("INBOX_ANNOTATION=\(annotation)"))
        #expect(record.contains("INBOX_CONTENT_TYPE=public.png"))
        #expect(record.contains("INBOX_CONTENT_TYPES=public.png public.image public.data public.content public.item")
                || record.contains("INBOX_CONTENT_TYPES=public.png public.image"))
        #expect(record.contains("INBOX_SOURCE_UID=\(getuid())"))
        #expect(record.contains("INBOX_ATTEMPT=1"))
        #expect(record.contains("INBOX_NAME=photo.png"))
        #expect(record.contains(#""annotation":\#(annotation)"#))
        #expect(record.contains(#""sourceApplication":"com.example.mail""#))

        // The handler's own output is in the journal under its identifier.
        let output = try Journal.wait(for: ["SYSLOG_IDENTIFIER=\(handler)"])
        #expect((output.first?["MESSAGE"] as? String) == "recorded photo.png type=public.png from=com.example.mail attempt=1")
        // One finished entry with the contract's fields, and the Inbox copy is gone.
        let finished = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let entry = try #require(finished.first)
        #expect(entry["SYSLOG_IDENTIFIER"] as? String == "inboxd")
        #expect(entry["MESSAGE_ID"] as? String == "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c53")
        #expect(entry["INBOX_CONTENT_TYPE"] as? String == "public.png")
        #expect(entry["INBOX_SOURCE_APP"] as? String == "com.example.mail")
        #expect(entry["INBOX_EXIT_STATUS"] as? String == "0")
        #expect(entry["INBOX_FILE"] as? String == path)
        #expect(Int(entry["INBOX_DURATION_USEC"] as? String ?? "") != nil)
        try waitUntil("the Inbox copy is removed") { world.contents(of: world.containerInbox(handler)).isEmpty }
        #expect(world.contents(of: world.inbox).isEmpty)
    }

    @Test func customProfileReachesItsOwner() throws {
        let world = try AgentHarness()
        let owner = "test.profile-owner.\(world.tag)"
        try world.register("test.data-alternate.\(world.tag)", contentTypes: "public.data", rank: "Alternate")
        try world.register(owner, contentTypes: "com.example.customprofile", rank: "Owner", extraSections: """
            [ExportedType]
            Identifier=com.example.customprofile
            Description=Custom Profile
            ConformsTo=public.data public.content
            Extensions=customprofile
            MIMETypes=application/x-customprofile
            """)
        try world.start()
        try world.drop("profile-3F2A.customprofile", contents: Array("<profile/>".utf8))
        let finished = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished"])
        #expect(finished.first?["INBOX_HANDLER"] as? String == owner)
        #expect(finished.first?["INBOX_CONTENT_TYPE"] as? String == "com.example.customprofile")
        let record = try #require(world.recordings().values.first)
        #expect(record.contains("INBOX_CONTENT_TYPES=com.example.customprofile public.data public.content public.item"))
    }

    @Test func unknownTypeWaitsInUnhandledUntilARegistrationAppears() throws {
        let world = try AgentHarness()
        try world.register("test.png-only.\(world.tag)", contentTypes: "public.png")
        try world.start()
        // Bytes libmagic has no name for, so neither the name nor the content says anything.
        try world.drop("notes.strangeformat", contents: [0x00, 0x9F, 0x13, 0xFE, 0x37, 0x00, 0x80],
                       attributes: ["user.inbox.source-app": "com.example.chat"])
        let unhandled = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=unhandled"])
        #expect(unhandled.first?["INBOX_CONTENT_TYPE"] as? String == "public.data")
        #expect(world.contents(of: world.unhandledDirectory) == ["notes.strangeformat"])
        // Kept intact, attributes included.
        #expect(attribute("user.inbox.source-app", of: world.unhandledDirectory.appendingPathComponent("notes.strangeformat"))
                == "com.example.chat")

        // A registration for the type appears: picked up without a restart, the file is dispatched.
        let handler = "test.strange.\(world.tag)"
        try world.register(handler, contentTypes: "com.example.strange", extraSections: """
            [ImportedType]
            Identifier=com.example.strange
            ConformsTo=public.data
            Extensions=strangeformat
            """)
        let finished = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        #expect(finished.first?["INBOX_SOURCE_APP"] as? String == "com.example.chat")
        #expect(world.contents(of: world.unhandledDirectory).isEmpty)
    }

    @Test func failingHandlerIsRetriedThenMovedToFailed() throws {
        let world = try AgentHarness()
        let handler = "test.failing.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text", exit: 3)
        try world.start(config: """
            [Agent]
            MaxAttempts=3
            RetryDelaySec=200ms
            """)
        try world.drop("report.txt", contents: Array("text".utf8))
        let failed = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=failed"])
        let retries = Journal.entries(["_PID=\(world.pid)", "INBOX_EVENT=retry"])
        #expect(retries.count == 2)
        #expect(failed.first?["INBOX_ATTEMPT"] as? String == "3")
        #expect(failed.first?["INBOX_EXIT_STATUS"] as? String == "3")
        #expect(world.recordings().count == 3)
        #expect(world.contents(of: world.failedDirectory) == ["report.txt"])
        #expect(attribute("user.inboxd.failure", of: world.failedDirectory.appendingPathComponent("report.txt"))
                == "exit status 3 after 3 attempts")
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
    }

    @Test func hangingHandlerIsKilledAtItsTimeout() throws {
        let world = try AgentHarness()
        try world.register("test.hanging.\(world.tag)", contentTypes: "public.plain-text", sleep: "600",
                           extraHandler: "TimeoutSec=1")
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        let began = Date()
        try world.drop("slow.txt", contents: Array("zzz".utf8))
        let failed = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=failed"])
        #expect(Date().timeIntervalSince(began) < 30)
        #expect((failed.first?["INBOX_REASON"] as? String)?.contains("timed out") == true)
        #expect(world.contents(of: world.failedDirectory) == ["slow.txt"])
    }

    @Test func symlinkAndFIFOAreNeitherFollowedNorBlocking() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()
        let secret = world.root.appendingPathComponent("secret.txt")
        try "do not deliver".write(to: secret, atomically: true, encoding: .utf8)
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        #expect(symlink(secret.path, staging.appendingPathComponent("link.txt").path) == 0)
        #expect(mkfifo(staging.appendingPathComponent("pipe.txt").path, 0o644) == 0)
        #expect(link(secret.path, staging.appendingPathComponent("hard.txt").path) == 0)
        for name in ["link.txt", "pipe.txt", "hard.txt"] {
            #expect(rename(staging.appendingPathComponent(name).path, world.inbox.appendingPathComponent(name).path) == 0)
        }
        try world.drop("after.txt", contents: Array("real".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished"])
        let rejected = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=rejected"], count: 3)
        let kinds = Set(rejected.compactMap { $0["INBOX_FILE_KIND"] as? String })
        #expect(kinds == ["symbolic link", "FIFO", "hard link"])
        #expect(world.recordings().count == 1)
        #expect(world.recordings().values.first?.contains("INBOX_NAME=after.txt") == true)
        #expect(try String(contentsOf: secret, encoding: .utf8) == "do not deliver")
        #expect(Set(world.contents(of: world.failedDirectory)) == ["rejected-link.txt", "rejected-pipe.txt", "rejected-hard.txt"])
        #expect(world.contents(of: world.inbox).isEmpty)
    }

    @Test func badRegistrationIsReportedWithItsLineAndOthersKeepWorking() throws {
        let world = try AgentHarness()
        let good = "test.good.\(world.tag)"
        try world.register(good, contentTypes: "public.plain-text")
        let bad = world.handlers.appendingPathComponent("broken.handler")
        try world.write("""
            [Handler]
            Exec=/bin/true
            [DocumentType]
            ContentTypes=public.plain-text
            Rank=Supreme
            """, to: bad)
        try world.start()
        let errors = try Journal.wait(for: ["_PID=\(world.pid)", "CONFIG_FILE=\(bad.path)"])
        #expect(errors.first?["CONFIG_LINE"] as? String == "5")
        #expect((errors.first?["MESSAGE"] as? String)?.hasPrefix("\(bad.path):5: ") == true)
        #expect(errors.first?["MESSAGE_ID"] as? String == "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5b")
        try world.drop("still-works.txt", contents: Array("ok".utf8))
        let finished = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished"])
        #expect(finished.first?["INBOX_HANDLER"] as? String == good)
    }

    @Test func filesLeftInAContainerInboxRunAgainAfterARestart() throws {
        let world = try AgentHarness()
        let handler = "test.restart.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        let inbox = world.containerInbox(handler)
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        try "left over".write(to: inbox.appendingPathComponent("leftover.txt"), atomically: true, encoding: .utf8)
        try world.start()
        let finished = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished"])
        #expect(finished.first?["INBOX_HANDLER"] as? String == handler)
        #expect(world.contents(of: inbox).isEmpty)
    }

    @Test func sigtermWaitsForRunningHandlers() throws {
        let world = try AgentHarness()
        try world.register("test.slow.\(world.tag)", contentTypes: "public.plain-text", sleep: "1")
        try world.start()
        try world.drop("slow.txt", contents: Array("zzz".utf8))
        try waitUntil("the handler started") { world.recordings().count == 1 }
        let process = try #require(world.process)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let finished = Journal.entries(["_PID=\(world.pid)", "INBOX_EVENT=finished"])
        #expect(finished.count == 1)
        #expect(Journal.entries(["_PID=\(world.pid)", "MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5e"]).count == 1)
    }
}
