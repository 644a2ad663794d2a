import Foundation
import Testing

/// MaxConcurrent= in a registration bounds how many of its handlers run at once.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct ConcurrencyTests {
    @Test func maxConcurrentOneNeverRunsTwoAtOnce() throws {
        let world = try AgentHarness()
        let handler = "test.one-at-a-time.\(world.tag)"
        // mkdir is atomic: it fails when another run holds the lock.
        let script = try world.script("exclusive-handler", """
            if ! mkdir "$OUTPUT_DIR/lock" 2>/dev/null; then echo "OVERLAP $INBOX_NAME" >> "$OUTPUT_DIR/overlaps"; fi
            sleep 0.3
            rmdir "$OUTPUT_DIR/lock" 2>/dev/null
            echo "$INBOX_NAME" >> "$OUTPUT_DIR/handled"
            """)
        try world.register(handler, exec: script.path, contentTypes: "public.plain-text", extraHandler: "MaxConcurrent=1")
        // The agent-wide limit would allow several at once; only the registration's holds them back.
        try world.start(["--max-concurrent", "8"])

        let names = ["first.txt", "second.txt", "third.txt"]
        for name in names {
            try world.drop(name, contents: Array(name.utf8))
        }
        let finished = try world.waitForEvents("finished", count: names.count)
        #expect(finished.allSatisfy { $0[field: "INBOX_HANDLER"] == handler })
        #expect(Set(world.lines("handled")) == Set(names))
        #expect(world.lines("overlaps") == [])
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
    }
}
