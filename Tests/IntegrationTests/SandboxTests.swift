import Foundation
import InboxSystem
import Testing

/// Landlock through the real agent: what a handler may do with its Inbox copy, what happens when it
/// changes it anyway (with Landlock switched off), and refusal when a registration requires it.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct SandboxTests {
    static let landlockAvailable = LandlockRuleset.abi() > 0

    @Test(.enabled(if: SandboxTests.landlockAvailable, "the kernel has no Landlock"))
    func aHandlerMayReadCopyAndDeleteItsInboxCopyButNotChangeIt() throws {
        let world = try AgentHarness()
        let handler = "test.sandboxed.\(world.tag)"
        let probe = try world.script("probe", """
            out="$OUTPUT_DIR/$INBOX_DELIVERY_ID.probe"
            try() { if (eval "$2") 2>/dev/null; then echo "$1 allowed"; else echo "$1 denied"; fi; }
            {
              try read 'cat "$INBOX_FILE" >/dev/null'
              try write 'echo x >> "$INBOX_FILE"'
              try create 'echo x > "$(dirname "$INBOX_FILE")/new.txt"'
              try keep 'cp "$INBOX_FILE" "$INBOX_DOCUMENTS/kept.txt"'
              try tmpdir 'echo x > "$TMPDIR/scratch"'
              try tmp 'echo x > /tmp/inboxd-sandbox-$$'
              try state 'echo x > "$INBOX_DOCUMENTS/../../../failed/planted"'
              try delete 'rm "$INBOX_FILE"'
            } > "$out"
            """)
        try world.write(world.registrationText(handler, exec: probe.path, contentTypes: "public.plain-text"),
                        to: world.handlerFile(handler))
        try world.start()
        try world.drop("letter.txt", contents: Array("dear handler\n".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let probeFile = try #require(world.contents(of: world.output).first { $0.hasSuffix(".probe") })
        let lines = try String(contentsOf: world.output.appendingPathComponent(probeFile), encoding: .utf8)
        #expect(lines == """
            read allowed
            write denied
            create denied
            keep allowed
            tmpdir allowed
            tmp denied
            state denied
            delete allowed

            """)
        let kept = world.state.appendingPathComponent("containers/\(handler)/Documents/kept.txt")
        #expect(try String(contentsOf: kept, encoding: .utf8) == "dear handler\n")
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        #expect(world.journal(["INBOX_EVENT=violation"]).isEmpty)
    }

    @Test func aChangedInboxCopyIsAViolationKeptInFailed() throws {
        let world = try AgentHarness()
        let handler = "test.tamperer.\(world.tag)"
        let tamper = try world.script("tamper", "echo tampered >> \"$INBOX_FILE\"")
        try world.write(world.registrationText(handler, exec: tamper.path, contentTypes: "public.plain-text"),
                        to: world.handlerFile(handler))
        try world.start(config: "[Agent]\nLandlock=off\n")
        try world.drop("evidence.txt", contents: Array("original\n".utf8))
        let violation = try #require(try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=violation"]).first)
        #expect(violation["INBOX_HANDLER"] as? String == handler)
        #expect(violation["MESSAGE_ID"] as? String == "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c57")
        #expect((violation["INBOX_REASON"] as? String)?.contains("size 9 → 18") == true)
        #expect(world.contents(of: world.failedDirectory) == ["evidence.txt"])
        #expect(try String(contentsOf: world.failedDirectory.appendingPathComponent("evidence.txt"), encoding: .utf8)
                == "original\ntampered\n")
        #expect(world.journal(["INBOX_EVENT=finished"]).isEmpty)
        // The agent said at start-up that handlers run without Landlock.
        #expect(!world.journal(["INBOX_LANDLOCK_ABI=0"]).isEmpty)
    }

    @Test func aHandlerThatRequiresLandlockIsRefusedWithoutIt() throws {
        let world = try AgentHarness()
        let handler = "test.strict.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text", extraHandler: "RequireLandlock=yes")
        try world.start(config: "[Agent]\nLandlock=off\n")
        try world.drop("strict.txt", contents: Array("x".utf8))
        let failed = try #require(try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=failed"]).first)
        #expect((failed["INBOX_REASON"] as? String)?.contains("RequireLandlock=yes") == true)
        #expect(world.recordings().isEmpty)
        #expect(world.contents(of: world.failedDirectory) == ["strict.txt"])
    }

    @Test func limitKeysBoundTheHandlersResources() throws {
        let world = try AgentHarness()
        let handler = "test.limited.\(world.tag)"
        let probe = try world.script("limits", #"echo "$(ulimit -n) $(ulimit -Hn)" > "$OUTPUT_DIR/$INBOX_DELIVERY_ID.limits""#)
        try world.write(world.registrationText(handler, exec: probe.path, contentTypes: "public.plain-text",
                                               extraHandler: "LimitNOFILE=64:128"),
                        to: world.handlerFile(handler))
        try world.start()
        try world.drop("bounded.txt", contents: Array("x".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let file = try #require(world.contents(of: world.output).first { $0.hasSuffix(".limits") })
        #expect(try String(contentsOf: world.output.appendingPathComponent(file), encoding: .utf8) == "64 128\n")
    }
}
