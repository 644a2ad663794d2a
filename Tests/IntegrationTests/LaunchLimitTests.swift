import Foundation
import Testing

/// The agent's MaxConcurrent= holds for every kind of launch, through the real agent.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct LaunchLimitTests {
    /// A `%F` handler that fails every batch of more than one file: each file of a failed batch goes again in a
    /// process of its own, and those processes count against the agent's limit like any handler's process, however
    /// many files the failed batches held.
    @Test func filesOfAFailedBatchRunAloneWithinTheAgentsLimit() throws {
        let world = try AgentHarness()
        let handler = "test.failing-batch.\(world.tag)"
        // Each run records its start and end (one short O_APPEND write each), failed batches included.
        let script = try world.script("failing-batch", """
            echo "+ $(date +%s%N) $#" >> "$OUTPUT_DIR/runs"
            if [ $# -gt 1 ]; then echo "- $(date +%s%N) $#" >> "$OUTPUT_DIR/runs"; exit 1; fi
            sleep 1
            echo "- $(date +%s%N) $#" >> "$OUTPUT_DIR/runs"
            """)
        try world.register(handler, exec: "\(script.path) %F", contentTypes: "public.plain-text",
                           extraHandler: "BatchSize=64")
        let limit = 4
        try world.start(["--max-concurrent", String(limit)])
        let count = 40
        for index in 0..<count { try world.drop("file-\(index).txt", contents: Array("file \(index)\n".utf8)) }
        let finished = try world.waitForEvents("finished", count: count, timeout: 120)
        #expect(Set(finished.compactMap { $0[field: "INBOX_FILE"] }).count == count)

        // Ends sort before starts at the same nanosecond: a process that ended as another began did not overlap it.
        let events = world.lines("runs").compactMap { line -> (time: Int64, delta: Int, files: Int)? in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let time = Int64(fields[1]), let files = Int(fields[2]) else { return nil }
            return (time, fields[0] == "+" ? 1 : -1, files)
        }.sorted { ($0.time, $0.delta) < ($1.time, $1.delta) }
        var running = 0
        var most = 0
        for event in events {
            running += event.delta
            most = max(most, running)
        }
        #expect(events.contains { $0.files > 1 }, "no batch of more than one file ran: the test proves nothing")
        #expect(events.filter { $0.delta == 1 && $0.files == 1 }.count >= count - 1)
        #expect(most <= limit, "\(most) of its processes ran at once; the agent's MaxConcurrent= is \(limit)")
        #expect(most >= 2, "its files never ran side by side")
    }
}
