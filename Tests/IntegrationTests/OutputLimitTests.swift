import Foundation
import Testing

/// A handler's stdout and stderr reach the journal through the agent, at most OutputLimit= bytes per delivery
/// (README, What a handler receives); the rest is drained and counted, and the agent keeps working meanwhile.
@Suite(.enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct OutputLimitTests {
    /// 2047 x's and a newline: one journal entry per line, 512 of them per MiB (journalctl's JSON leaves out values
    /// over 4 KiB).
    static let lineSetup = "line=$(head -c 2047 /dev/zero | tr '\\0' x)"

    @Test func aFloodIsCutAtTheLimitCountedAndNeverStallsTheAgent() throws {
        let world = try AgentHarness()
        let flood = "test.flood-\(world.tag)"
        // 50 MiB, then more until the test says stop: the agent drains all of it while another delivery runs.
        let script = try world.script("flood", """
            \(Self.lineSetup)
            touch "$OUTPUT_DIR/flooding"
            i=0
            while [ $i -lt 25600 ]; do echo "$line"; i=$((i+1)); done
            while [ ! -e "$OUTPUT_DIR/stop" ] && [ $i -lt 800000 ]; do echo "$line"; i=$((i+1)); done
            echo $i > "$OUTPUT_DIR/lines"
            """)
        try world.register(flood, exec: script.path, contentTypes: "public.plain-text",
                           extraHandler: "OutputLimit=1M")
        try world.register("test.quick", contentTypes: "public.png")
        try world.start()

        try world.drop("big.txt", contents: Array("flood me".utf8))
        try waitUntil("the flood runs") { FileManager.default.fileExists(atPath: world.output.appendingPathComponent("flooding").path) }
        try world.drop("small.png", contents: pngBytes(width: 1, height: 1))
        let quick = try world.waitForEvents("finished", ["INBOX_HANDLER=test.quick"])
        #expect(quick.count == 1)
        // Still flooding when the other delivery finished.
        #expect(world.events("finished", ["INBOX_HANDLER=\(flood)"]).isEmpty)
        #expect(FileManager.default.createFile(atPath: world.output.appendingPathComponent("stop").path, contents: nil))

        let dropped = try #require(try world.waitForEvents("output-dropped", ["INBOX_HANDLER=\(flood)"]).first)
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(flood)"])
        let lines = try #require(Int64(try String(contentsOf: world.output.appendingPathComponent("lines"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(lines >= 25600)
        #expect(dropped["INBOX_OUTPUT_DROPPED_BYTES"] as? String == String(lines * 2048 - 1_048_576))
        #expect(dropped["INBOX_OUTPUT_LIMIT"] as? String == "1048576")
        #expect(dropped["MESSAGE_ID"] as? String == "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c50")
        // Exactly the first MiB: 512 whole lines.
        var output: [[String: Any]] = []
        try waitUntil("the journal holds the first MiB") {
            output = Journal.entries(["SYSLOG_IDENTIFIER=\(flood)"])
            return output.count >= 512
        }
        Thread.sleep(forTimeInterval: 0.5)
        output = Journal.entries(["SYSLOG_IDENTIFIER=\(flood)"])
        #expect(output.count == 512)
        #expect(output.allSatisfy { ($0["MESSAGE"] as? String)?.utf8.count == 2047 })
    }

    /// The tail a handler writes just before it exits is read after the exit, within the limit; nothing is dropped,
    /// so nothing is said about it.
    @Test func theTailWithinTheLimitIsKeptAndNothingIsReported() throws {
        let world = try AgentHarness()
        let handler = "test.tail-\(world.tag)"
        let script = try world.script("tail", """
            \(Self.lineSetup)
            i=0
            while [ $i -lt 31 ]; do echo "$line"; i=$((i+1)); done
            echo "last line" >&2
            """)
        try world.register(handler, exec: script.path, contentTypes: "public.plain-text", extraHandler: "OutputLimit=64K")
        try world.start()
        try world.drop("a.txt", contents: Array("a".utf8))
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        let last = try Journal.wait(for: ["SYSLOG_IDENTIFIER=\(handler)", "MESSAGE=last line"])
        #expect(last.count == 1)
        #expect(Journal.entries(["SYSLOG_IDENTIFIER=\(handler)"]).count == 32)
        #expect(world.events("output-dropped", ["INBOX_HANDLER=\(handler)"]).isEmpty)
    }

    /// A value that is no size is an error for the file, with its line, as for every other key.
    @Test func anInvalidOutputLimitIsAnErrorWithItsLine() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-ol-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("x.handler")
        try "[Handler]\nExec=/bin/true\nOutputLimit=lots\n[DocumentType]\nContentTypes=public.png\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let result = try run(Binaries.inboxctl.path, ["verify", file.path])
        #expect(result.status == 1)
        #expect(result.stdout == "\(file.path):3: invalid OutputLimit= 'lots': expected a size (64K, 1M) or infinity\n")
    }
}
