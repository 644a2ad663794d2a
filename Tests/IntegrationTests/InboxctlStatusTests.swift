import Foundation
import Testing

/// `inboxctl status` against the real agent's status file.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxctlStatusTests {
    func status(_ world: AgentHarness, _ extra: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.inboxctl.path, ["status", "--runtime-dir", world.runtime.path, "--state", world.state.path,
                                         "--inbox", world.inbox.path, "--handlers", world.handlers.path] + extra)
    }

    @Test func aSlowHandlerShowsInFlight() throws {
        let world = try AgentHarness()
        let slow = "test.slow.\(world.tag)"
        try world.register(slow, contentTypes: "public.plain-text", sleep: "30")
        try world.start()
        try world.drop("slow.txt", contents: Array("wait".utf8))
        var shown = ""
        try waitUntil("status shows the slow delivery") {
            let result = try status(world)
            shown = result.stdout
            return result.status == 0 && shown.contains(slow) && shown.contains("slow.txt")
        }
        #expect(shown.contains("Queue:          0 waiting, 1 running"), "\(shown)")
        #expect(shown.contains("Inboxes:        \(world.inbox.path)"), "\(shown)")
        #expect(shown.contains("Sandbox:        Landlock ABI") || shown.contains("no Landlock"), "\(shown)")
        #expect(shown.contains("Sniffing:       libmagic "), "\(shown)")
        #expect(shown.contains("Registrations:  1, loaded "), "\(shown)")
        #expect(shown.contains("HANDLER"), "\(shown)")

        let json = try status(world, ["--json"])
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let inFlight = object?["inFlight"] as? [[String: Any]]
        #expect(inFlight?.first?["handler"] as? String == slow)
        #expect(inFlight?.first?["attempt"] as? Int == 1)
        #expect(object?["writtenAtUSec"] as? Int != nil)
        world.stop()
    }

    @Test func aDeliveryWaitingForItsRetryIsListedWithItsNextAttempt() throws {
        let world = try AgentHarness()
        let handler = "test.retrying.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text", exit: 75)
        try world.start(config: "[Agent]\nMaxAttempts=3\nRetryDelaySec=1h\n")
        try world.drop("later.txt", contents: Array("again".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=retry"])
        var object: [String: Any] = [:]
        try waitUntil("status.json lists the retry") {
            let json = try status(world, ["--json"])
            object = (try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]) ?? [:]
            return (object["retrying"] as? [[String: Any]])?.count == 1
        }
        let waiting = (object["retrying"] as? [[String: Any]])?.first
        #expect(waiting?["handler"] as? String == handler)
        #expect(waiting?["file"] as? String == "later.txt")
        #expect(waiting?["attempt"] as? Int == 1)
        #expect(waiting?["reason"] as? String == "asked to retry (exit status 75)")
        let next = (waiting?["nextAttemptUSec"] as? Int).map { Double($0) / 1e6 } ?? 0
        let now = Date().timeIntervalSince1970
        #expect(next > now + 3000 && next < now + 3700, "next attempt at \(next), now \(now)")
        #expect(object["queued"] as? Int == 0)

        let shown = try status(world).stdout
        #expect(shown.contains("Queue:          0 waiting, 0 running, 1 waiting for a retry"), "\(shown)")
        #expect(shown.contains("  HANDLER"), "\(shown)")
        #expect(shown.contains("NEXT ATTEMPT"), "\(shown)")
        #expect(shown.contains("later.txt  1        "), "\(shown)")
        #expect(shown.contains("(in 59 min "), "\(shown)")
        #expect(shown.contains("asked to retry (exit status 75)"), "\(shown)")
        world.stop()
    }

    @Test func noAgentIsAFailure() throws {
        let world = try AgentHarness()
        let result = try status(world)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("inboxd is not running (no status file: \(world.runtime.path)/status.json"))
    }

    @Test func usageErrors() throws {
        let result = try run(Binaries.inboxctl.path, ["status", "--jsn"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            Error: unknown option '--jsn'; did you mean '--json'?
            Usage: inboxctl status [FILE|ID] [--cluster] [--json] [--runtime-dir DIR] [agent options]
              See 'inboxctl help status'.

            """)
        let help = try run(Binaries.inboxctl.path, ["help", "status"])
        let flag = try run(Binaries.inboxctl.path, ["status", "--help"])
        #expect(help.status == 0 && flag.status == 0)
        #expect(help.stdout == flag.stdout)
        #expect(help.stdout.hasPrefix("OVERVIEW: Show what the agent is doing."))
    }
}
