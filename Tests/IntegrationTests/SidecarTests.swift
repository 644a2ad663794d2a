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

    /// The sender's sidecar is read once and never moved: what goes on with the file is the agent's own, holding only
    /// what was read and checked, so nothing the sender changes or swaps afterwards reaches the agent's directories.
    @Test func theAgentKeepsItsOwnSidecarNeverTheSenders() throws {
        let world = try AgentHarness()
        try world.register("test.flaky.\(world.tag)", contentTypes: "public.plain-text", exit: 1)
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        let hidden = world.inbox.appendingPathComponent(".note.part")
        try Data("note\n".utf8).write(to: hidden)
        let sidecar = world.inbox.appendingPathComponent(".note.txt.inbox-meta")
        try Data(#"{"source-app":"not a valid id!","annotation":{"n":1},"unknown":2}"#.utf8).write(to: sidecar)
        let sendersInode = try #require(try FileManager.default.attributesOfItem(atPath: sidecar.path)[.systemFileNumber] as? Int)
        rename(hidden.path, world.inbox.appendingPathComponent("note.txt").path)
        try world.waitForEvents("failed")
        #expect(world.allEntries(of: world.inbox).isEmpty)
        #expect(world.allEntries(of: world.failedDirectory) == [".note.txt.inbox-meta", "note.txt"])
        let kept = world.failedDirectory.appendingPathComponent(".note.txt.inbox-meta")
        let attributes = try FileManager.default.attributesOfItem(atPath: kept.path)
        #expect(attributes[.systemFileNumber] as? Int != sendersInode)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try String(contentsOf: kept, encoding: .utf8) == #"{"annotation":{"n":1}}"# + "\n")
    }

    /// A file the agent had taken into intake/ when it stopped (a crash, or a move on that failed) is delivered from
    /// there at the next start with the metadata of its sidecar, which waits beside it.
    @Test func aFileLeftInIntakeKeepsItsSidecarsMetadata() throws {
        let world = try AgentHarness()
        let handler = "test.text.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        let intake = world.state.appendingPathComponent("intake")
        try FileManager.default.createDirectory(at: intake, withIntermediateDirectories: true)
        let staged = intake.appendingPathComponent("2049-77")
        try Data("left behind\n".utf8).write(to: staged)
        try setAttribute("user.inboxd.delivery", "0123456789abcdef0123456789abcdef 0", on: staged)
        try Data(#"{"source-app":"com.example.mail","annotation":\#(Self.big)}"#.utf8)
            .write(to: intake.appendingPathComponent(".2049-77.inbox-meta"))
        try world.start()
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?["INBOX_SOURCE_APP"] as? String == "com.example.mail")
        #expect(finished.first?["INBOX_DELIVERY_ID"] as? String == "0123456789abcdef0123456789abcdef")
        #expect(world.recordings().values.first?.contains(#""annotation":\#(Self.big)"#) == true)
        #expect(world.allEntries(of: intake).isEmpty)
        #expect(world.allEntries(of: world.containerInbox(handler)).isEmpty)
    }

    /// Intake looks for a sidecar only where it saw one arrive (`SidecarSightings`): each way one can come is seen, so
    /// its metadata reaches the handler, and a file without one has none. One there before the start is listed by
    /// the first rescan; while the agent runs, one written in place or renamed in brings an event before its file.
    @Test func aSidecarIsFoundHoweverItCame() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        func sidecar(_ app: String) -> Data { Data(#"{"source-app":"com.example.\#(app)"}"#.utf8) }
        try sidecar("before").write(to: world.inbox.appendingPathComponent(".before.txt.inbox-meta"))
        try world.drop("before.txt", contents: Array("before the start\n".utf8))
        try world.start()
        _ = try world.waitForEvents("finished")
        try sidecar("inplace").write(to: world.inbox.appendingPathComponent(".inplace.txt.inbox-meta"))
        try world.drop("inplace.txt", contents: Array("written in place\n".utf8))
        let renamed = world.root.appendingPathComponent(".renamed.txt.inbox-meta")
        try sidecar("renamed").write(to: renamed)
        #expect(rename(renamed.path, world.inbox.appendingPathComponent(".renamed.txt.inbox-meta").path) == 0)
        try Data("its file written in place\n".utf8).write(to: world.inbox.appendingPathComponent("renamed.txt"))
        try world.drop("none.txt", contents: Array("no sidecar\n".utf8))
        let finished = try world.waitForEvents("finished", count: 4)
        var apps: [String: String] = [:]
        for entry in finished {
            guard let file = entry["INBOX_FILE"] as? String else { continue }
            apps[(file as NSString).lastPathComponent] = entry["INBOX_SOURCE_APP"] as? String ?? "none"
        }
        #expect(apps == ["before.txt": "com.example.before", "inplace.txt": "com.example.inplace",
                         "renamed.txt": "com.example.renamed", "none.txt": "none"])
        #expect(world.allEntries(of: world.inbox).isEmpty)
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
