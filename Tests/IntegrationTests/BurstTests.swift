import Foundation
import Testing

@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct BurstTests {
    /// More files than the kernel's inotify queue holds (16384 here): every one handled exactly once.
    @Test func twentyThousandFilesAreEachHandledExactlyOnce() throws {
        let world = try AgentHarness()
        let log = world.output.appendingPathComponent("handled.log")
        let script = world.root.appendingPathComponent("append-name")
        try "#!/bin/sh\necho \"$INBOX_NAME\" >> \(log.path)\n".write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        try world.write("""
            [Handler]
            Identifier=test.burst.\(world.tag)
            Exec=\(script.path)
            ReadWritePaths=\(world.output.path)
            [DocumentType]
            ContentTypes=public.plain-text
            """, to: world.handlers.appendingPathComponent("burst.handler"))
        try world.start()
        let count = 20_000
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        for i in 0..<count {
            let fd = open(staging.appendingPathComponent("f\(i).txt").path, O_CREAT | O_WRONLY, 0o644)
            close(fd)
        }
        for i in 0..<count {
            rename(staging.appendingPathComponent("f\(i).txt").path, world.inbox.appendingPathComponent("f\(i).txt").path)
        }
        func lines() -> [Substring] {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
        }
        try waitUntil("\(count) files are handled", timeout: 600) { lines().count >= count }
        // Give a duplicate the chance to show up before counting.
        try waitUntil("the queue is empty") {
            let status = try String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)
            return status.contains("\"queued\":0,\"inFlight\":[]")
        }
        let handled = lines()
        #expect(handled.count == count)
        #expect(Set(handled).count == count)
        #expect(world.contents(of: world.inbox).isEmpty)
        #expect(world.contents(of: world.unhandledDirectory).isEmpty)
        #expect(world.contents(of: world.failedDirectory).isEmpty)
    }
}
