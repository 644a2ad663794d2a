import Foundation
import Testing

/// A stop in the middle of a burst, while intake moves files and handlers run, loses nothing, and a restart delivers
/// each file once.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct StopDuringBurstTests {
    @Test func aStopInTheMiddleOfABurstLosesNothingAndARestartDeliversEachOnce() throws {
        let world = try AgentHarness()
        let log = world.output.appendingPathComponent("handled.log")
        let script = world.root.appendingPathComponent("append-name")
        try "#!/bin/sh\necho \"$INBOX_NAME\" >> \(log.path)\n".write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        let handler = "test.moves.\(world.tag)"
        try world.write("""
            [Handler]
            Identifier=\(handler)
            Exec=\(script.path)
            ReadWritePaths=\(world.output.path)
            [DocumentType]
            ContentTypes=public.plain-text
            """, to: world.handlers.appendingPathComponent("moves.handler"))
        try world.start()
        let count = 4_000
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        for i in 0..<count {
            close(open(staging.appendingPathComponent("f\(i).txt").path, O_CREAT | O_WRONLY, 0o644))
        }
        for i in 0..<count {
            rename(staging.appendingPathComponent("f\(i).txt").path, world.inbox.appendingPathComponent("f\(i).txt").path)
        }
        func lines() -> [Substring] {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
        }
        // In the middle of the burst: intake is moving files while handlers run.
        try waitUntil("some files are handled", timeout: 120) { lines().count >= 100 }
        world.stop()
        let intake = world.state.appendingPathComponent("intake")
        let visible = { (directory: URL) in world.contents(of: directory).filter { !$0.hasPrefix(".") } }
        let left = visible(world.inbox).count + visible(intake).count + visible(world.containerInbox(handler)).count
        #expect(left + lines().count == count, "every file is in the drop Inbox, intake/, its container or handled")
        #expect(left > 0, "the stop came before the burst was done")
        #expect(world.contents(of: world.failedDirectory).isEmpty)

        try world.start()
        try waitUntil("\(count) files are handled", timeout: 600) { lines().count >= count }
        try waitUntil("the queue is empty") {
            let status = try String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)
            return status.contains("\"queued\":0,\"inFlight\":[]")
        }
        let handled = lines()
        #expect(handled.count == count)
        #expect(Set(handled).count == count)
        #expect(visible(world.inbox).isEmpty)
        #expect(visible(intake).isEmpty)
        #expect(world.contents(of: world.failedDirectory).isEmpty)
    }
}
