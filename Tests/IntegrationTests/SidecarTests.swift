import Foundation
import Testing

/// Metadata too large for extended attributes rides in `.<name>.inbox-meta` (docs/design.md, Metadata that rides with a file), through the real agent.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct SidecarTests {
    static let big = #"{"body":""# + String(repeating: "é", count: 10_000) + #""}"#

    @Test func aSidecarsAnnotationReachesTheHandlerWholeAndTheSidecarGoesWithTheDelivery() throws {
        let world = try AgentHarness()
        let handler = "test.text.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        try world.start()
        let file = world.root.appendingPathComponent("letter.txt")
        try Data("dear reader\n".utf8).write(to: file)
        let sent = try world.inboxctl("send", ["--source-app", "com.example.mail", "--annotation", Self.big, file.path])
        #expect(sent.status == 0)
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?["INBOX_SOURCE_APP"] as? String == "com.example.mail")
        let record = try #require(world.recordings().values.first)
        // 20,011 bytes: over the environment's 16 KiB share, so stdin alone carries it, whole.
        #expect(record.contains(#""annotation":\#(Self.big)"#))
        #expect(!record.contains("INBOX_ANNOTATION="))
        #expect(record.contains("INBOX_SOURCE_APP=com.example.mail\n"))
        #expect(world.allEntries(of: world.inbox).isEmpty)
        #expect(world.allEntries(of: world.containerInbox(handler)).isEmpty)
    }

    @Test func aSidecarFollowsItsFileToFailedAndBackWithRetry() throws {
        let world = try AgentHarness()
        let handler = "test.flaky.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text", exit: 1)
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        let file = world.root.appendingPathComponent("memo.txt")
        try Data("memo\n".utf8).write(to: file)
        #expect(try world.inboxctl("send", ["--annotation", Self.big, file.path]).status == 0)
        try world.waitForEvents("failed")
        #expect(world.allEntries(of: world.failedDirectory) == [".memo.txt.inbox-meta", "memo.txt"])

        let fixed = world.registrationText(handler, exec: "\(world.recorderURL.path) --file %f", contentTypes: "public.plain-text",
                                           environment: "EXIT_CODE=0")
        try world.write(fixed, to: world.handlerFile(handler))
        try world.waitForRegistrationLoads(2)
        let retried = try world.inboxctl("retry", ["memo.txt"])
        #expect(retried.status == 0)
        let finished = try world.waitForEvents("finished")
        let id = try #require(finished.first?["INBOX_DELIVERY_ID"] as? String)
        #expect(world.recordings()["\(id).1"]?.contains(#""annotation":\#(Self.big)"#) == true)
        #expect(world.allEntries(of: world.failedDirectory).isEmpty)
        #expect(world.allEntries(of: world.inbox).isEmpty)
        #expect(world.allEntries(of: world.containerInbox(handler)).isEmpty)
    }

    @Test func aSidecarOfAnotherOwnerOrNotARegularFileIsIgnoredAndRemoved() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()
        // Another user's sidecar for this (root's) file: it could forge the sender.
        let forged = world.inbox.appendingPathComponent(".forged.txt.inbox-meta")
        try Data(#"{"source-app":"com.example.bank","annotation":{"pay":1}}"#.utf8).write(to: forged)
        let isRoot = geteuid() == 0
        if isRoot { #expect(chown(forged.path, 4321, 4321) == 0) }
        // A link to a secret: never followed.
        let linked = world.inbox.appendingPathComponent(".linked.txt.inbox-meta")
        #expect(symlink("/etc/shadow", linked.path) == 0)
        try world.drop("linked.txt", contents: Array("linked\n".utf8))
        if isRoot { try world.drop("forged.txt", contents: Array("forged\n".utf8)) }
        let finished = try world.waitForEvents("finished", count: isRoot ? 2 : 1)
        for entry in finished { #expect(entry["INBOX_SOURCE_APP"] == nil) }
        for record in world.recordings().values {
            #expect(record.contains(#""annotation":null"#))
            #expect(!record.contains("com.example.bank"))
        }
        let warnings = world.journal(["PRIORITY=4"]).compactMap { $0["MESSAGE"] as? String }
        #expect(warnings.contains("Ignoring and removing the sidecar of \(world.inbox.path)/linked.txt: it is a symbolic link"))
        if isRoot {
            #expect(warnings.contains(
                "Ignoring and removing the sidecar of \(world.inbox.path)/forged.txt: it belongs to uid 4321, not to the file's owner 0"))
        }
        #expect(world.allEntries(of: world.inbox).isEmpty)
    }

    @Test func infoReadsTheTypeFromASidecarAsTheAgentDoes() throws {
        let world = try AgentHarness()
        let file = world.root.appendingPathComponent("notes.txt")
        try Data("plain words\n".utf8).write(to: file)
        let sent = try world.inboxctl("send", ["--type", "public.utf8-plain-text", "--annotation", Self.big, file.path])
        #expect(sent.status == 0)
        #expect(world.allEntries(of: world.inbox) == [".notes.txt.inbox-meta", "notes.txt"])
        let info = try world.inboxctl("info", ["--json", world.inbox.appendingPathComponent("notes.txt").path])
        #expect(info.status == 0)
        #expect(info.stdout.contains(#""contentType":"public.utf8-plain-text""#), "\(info.stdout)")
        #expect(info.stdout.contains(#""typeSource":"attribute""#), "\(info.stdout)")
    }

    /// retry takes files from unhandled/ too: back through the Inbox as a new arrival, sidecar and all.
    @Test func retryBringsAnUnhandledFileBackWithItsSidecar() throws {
        let world = try AgentHarness()
        try world.start()
        let file = world.root.appendingPathComponent("orphan.bin")
        try Data([0x00, 0x01, 0x02, 0xFF]).write(to: file)
        #expect(try world.inboxctl("send", ["--source-app", "com.example.mail", "--annotation", Self.big, file.path]).status == 0)
        let first = try world.waitForEvents("unhandled")
        #expect(world.allEntries(of: world.unhandledDirectory) == [".orphan.bin.inbox-meta", "orphan.bin"])
        let retried = try world.inboxctl("retry", ["orphan.bin"])
        #expect(retried.status == 0)
        #expect(retried.stdout == "\(world.unhandledDirectory.path)/orphan.bin -> \(world.inbox.path)/orphan.bin\n")
        let both = try world.waitForEvents("unhandled", count: 2)
        let ids = Set(both.compactMap { $0["INBOX_DELIVERY_ID"] as? String })
        #expect(ids.count == 2 && ids.contains(first.first?["INBOX_DELIVERY_ID"] as? String ?? ""))
        #expect(both.allSatisfy { $0["INBOX_SOURCE_APP"] as? String == "com.example.mail" })
        #expect(world.allEntries(of: world.unhandledDirectory) == [".orphan.bin.inbox-meta", "orphan.bin"])
    }

    /// A sidecar whose file is gone (a crash between the two) is removed at start, so a later file of that name does
    /// not inherit it.
    @Test func orphanSidecarsAreRemovedAtStart() throws {
        let world = try AgentHarness()
        let handler = "test.text.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        let stale = Data(#"{"source-app":"com.example.stale"}"#.utf8)
        let containerInbox = world.containerInbox(handler)
        try FileManager.default.createDirectory(at: containerInbox, withIntermediateDirectories: true)
        try stale.write(to: containerInbox.appendingPathComponent(".letter.txt.inbox-meta"))
        try FileManager.default.createDirectory(at: world.unhandledDirectory, withIntermediateDirectories: true)
        try stale.write(to: world.unhandledDirectory.appendingPathComponent(".gone.bin.inbox-meta"))
        try world.start()
        #expect(world.allEntries(of: containerInbox).isEmpty)
        #expect(world.allEntries(of: world.unhandledDirectory).isEmpty)
        try world.drop("letter.txt", contents: Array("dear reader\n".utf8))
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?["INBOX_SOURCE_APP"] == nil)
    }
}
