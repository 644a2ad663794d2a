import Foundation
import Testing

/// `inboxctl list`, `--version`, `log -- ARGS`, `--json` of the commands that change things, and the warnings for
/// paths that do not exist: what a new user reaches for in the first hour.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxctlListTests {
    /// An agent whose text handler always fails, with one attempt, and no handler for PNG.
    static func world(_ name: String = #function) throws -> (AgentHarness, String) {
        let world = try AgentHarness(name)
        let handler = "test.list.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text", exit: 1)
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        return (world, handler)
    }

    @Test func failedAndUnhandledAreListedWithReasonDeliveryAndTheRetryCommand() throws {
        let (world, handler) = try Self.world()
        try world.drop("minutes.txt", contents: Array("notes".utf8))
        try world.drop("photo.png", contents: pngBytes(width: 1, height: 1))
        let failed = try #require(world.waitForEvents("failed").first)
        let unhandled = try #require(world.waitForEvents("unhandled").first)
        let failedID = try #require(failed[field: "INBOX_DELIVERY_ID"])
        // The failed entry itself says how to send the file again.
        #expect(failed[field: "MESSAGE"] == "\(handler) failed on minutes.txt: exit status 1 after 1 attempt; kept as "
                + "\(world.failedDirectory.path)/minutes.txt, send it again with: inboxctl retry \(failedID)")

        let list = try world.inboxctl("list", ["failed"])
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "failed/ (\(world.failedDirectory.path)): 1 file")
        #expect(lines[1].hasPrefix("NAME ") && lines[1].contains("AGE") && lines[1].hasSuffix("REASON"))
        #expect(lines[2].hasPrefix("minutes.txt  ") && lines[2].contains(" \(failedID)  ")
                && lines[2].hasSuffix("exit status 1 after 1 attempt"), "\(lines[2])")
        let retry = "inboxctl retry failed/minutes.txt --inbox \(world.inbox.path) --handlers \(world.handlers.path) "
            + "--state \(world.state.path)"
        #expect(lines.contains("  " + retry), "\(list.stdout)")

        let json = try #require(try JSONSerialization.jsonObject(with: Data(world.inboxctl("list", ["unhandled", "--json"]).stdout.utf8))
                                as? [String: Any])
        #expect(json["list"] as? String == "unhandled")
        #expect(json["directory"] as? String == world.unhandledDirectory.path)
        let file = try #require((json["files"] as? [[String: Any]])?.first)
        #expect(file["name"] as? String == "photo.png")
        #expect(file["reason"] as? String == "no handler for public.png")
        #expect(file["deliveryID"] as? String == unhandled[field: "INBOX_DELIVERY_ID"])
        #expect((file["ageSec"] as? Int).map { $0 >= 0 } == true)
        #expect((file["retry"] as? String)?.hasPrefix("inboxctl retry unhandled/photo.png --inbox ") == true)

        // The printed command works as it is.
        let words = retry.split(separator: " ").map(String.init)
        let retried = try run(Binaries.inboxctl.path, Array(words.dropFirst()))
        #expect(retried.status == 0, "\(retried.stderr)")
        _ = try world.waitForEvents("failed", count: 2)
    }

    @Test func anUnhandledFileWaitingForItsSendersChoiceSaysSo() throws {
        let (world, handler) = try Self.world()
        let chosen = "test.absent.\(world.tag)"
        try world.drop("chosen.txt", contents: Array("text".utf8), attributes: ["user.inbox.handler": chosen])
        _ = try world.waitForEvents("unhandled")
        let list = try world.inboxctl("list", ["unhandled"])
        #expect(list.stdout.contains("  no handler \(chosen) (its sender's choice) is registered\n"), "\(list.stdout)")
        #expect(!list.stdout.contains(handler))
    }

    @Test func anUnknownListIsAUsageErrorWithTheNearestName() throws {
        let result = try inboxctl(["list", "faild"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            Error: unknown list 'faild'; expected failed, unhandled or pending; did you mean 'failed'?
            Usage: inboxctl list failed|unhandled|pending|--mine [--json]
              See 'inboxctl help list'.

            """)
        let empty = try inboxctl(["list"])
        #expect(empty.status == 2)
        #expect(empty.stderr.hasPrefix("Error: missing WHICH (failed, unhandled or pending) or --mine\n"))
    }

    @Test func versionIsTheAgentsVersion() throws {
        let ctl = try inboxctl(["--version"])
        let agent = try run(Binaries.inboxd.path, ["--version"])
        #expect(ctl.status == 0 && ctl.stderr.isEmpty)
        #expect(ctl.stdout.hasPrefix("inboxctl ") && ctl.stdout.hasSuffix("\n"))
        #expect(ctl.stdout.dropFirst("inboxctl".count) == agent.stdout.dropFirst("inboxd".count))
        #expect(try inboxctl(["--help"]).stdout.contains("\n  --version               Show the version\n"))
    }

    @Test func logPassesTheWordsAfterTheDoubleDashToJournalctlAndSuggestsAHandler() throws {
        let (world, handler) = try Self.world()
        try world.drop("a.txt", contents: Array("a".utf8))
        let id = try #require(world.waitForEvents("failed").first?[field: "INBOX_DELIVERY_ID"])
        let json = try run(Binaries.inboxctl.path, ["log", "--delivery", id, "--", "-o", "json", "--no-pager"])
        #expect(json.status == 0)
        #expect(json.stderr == "journalctl -o json --no-pager INBOX_DELIVERY_ID=\(id)\n")
        let entries = json.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        #expect(!entries.isEmpty && entries.allSatisfy { $0[field: "INBOX_DELIVERY_ID"] == id })

        let misspelt = String(handler.dropLast())
        let typo = try world.inboxctl("log", ["--handler", misspelt, "-n", "1"])
        #expect(typo.stderr.hasPrefix("inboxctl: no handler '\(misspelt)' is registered; did you mean '\(handler)'?\n"))
        #expect(typo.status == 0, "its entries are still looked for")
        // Without '--', a stray word is still an error.
        let stray = try world.inboxctl("log", ["stray"])
        #expect(stray.status == 2)
        #expect(stray.stderr.hasPrefix("Error: unexpected argument 'stray'\n"))
    }

    @Test func changingCommandsPrintJSONWithJSON() throws {
        let (world, handler) = try Self.world()
        let source = world.root.appendingPathComponent("notes.txt")
        try "notes".write(to: source, atomically: true, encoding: .utf8)
        let sent = try world.inboxctl("send", ["--json", source.path, world.root.appendingPathComponent("missing.txt").path])
        #expect(sent.status == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(sent.stdout.utf8)) as? [String: Any])
        #expect(document["inbox"] as? String == world.inbox.path)
        #expect((document["sent"] as? [[String: Any]])?.first?["path"] as? String == world.inbox.path + "/notes.txt")
        #expect((document["failed"] as? [[String: Any]])?.first?["file"] as? String
                == world.root.appendingPathComponent("missing.txt").path)
        _ = try world.waitForEvents("failed")

        let opened = try world.inboxctl("open", ["--json", "--with", handler, source.path])
        #expect(opened.status == 0, "\(opened.stderr)")
        let openDocument = try #require(try JSONSerialization.jsonObject(with: Data(opened.stdout.utf8)) as? [String: Any])
        #expect(openDocument["handler"] as? String == handler)
        #expect((openDocument["sent"] as? [[String: Any]])?.count == 1)
        _ = try world.waitForEvents("failed", count: 2)

        let retried = try world.inboxctl("retry", ["--json", "notes.txt"])
        #expect(retried.status == 0, "\(retried.stderr)")
        let retryDocument = try #require(try JSONSerialization.jsonObject(with: Data(retried.stdout.utf8)) as? [String: Any])
        #expect((retryDocument["retried"] as? [[String: Any]])?.first?["from"] as? String
                == world.failedDirectory.path + "/notes.txt")
        _ = try world.waitForEvents("failed", count: 3)

        let discarded = try world.inboxctl("discard", ["--json", "notes.txt"])
        #expect(discarded.status == 0, "\(discarded.stderr)")
        #expect(discarded.stdout == #"{"removed":["\#(world.failedDirectory.path)/notes.txt"],"failed":[]}"# + "\n")

        let bad = world.handlers.appendingPathComponent("bad.handler")
        try "[Handler]\nExec=/bin/true\n[DocumentType]\nRank=Boss\nContentTypes=public.plain-txt\n"
            .write(to: bad, atomically: true, encoding: .utf8)
        let verified = try run(Binaries.inboxctl.path, ["verify", "--json", bad.path])
        #expect(verified.status == 1)
        let verifyDocument = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout.utf8)) as? [String: Any])
        #expect(verifyDocument["errors"] as? Int == 1)
        #expect(verifyDocument["warnings"] as? Int == 1)
        let problems = try #require(verifyDocument["diagnostics"] as? [[String: Any]])
        #expect(problems.map { $0["line"] as? Int } == [4, 5])
        #expect(problems.map { $0["severity"] as? String } == ["error", "warning"])
        #expect(problems.last?["message"] as? String
                == "ContentTypes= names 'public.plain-txt', which no type declares; did you mean 'public.plain-text'?")
    }

    @Test func pathsThatDoNotExistAreWarnings() throws {
        let world = try AgentHarness()
        let missing = world.root.appendingPathComponent("handlers.d-typo").path
        try world.start(["--handlers", missing])
        let warning = try #require(try Journal.wait(for: ["_PID=\(world.pid)", "CONFIG_FILE=\(missing)"]).first)
        #expect(warning[field: "PRIORITY"] == "4")
        #expect(warning[field: "MESSAGE"] == "\(missing): warning: handlers directory does not exist; no registrations are read from it")
        let loaded = try #require(try world.waitForRegistrationLoads(1).first)
        #expect(loaded[field: "MESSAGE"] == "Loaded 0 registration(s), 0 rejected, 0 masked, from \(world.handlers.path), "
                + "\(missing) (missing)")
        #expect(loaded[field: "INBOX_HANDLER_DIRECTORIES"] == "\(world.handlers.path) \(missing)")

        let handlers = try inboxctl(["handlers", "--handlers", missing, "--inbox", "/nonexistent-inbox-\(world.tag)"])
        #expect(handlers.stderr.contains("inboxctl: warning: Inbox /nonexistent-inbox-\(world.tag) does not exist\n"))
        #expect(handlers.stderr.contains("inboxctl: warning: handlers directory \(missing) does not exist\n"))
        let verify = try inboxctl(["verify", "--handlers", missing])
        #expect(verify.stdout == "\(missing): warning: handlers directory does not exist; no registrations are read from it\n"
                + "0 registrations, 1 warning\n")
        #expect(verify.status == 0)
    }
}
