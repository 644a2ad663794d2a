import Foundation
import Glibc
import Testing

/// A journald that stops reading stops no delivery: the agent's entries and its handlers' output wait for it (the
/// agent's own entries up to a bound, counted past it), and arrive, in order, once it reads again. The agent is pointed
/// at a stand-in socket with INBOXD_JOURNAL_SOCKET (for tests only), whose queue the test fills before it starts.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct JournalStallTests {
    @Test(.timeLimit(.minutes(5))) func aJournaldThatStopsReadingStopsNoDelivery() throws {
        let world = try AgentHarness()
        let log = world.output.appendingPathComponent("handled.log")
        let script = try world.script("append-name", "echo \"$INBOX_NAME\" >> \(log.path)\necho \"handled $INBOX_NAME\"")
        try world.write("""
            [Handler]
            Identifier=test.journal-stall.\(world.tag)
            Exec=\(script.path)
            ReadWritePaths=\(world.output.path)
            [DocumentType]
            ContentTypes=public.plain-text
            """, to: world.handlers.appendingPathComponent("stall.handler"))
        let journald = try NotifySocket(path: world.root.appendingPathComponent("journal").path, receiveBuffer: 4096)
        // An agent blocked in sendmsg on it would never exit: it goes away first, whatever happens.
        defer {
            journald.close()
            world.stop()
        }
        let filled = try journald.fill()
        try world.start(["--log-target", "journal"], environment: ["INBOXD_JOURNAL_SOCKET": journald.path])

        let count = 2_000
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        for i in 0..<count { close(open(staging.appendingPathComponent("f\(i).txt").path, O_CREAT | O_WRONLY, 0o644)) }
        for i in 0..<count {
            rename(staging.appendingPathComponent("f\(i).txt").path, world.inbox.appendingPathComponent("f\(i).txt").path)
        }
        func handled() -> [Substring] { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n") }
        try waitUntil("\(count) files are handled while journald does not read", timeout: 180) { handled().count >= count }
        #expect(Set(handled()).count == count)
        // Every handler's line waits for journald, on the journal connection's one wait: not a descriptor per waiting
        // relay, which a burst would run out of (a service's soft limit is 1,024 by default).
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(world.pid)/fd").count
        #expect(descriptors < 256, "the agent holds \(descriptors) descriptors while journald does not read")
        let status = try run(Binaries.inboxctl.path, ["status", "--runtime-dir", world.runtime.path, "--state",
                                                       world.state.path])
        #expect(status.status == 0, "inboxctl status: \(status.stderr)")
        #expect(status.stdout.contains("Journal:"), "inboxctl status does not say the journal pushed back:\n\(status.stdout)")
        let text = try String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let stalls = try #require(json["journal"] as? [String: Any], "no journal member in \(text)")
        #expect((stalls["delayed"] as? Int ?? 0) > 0, "\(stalls)")

        // journald reads again: every delivery's outcome and every handler's line arrive, then one line about the wait.
        journald.drop(filled)
        var finished = Set<String>()
        var output = Set<String>()
        var recovery: [String: String]?
        let end = Date().addingTimeInterval(60)
        while recovery == nil || finished.count < count || output.count < count, Date() < end {
            guard let entry = journald.receive(timeout: 5) else { break }
            if entry["INBOX_EVENT"] == "finished", let name = entry["INBOX_FILE"] { finished.insert(name) }
            if entry["SYSLOG_IDENTIFIER"] == "test.journal-stall.\(world.tag)", let line = entry["MESSAGE"] { output.insert(line) }
            if entry["MESSAGE"]?.hasPrefix("journald did not read for") == true { recovery = entry }
        }
        #expect(finished.count == count, "finished entries that arrived: \(finished.count)")
        #expect(output.count == count, "handler output lines that arrived: \(output.count)")
        let said = try #require(recovery, "no entry about the wait")
        #expect(Int(said["INBOX_JOURNAL_DELAYED"] ?? "") ?? 0 > 0, "\(said)")
    }
}
