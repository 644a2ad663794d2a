import Foundation
import Testing

/// A handler's own words are part of its delivery's story (README, Journal): each line of its output is an entry under
/// its identifier that names the delivery (INBOX_DELIVERY_ID, INBOX_HANDLER, its pid as OBJECT_PID), so that
/// `inboxctl log --delivery ID` shows it beside the agent's entries. A batch's lines name every delivery of the batch;
/// a resident instance's name the delivery it holds, when it holds one.
@Suite(.enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct HandlerOutputTests {
    /// The entries of `inboxctl log --delivery ID` once `count` of them are the handler's.
    static func story(of id: String, handler: String, count: Int) throws -> (agent: [[String: Any]], handler: [[String: Any]]) {
        var entries: [[String: Any]] = []
        try waitUntil("\(count) line(s) of \(handler) for \(id)") {
            let result = try run(Binaries.inboxctl.path, ["log", "--delivery", id, "--", "-o", "json", "--no-pager"])
            entries = result.stdout.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
            return entries.filter { $0[field: "SYSLOG_IDENTIFIER"] == handler }.count >= count
        }
        return (entries.filter { $0[field: "SYSLOG_IDENTIFIER"] == "inboxd" },
                entries.filter { $0[field: "SYSLOG_IDENTIFIER"] == handler })
    }

    @Test func aLaunchedHandlersOutputIsInItsDeliverysStory() throws {
        let world = try AgentHarness()
        let handler = "test.talks-\(world.tag)"
        let script = try world.script("talks", """
            echo "working on $INBOX_NAME"
            echo "a warning" >&2
            printf 'no newline'
            """)
        try world.register(handler, exec: script.path, contentTypes: "public.plain-text")
        try world.start()
        try world.drop("a.txt", contents: Array("a".utf8))
        let finished = try #require(try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"]).first)
        let id = try #require(finished[field: "INBOX_DELIVERY_ID"])
        let story = try Self.story(of: id, handler: handler, count: 3)
        #expect(story.handler.map { $0[field: "MESSAGE"] } == ["working on a.txt", "a warning", "no newline"])
        #expect(story.agent.contains { $0[field: "INBOX_EVENT"] == "finished" })
        let pids = Set(story.handler.compactMap { $0[field: "OBJECT_PID"] })
        #expect(pids.count == 1 && pids.first.flatMap { Int32($0) }.map { $0 > 0 && $0 != world.pid } == true)
        #expect(story.handler.allSatisfy { $0[field: "INBOX_HANDLER"] == handler })
    }

    /// Three files in one %F process: its one line is in each of the three stories.
    @Test func aBatchsLinesNameEveryDeliveryOfTheBatch() throws {
        let world = try AgentHarness()
        let handler = "test.batch-\(world.tag)"
        let script = try world.script("batch", "echo \"batch of $#\"")
        try world.register(handler, exec: "\(script.path) %F", contentTypes: "public.plain-text",
                           extraHandler: "BatchSize=3\nBatchWindowSec=10s")
        try world.start()
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        for name in ["a.txt", "b.txt", "c.txt"] {
            try Data("x".utf8).write(to: staging.appendingPathComponent(name))
        }
        for name in ["a.txt", "b.txt", "c.txt"] {
            rename(staging.appendingPathComponent(name).path, world.inbox.appendingPathComponent(name).path)
        }
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"], count: 3)
        let ids = Set(finished.compactMap { $0[field: "INBOX_DELIVERY_ID"] })
        #expect(ids.count == 3)
        for id in ids {
            let story = try Self.story(of: id, handler: handler, count: 1)
            #expect(story.handler.map { $0[field: "MESSAGE"] } == ["batch of 3"])
            #expect(Set(story.handler.first?["INBOX_DELIVERY_ID"] as? [String] ?? []) == ids)
        }
    }

    /// A line it prints while it holds one delivery is in that delivery's story; one it prints while it holds two
    /// (a pair: it waits for the second before it answers either) names neither, only the instance.
    @Test func aResidentInstancesLinesNameTheDeliveryItHolds() throws {
        let world = try AgentHarness()
        let handler = "test.resident-talks-\(world.tag)"
        let program = world.root.appendingPathComponent("resident-talks")
        try """
            #!/usr/bin/python3
            import json, os, socket
            sock = socket.socket(fileno=3)
            held = []
            while True:
                message, fds, _, _ = socket.recv_fds(sock, 1 << 18, 4)
                if not message:
                    break
                for fd in fds:
                    os.close(fd)
                d = json.loads(message)
                held.append(d)
                if d["name"].startswith("pair") and len(held) < 2:
                    continue
                print(f"holding {len(held)}" if len(held) > 1 else f"handling {d['name']}", flush=True)
                for d in held:
                    sock.send(json.dumps({"deliveryID": d["deliveryID"], "result": "done"}).encode())
                held = []

            """.write(to: program, atomically: true, encoding: .utf8)
        chmod(program.path, 0o755)
        try world.register(handler, exec: program.path, contentTypes: "public.plain-text",
                           extraHandler: "Activation=resident\nMaxInFlight=2")
        try world.start()
        try world.drop("a.txt", contents: Array("x".utf8))
        let first = try #require(try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"]).first)
        let id = try #require(first[field: "INBOX_DELIVERY_ID"])
        #expect(try Self.story(of: id, handler: handler, count: 1).handler.map { $0[field: "MESSAGE"] } == ["handling a.txt"])

        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        for name in ["pair1.txt", "pair2.txt"] { try Data("x".utf8).write(to: staging.appendingPathComponent(name)) }
        for name in ["pair1.txt", "pair2.txt"] {
            rename(staging.appendingPathComponent(name).path, world.inbox.appendingPathComponent(name).path)
        }
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"], count: 3)
        let holding = try Journal.wait(for: ["SYSLOG_IDENTIFIER=\(handler)", "MESSAGE=holding 2"])
        #expect(holding.count == 1)
        #expect(holding.first?["INBOX_DELIVERY_ID"] == nil)
        #expect(holding.first?[field: "OBJECT_PID"] != nil && holding.first?[field: "INBOX_HANDLER"] == handler)
    }
}
