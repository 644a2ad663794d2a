import Foundation
import InboxSystem
import Testing

/// Paths the agent's sandbox makes read-only, hides or keeps private, checked against its own mount namespace: the
/// agent runs in a namespace of its own (unshare) where one directory a registration grants is bound read-only,
/// another is a private /tmp as a unit's PrivateTmp= makes it, and a drop Inbox inboxd.conf names is read-only.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: getuid() == 0, "a mount namespace with read-only binds needs root"))
struct ServiceSandboxTests {
    /// The agent in a mount namespace of its own, where `readOnly` are bound read-only and `privateTmp` over the
    /// given directories (a bind of a `systemd-private-…/tmp` directory, as PrivateTmp= makes).
    static func namespace(readOnly: [URL], privateTmp: [(URL, URL)] = []) -> [String] {
        let binds = readOnly.map { "mount --bind '\($0.path)' '\($0.path)' && mount -o remount,bind,ro '\($0.path)'" }
            + privateTmp.map { "mount --bind '\($0.1.path)' '\($0.0.path)'" }
        return ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                (binds + ["exec \"$0\" \"$@\""]).joined(separator: " && ")]
    }

    static func lineNumber(of prefix: String, in file: URL) throws -> Int {
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.hasPrefix(prefix) }) + 1
    }

    @Test func aGrantTheSandboxMakesReadOnlyIsReportedAtLoadWithItsLine() throws {
        let world = try AgentHarness()
        let log = world.root.appendingPathComponent("slowlog"), open = world.root.appendingPathComponent("open")
        let shared = world.root.appendingPathComponent("shared")
        let privateTmp = world.root.appendingPathComponent("systemd-private-0123-inboxd.service-abcd/tmp")
        for directory in [log, open, shared, privateTmp] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let handler = "test.sandbox.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text",
                           extraHandler: "ReadWritePaths=\(log.path) \(open.path)\nReadWritePaths=\(shared.path)")
        let registration = world.handlers.appendingPathComponent("\(handler).handler")
        try world.start(through: Self.namespace(readOnly: [log], privateTmp: [(shared, privateTmp)]))
        defer { world.stop() }
        let event = "MESSAGE_ID=\(JournalEvent.registrationError.messageID)"
        let entries = try Journal.wait(for: ["_PID=\(world.pid)", event, "CONFIG_FILE=\(registration.path)"], count: 2)
        let messages = entries.compactMap { $0["MESSAGE"] as? String }
        let readOnly = try #require(messages.first { $0.contains("ReadWritePaths=\(log.path) ") })
        #expect(readOnly.contains("is read-only where the agent runs (the mount at \(log.path) is read-only"))
        #expect(readOnly.contains("\(handler) cannot write there"))
        let line = try Self.lineNumber(of: "ReadWritePaths=\(log.path)", in: registration)
        let entry = entries.first { ($0["MESSAGE"] as? String) == readOnly }
        #expect(entry?["CONFIG_LINE"] as? String == String(line))
        let privately = try #require(messages.first { $0.contains("ReadWritePaths=\(shared.path) ") })
        #expect(privately.contains("own \(shared.path) (PrivateTmp=)"))
        #expect(entries.allSatisfy { ($0["PRIORITY"] as? String) == "4" }, "warnings")
        #expect(!messages.contains { $0.contains(open.path) }, "a grant the agent can write is not reported")

        // inboxctl, outside the namespace, sees what the agent sees through /proc/PID.
        let agent = ["--handlers", world.handlers.path, "--runtime-dir", world.runtime.path, "--state", world.state.path,
                     "--inbox", world.inbox.path]
        let handlers = try inboxctl(["handlers"] + agent)
        #expect(handlers.stdout.contains("(cannot write what it is granted: see sandbox)"))
        #expect(handlers.stdout.contains("  sandbox: \(registration.path):"))
        #expect(handlers.stdout.contains("ReadWritePaths=\(log.path) is read-only"))
        let verify = try inboxctl(["verify", "--runtime-dir", world.runtime.path, registration.path])
        #expect(verify.status == 0, "warnings pass without --strict")
        #expect(verify.stdout.contains("warning: ReadWritePaths=\(log.path) is read-only")
                || verify.stderr.contains("warning: ReadWritePaths=\(log.path) is read-only"))
        let strict = try inboxctl(["verify", "--strict", "--runtime-dir", world.runtime.path, registration.path])
        #expect(strict.status == 1, "\(strict.stdout)\(strict.stderr)")
        // Outside the agent's namespace nothing is read-only: without it, nothing to say.
        try FileManager.default.removeItem(at: world.runtime.appendingPathComponent("status.json"))
        let alone = try inboxctl(["verify", "--strict", "--runtime-dir", world.runtime.path, registration.path])
        #expect(alone.status == 0)
        #expect((alone.stdout + alone.stderr).contains("notice: ReadWritePaths= not checked against the agent's sandbox: no agent runs"))

        // A reload checks again.
        kill(world.pid, SIGHUP)
        let again = try Journal.wait(for: ["_PID=\(world.pid)", event, "CONFIG_FILE=\(registration.path)"], count: 4)
        #expect(again.filter { ($0["MESSAGE"] as? String)?.contains("ReadWritePaths=\(log.path) ") == true }.count == 2)
    }

    @Test func aDropInboxTheSandboxMakesReadOnlyIsReportedAtStartUp() throws {
        let world = try AgentHarness()
        let scans = world.root.appendingPathComponent("scans")
        try FileManager.default.createDirectory(at: scans, withIntermediateDirectories: true)
        let config = "[Inbox]\nPath=\(scans.path)\n"
        try world.start(config: config, through: Self.namespace(readOnly: [scans]))
        defer { world.stop() }
        let file = world.root.appendingPathComponent("inboxd.conf").path
        let entry = try #require(try Journal.wait(for: ["_PID=\(world.pid)", "CONFIG_FILE=\(file)"]).first)
        let message = try #require(entry["MESSAGE"] as? String)
        #expect(message.contains("[Inbox] Path=\(scans.path) is read-only where the agent runs"))
        #expect(message.contains("files dropped there cannot be moved out of it"))
        #expect(entry["CONFIG_LINE"] as? String == "1")
        // inboxctl verify on the file says the same against the running agent.
        let verify = try inboxctl(["verify", "--strict", "--runtime-dir", world.runtime.path, file])
        #expect(verify.status == 1)
        #expect((verify.stdout + verify.stderr).contains("\(file):1: warning: [Inbox] Path=\(scans.path) is read-only"))
    }
}
