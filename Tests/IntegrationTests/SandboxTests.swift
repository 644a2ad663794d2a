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
              try truncate 'perl -e "truncate(q($INBOX_FILE), 0) or exit 1"'
              try hardlink 'ln "$INBOX_FILE" "$(dirname "$INBOX_FILE")/link.txt"'
              try symlink 'ln -s /etc/passwd "$(dirname "$INBOX_FILE")/sym"'
              try rename 'perl -e "rename(q($INBOX_FILE), q($INBOX_DOCUMENTS/moved.txt)) or exit 1"'
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
            truncate denied
            hardlink denied
            symlink denied
            rename denied
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

    @Test(.enabled(if: getuid() == 0, "needs a handler running as root"))
    func aChangedInboxCopyIsAViolationKeptInFailed() throws {
        let world = try AgentHarness()
        let handler = "test.tamperer.\(world.tag)"
        let tamper = try world.script("tamper", "echo tampered >> \"$INBOX_FILE\"")
        // Only root gets past the copy's read-only mode once Landlock is off; User=root says so.
        try world.write(world.registrationText(handler, exec: tamper.path, contentTypes: "public.plain-text",
                                               extraHandler: "User=root"),
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

    /// As root, a handler without User= runs under an identity of its own, never as root.
    @Test(.enabled(if: getuid() == 0, "the agent runs handlers under other identities only as root"))
    func handlersWithoutUserGetIdentitiesOfTheirOwn() throws {
        let world = try AgentHarness()
        let first = "test.first.\(world.tag)", second = "test.second.\(world.tag)"
        let probe = try world.script("whoami", """
            other="$INBOX_DOCUMENTS/../../$PEER/Documents"
            { id -u; id -g
              if cat /etc/shadow >/dev/null 2>&1; then echo shadow-readable; else echo shadow-denied; fi
              if ls "$other" >/dev/null 2>&1; then echo peer-readable; else echo peer-denied; fi
            } > "$OUTPUT_DIR/$INBOX_HANDLER.who"
            """)
        try world.write(world.registrationText(first, exec: probe.path, contentTypes: "public.plain-text",
                                               environment: "PEER=\(second)"), to: world.handlerFile(first))
        try world.write(world.registrationText(second, exec: probe.path, contentTypes: "public.png",
                                               environment: "PEER=\(first)"), to: world.handlerFile(second))
        try world.start()
        try world.drop("one.txt", contents: Array("1".utf8))
        try world.drop("two.png", contents: pngBytes(width: 1, height: 1))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(first)"])
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(second)"])
        let one = try String(contentsOf: world.output.appendingPathComponent("\(first).who"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let two = try String(contentsOf: world.output.appendingPathComponent("\(second).who"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let uid1 = try #require(UInt32(one[0])), uid2 = try #require(UInt32(two[0]))
        #expect(uid1 >= 0x7000_0000 && uid2 >= 0x7000_0000)
        #expect(uid1 != uid2)
        #expect(one[1] == one[0] && two[1] == two[0])
        #expect(Array(one.dropFirst(2)) == ["shadow-denied", "peer-denied"])
        #expect(Array(two.dropFirst(2)) == ["shadow-denied", "peer-denied"])
        let documents = world.state.appendingPathComponent("containers/\(first)/Documents")
        #expect(try FileManager.default.attributesOfItem(atPath: documents.path)[.ownerAccountID] as? Int == Int(uid1))
    }

    /// A handler that daemonizes a child (new session, so not in its process group) and exits
    /// leaves nothing running: its identity is its own, and the agent kills what remains of it.
    @Test(.enabled(if: getuid() == 0, "identities need the agent to run as root"),
          arguments: ["", "User=nobody"])
    func aDaemonizedChildDoesNotOutliveItsHandler(user: String) throws {
        let world = try AgentHarness()
        let handler = "test.daemonizer.\(world.tag)"
        let script = try world.script("daemonize", """
            setsid sleep 600 </dev/null >/dev/null 2>&1 &
            echo "$!" > "$OUTPUT_DIR/daemon.pid"
            id -u > "$OUTPUT_DIR/daemon.uid"
            """)
        try world.write(world.registrationText(handler, exec: script.path, contentTypes: "public.plain-text",
                                               extraHandler: user),
                        to: world.handlerFile(handler))
        try world.start()
        try world.drop("spawn.txt", contents: Array("x".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let pid = try #require(Int32(try String(contentsOf: world.output.appendingPathComponent("daemon.pid"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        // Gone, or a zombie waiting for whoever inherited it.
        try waitUntil("the daemonized child is gone") {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        #expect(!world.journal(["INBOX_HANDLER=\(handler)", "PRIORITY=5"]).isEmpty)
    }

    /// no_new_privs: a setuid-root program run by a handler gains nothing.
    @Test(.enabled(if: getuid() == 0, "making a setuid-root program needs root"))
    func aSetuidProgramGivesAHandlerNoPrivileges() throws {
        let world = try AgentHarness()
        let handler = "test.setuid.\(world.tag)"
        let setuidID = world.root.appendingPathComponent("setuid-id")
        try FileManager.default.copyItem(atPath: "/usr/bin/id", toPath: setuidID.path)
        #expect(chown(setuidID.path, 0, 0) == 0)
        #expect(chmod(setuidID.path, 0o4755) == 0)
        let script = try world.script("escalate", "\(setuidID.path) -u > \"$OUTPUT_DIR/euid\"; id -u > \"$OUTPUT_DIR/uid\"")
        try world.write(world.registrationText(handler, exec: script.path, contentTypes: "public.plain-text"),
                        to: world.handlerFile(handler))
        try world.start()
        try world.drop("try.txt", contents: Array("x".utf8))
        _ = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished", "INBOX_HANDLER=\(handler)"])
        let euid = try String(contentsOf: world.output.appendingPathComponent("euid"), encoding: .utf8)
        let uid = try String(contentsOf: world.output.appendingPathComponent("uid"), encoding: .utf8)
        #expect(euid == uid)
        #expect(euid != "0\n")
    }
}
