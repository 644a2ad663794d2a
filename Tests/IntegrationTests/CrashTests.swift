import Foundation
import Testing

/// kill -9 of the agent: its handlers die with it, what they started is stopped at the next start, and the file is
/// delivered again as the next attempt, marked as a redelivery, never beside a process still working on it.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct CrashTests {
    /// Whether a process runs: there, and not a zombie waiting for whoever inherited it.
    static func isRunning(_ pid: Int32) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return false }
        return !text[close...].dropFirst(2).hasPrefix("Z")
    }

    @Test func aCrashKillsTheHandlerAndTheRedeliveryIsTheNextAttempt() throws {
        let world = try AgentHarness()
        let handler = "test.crash.\(world.tag)"
        // Each run logs its start and end, and records an overlap when a process of an earlier run is still there. The
        // first attempt leaves a child of its own (sleep) that outlives it unless something stops it.
        let script = try world.script("crash-handler", """
            echo "start $$ $INBOX_ATTEMPT ${INBOX_REDELIVERED:-0}" >> "$OUTPUT_DIR/log"
            for f in "$OUTPUT_DIR"/pid.*; do
              [ -e "$f" ] || continue
              p=${f##*.}
              s=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
              if [ -n "$s" ] && [ "$s" != Z ]; then echo "OVERLAP $p" >> "$OUTPUT_DIR/overlaps"; fi
            done
            : > "$OUTPUT_DIR/pid.$$"
            if [ "$INBOX_ATTEMPT" = 1 ]; then
              sleep 60 &
              : > "$OUTPUT_DIR/pid.$!"
              echo "child $!" >> "$OUTPUT_DIR/log"
              wait
            fi
            cat > "$OUTPUT_DIR/stdin"
            echo "end $$" >> "$OUTPUT_DIR/log"
            """)
        try world.register(handler, exec: script.path, contentTypes: "public.plain-text")
        try world.start()
        try world.drop("crash.txt", contents: Array("once".utf8))
        try waitUntil("the first attempt started its child") { world.lines("log").count == 2 }
        let first = world.lines("log")
        let handlerPID = try #require(Int32(first[0].split(separator: " ")[1]))
        let childPID = try #require(Int32(first[1].split(separator: " ")[1]))
        #expect(first[0].hasSuffix(" 1 0"))

        let crashed = try #require(world.process)
        kill(crashed.processIdentifier, SIGKILL)
        crashed.waitUntilExit()
        // PR_SET_PDEATHSIG: the handler goes with the agent. Its own child does not (it is not the agent's child).
        try waitUntil("the handler died with the agent", timeout: 5) { !Self.isRunning(handlerPID) }
        #expect(Self.isRunning(childPID))
        let inbox = world.containerInbox(handler)
        #expect(world.contents(of: inbox) == ["crash.txt"])

        try world.start()
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_ATTEMPT"] == "2")
        #expect(finished.first?[field: "INBOX_REDELIVERED"] == "1")
        // The identity of its own was swept before the file was delivered again.
        #expect(!Self.isRunning(childPID))
        let log = world.lines("log")
        #expect(log.count == 4)
        #expect(log.count == 4 && log[2].hasPrefix("start ") && log[2].hasSuffix(" 2 1"))
        #expect(log.last?.hasPrefix("end ") == true)
        #expect(world.lines("overlaps") == [])
        let stdin = (try? String(contentsOf: world.output.appendingPathComponent("stdin"), encoding: .utf8)) ?? ""
        #expect(stdin.contains(#""attempt":2,"redelivered":true,"#))
        #expect(world.contents(of: inbox).isEmpty)
    }

    @Test func anOrdinaryRetryIsNotARedelivery() throws {
        let world = try AgentHarness()
        let handler = "test.retry.\(world.tag)"
        // Fails once, then succeeds: the second attempt follows one whose end the agent saw.
        let script = try world.script("retry-handler", """
            echo "$INBOX_ATTEMPT ${INBOX_REDELIVERED:-0}" >> "$OUTPUT_DIR/log"
            [ "$INBOX_ATTEMPT" = 1 ] && exit 75
            exit 0
            """)
        try world.register(handler, exec: script.path, contentTypes: "public.plain-text")
        try world.start(config: "[Agent]\nRetryDelaySec=100ms\n")
        try world.drop("retry.txt", contents: Array("twice".utf8))
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_ATTEMPT"] == "2")
        #expect(finished.first?[field: "INBOX_REDELIVERED"] == nil)
        #expect(world.lines("log") == ["1 0", "2 0"])
    }
}
