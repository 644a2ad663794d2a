import Foundation
import Testing

/// `ChooseHandler=ask` with the real agent: a file several handlers could open waits in pending/ until a person chooses
/// (`inboxctl choose`), or until `ChooseTimeoutSec=` gives it to the best-ranked; waiting survives a restart.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct ChoiceListTests {
    struct World {
        let agent: AgentHarness
        let first: String
        let second: String
        var pending: URL { agent.state.appendingPathComponent("pending") }

        init(handlers: Int = 2) throws {
            agent = try AgentHarness()
            first = "test.first.\(agent.tag)"
            second = "test.second.\(agent.tag)"
            try agent.register(first, contentTypes: "public.plain-text", rank: "Owner")
            if handlers > 1 { try agent.register(second, contentTypes: "public.plain-text", rank: "Alternate") }
        }

        func start(_ extra: String = "") throws {
            try agent.start(config: "[Agent]\nChooseHandler=ask\n" + extra)
        }

        func inboxctl(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try run(Binaries.inboxctl.path, arguments + ["--inbox", agent.inbox.path, "--handlers", agent.handlers.path,
                                                         "--state", agent.state.path, "--runtime-dir", agent.runtime.path,
                                                         "--defaults", agent.root.appendingPathComponent("defaults.conf").path,
                                                         "--config", agent.root.appendingPathComponent("inboxd.conf").path])
        }

        /// Drops a note and waits for its "waiting for a choice" entry.
        func dropAndWait(_ name: String) throws -> [String: Any] {
            try agent.drop(name, contents: Array("a note\n".utf8), attributes: ["user.inbox.source-app": "com.example.notes"])
            let entry = try #require(try agent.waitForEvents("pending").first)
            #expect(entry["MESSAGE_ID"] as? String == "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c64")
            #expect(entry[field: "INBOX_CANDIDATES"] == "\(first) \(second)")
            #expect(agent.contents(of: pending) == [name])
            return entry
        }
    }

    @Test func aNoteWaitsUntilAPersonChooses() throws {
        let world = try World()
        try world.start()
        _ = try world.dropAndWait("note.txt")
        #expect(world.agent.recordings().isEmpty)

        let list = try world.inboxctl(["list", "pending"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("note.txt"), "\(list.stdout)")
        #expect(list.stdout.contains("\(world.first), \(world.second)"), "\(list.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(world.inboxctl(["list", "pending", "--json"])
            .stdout.utf8)) as? [String: Any])
        let files = try #require(json["files"] as? [[String: Any]])
        #expect(files.first?["candidates"] as? [String] == [world.first, world.second])
        #expect(files.first?["waitingSinceUSec"] is Int)

        // The status counts what waits, and inboxctl status says so.
        let statusFile = world.agent.runtime.appendingPathComponent("status.json")
        try waitUntil("status.json counts the waiting file") {
            ((try? String(contentsOf: statusFile, encoding: .utf8)) ?? "").contains("\"pending\":1,")
        }
        let status = try world.inboxctl(["status"])
        #expect(status.stdout.contains("1 waiting for a choice of handler (inboxctl list pending)"), "\(status.stdout)")

        let chose = try world.inboxctl(["choose", "note.txt", "--with", world.second])
        #expect(chose.status == 0, "\(chose.stderr)")
        let finished = try world.agent.waitForEvents("finished", ["INBOX_HANDLER=\(world.second)"])
        #expect(finished.first?[field: "INBOX_CHOSEN_BY"] == "person")
        try waitUntil("the recording") { world.agent.recordings().count == 1 }
        #expect(world.agent.contents(of: world.pending).isEmpty)
        #expect(world.agent.contents(of: world.agent.unhandledDirectory).isEmpty)
        #expect(world.agent.events("finished", ["INBOX_HANDLER=\(world.first)"]).isEmpty)
    }

    /// The Open In list on a terminal (tmux): the candidates numbered best first, one key picks; q leaves it waiting.
    @Test func aPersonPicksFromTheListOnATerminal() throws {
        let world = try World()
        try world.start()
        _ = try world.dropAndWait("note.txt")
        let options = ["--inbox", world.agent.inbox.path, "--handlers", world.agent.handlers.path,
                       "--state", world.agent.state.path, "--runtime-dir", world.agent.runtime.path,
                       "--defaults", world.agent.root.appendingPathComponent("defaults.conf").path,
                       "--config", world.agent.root.appendingPathComponent("inboxd.conf").path]
        let dismissed = try Terminal(world.agent, "inboxctl choose note.txt " + options.map(shellQuoted).joined(separator: " ")
                                     + "; echo status=$?")
        let menu = try dismissed.waitFor("Choose 1-2")
        #expect(menu.contains { $0.contains("1  \(world.first)  (best-ranked)") }, "\(menu)")
        #expect(menu.contains { $0.contains("2  \(world.second)") }, "\(menu)")
        try dismissed.send("q")
        _ = try dismissed.waitFor("status=1")
        #expect(world.agent.contents(of: world.pending) == ["note.txt"])

        let picked = try Terminal(world.agent, "inboxctl choose note.txt " + options.map(shellQuoted).joined(separator: " "))
        _ = try picked.waitFor("Choose 1-2")
        try picked.send("2")
        try picked.waitUntilEnded()
        let finished = try world.agent.waitForEvents("finished", ["INBOX_HANDLER=\(world.second)"])
        #expect(finished.first?[field: "INBOX_CHOSEN_BY"] == "person")
        #expect(world.agent.contents(of: world.pending).isEmpty)
    }

    @Test func oneHandlerOnlyIsDeliveredAtOnce() throws {
        let world = try World(handlers: 1)
        try world.start()
        try world.agent.drop("note.txt", contents: Array("a note\n".utf8))
        try world.agent.waitForEvents("finished", ["INBOX_HANDLER=\(world.first)"])
        #expect(world.agent.events("pending").isEmpty)
    }

    @Test func theTimeoutGivesItToTheBestRanked() throws {
        let world = try World()
        try world.start("ChooseTimeoutSec=1\n")
        _ = try world.dropAndWait("note.txt")
        let finished = try world.agent.waitForEvents("finished", ["INBOX_HANDLER=\(world.first)"], timeout: 15)
        #expect(finished.first?[field: "INBOX_CHOSEN_BY"] == "timeout")
        #expect(world.agent.contents(of: world.pending).isEmpty)
    }

    @Test func waitingSurvivesARestart() throws {
        let world = try World()
        try world.start()
        _ = try world.dropAndWait("note.txt")
        world.agent.stop()
        try world.agent.start(config: "[Agent]\nChooseHandler=ask\n")
        // Still waiting after the restart, not delivered by rank.
        #expect(world.agent.contents(of: world.pending) == ["note.txt"])
        #expect(world.agent.events("finished").isEmpty)
        #expect(attribute("user.inbox.source-app", of: world.pending.appendingPathComponent("note.txt"))
                == "com.example.notes")
        #expect(try world.inboxctl(["choose", "pending/note.txt", "--with", world.second]).status == 0)
        let finished = try world.agent.waitForEvents("finished", ["INBOX_HANDLER=\(world.second)"])
        #expect(finished.first?[field: "INBOX_SOURCE_APP"] == "com.example.notes")
        try waitUntil("the recording") { world.agent.recordings().count == 1 }
        #expect(world.agent.recordings().values.first?.contains("INBOX_SOURCE_APP=com.example.notes") == true)
    }

    @Test func aChoiceMadeWhileTheAgentIsDownIsDelivered() throws {
        let world = try World()
        try world.start()
        _ = try world.dropAndWait("note.txt")
        world.agent.stop()
        #expect(try world.inboxctl(["choose", "note.txt", "--with", world.second]).status == 0)
        try world.agent.start(config: "[Agent]\nChooseHandler=ask\n")
        try world.agent.waitForEvents("finished", ["INBOX_HANDLER=\(world.second)", "INBOX_CHOSEN_BY=person"])
    }

    @Test func aNonCandidateIsRefusedWithTheList() throws {
        let world = try World()
        try world.start()
        _ = try world.dropAndWait("note.txt")
        let refused = try world.inboxctl(["choose", "note.txt", "--with", "com.example.other"])
        #expect(refused.status == 1)
        #expect(refused.stderr == "inboxctl: com.example.other is not a candidate for note.txt (public.plain-text); "
                + "its candidates, best first:\n  \(world.first)\n  \(world.second)\n")
        let usage = try world.inboxctl(["choose", "note.txt"])
        #expect(usage.status == 2)
        #expect(usage.stderr.hasPrefix("Error: missing '--with ID' (not on a terminal, so no list to choose from)\n"))
        #expect(world.agent.contents(of: world.pending) == ["note.txt"])
    }
}
