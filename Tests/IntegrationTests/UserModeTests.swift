import Foundation
import InboxSystem
import Testing

/// An agent started by an ordinary user, with no flags: the XDG directories of docs/design.md, Directories.
/// Whether the built agent can be run as nobody from where it was built (not from under /root, say).
let nobodyCanRunTheAgent: Bool = {
    guard getuid() == 0 else { return false }
    let result = try? run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/test",
                                               "-x", Binaries.inboxd.path])
    return result?.status == 0
}()

@Suite(.enabled(if: getuid() == 0, "switching to an unprivileged user needs root"),
       .enabled(if: nobodyCanRunTheAgent, "the built inboxd is not executable by nobody (uid 65534) from here"))
struct UserModeTests {

    @Test func withoutFlagsAnOrdinaryUserGetsTheXDGDirectories() throws {
        let home = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        #expect(chown(home.path, 65534, 65534) == 0)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", Binaries.inboxd.path,
                             "--log-target", "stderr"]
        process.environment = ["HOME": home.path, "XDG_DATA_HOME": home.path + "/data", "XDG_STATE_HOME": home.path + "/state",
                               "XDG_RUNTIME_DIR": home.path + "/run", "XDG_CONFIG_HOME": home.path + "/config",
                               "PATH": "/usr/bin:/bin"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }

        let status = home.appendingPathComponent("run/inboxd/status.json")
        try waitUntil("the agent is ready") { FileManager.default.fileExists(atPath: status.path) }
        let text = try String(contentsOf: status, encoding: .utf8)
        #expect(text.contains("\"inboxes\":[\"\(home.path)/data/inboxd/Inbox\"]"))
        #expect(text.contains("\"stateDirectory\":\"\(home.path)/state/inboxd\""))
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: home.path + "/data/inboxd/Inbox", isDirectory: &isDirectory)
                && isDirectory.boolValue)
        #expect(FileManager.default.fileExists(atPath: home.path + "/state/inboxd/unhandled"))
        let owner = try FileManager.default.attributesOfItem(atPath: home.path + "/state/inboxd")[.ownerAccountID] as? Int
        #expect(owner == 65534)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: status.path))
    }

    /// An ordinary user's agent still sandboxes its handlers (which run as that user): the copy can be
    /// made writable (its owner may chmod) but not written, and the chmod itself is a violation.
    @Test(.enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
          .enabled(if: LandlockAvailability.available, "the kernel has no Landlock"))
    func anOrdinaryUsersHandlersAreSandboxedToo() throws {
        let home = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-user-\(UUID().uuidString)")
        let out = home.appendingPathComponent("out"), handlers = home.appendingPathComponent("handlers.d")
        for directory in [home, out, handlers] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: home) }
        let script = home.appendingPathComponent("try-write")
        try """
            #!/bin/sh
            chmod u+w "$INBOX_FILE"
            if (echo x >> "$INBOX_FILE") 2>/dev/null; then echo write-allowed; else echo write-denied; fi > "\(out.path)/result"
            """.write(to: script, atomically: true, encoding: .utf8)
        try """
            [Handler]
            Identifier=test.user-sandbox
            Exec=\(script.path)
            ReadWritePaths=\(out.path)
            [DocumentType]
            ContentTypes=public.plain-text
            """.write(to: handlers.appendingPathComponent("user.handler"), atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        _ = try run("/bin/chown", ["-R", "65534:65534", home.path])

        let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = asNobody + [Binaries.inboxd.path, "--inbox", home.path + "/Inbox", "--handlers", handlers.path,
                                        "--state", home.path + "/state", "--runtime-dir", home.path + "/run",
                                        "--log-target", "journal"]
        process.environment = ["HOME": home.path, "PATH": "/usr/bin:/bin"]
        process.standardError = FileHandle.nullDevice
        let cursor = Journal.currentCursor()
        try process.run()
        Journal.remember(pid: process.processIdentifier, after: cursor)
        defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }
        try waitUntil("the agent is ready") { FileManager.default.fileExists(atPath: home.path + "/run/status.json") }

        let drop = try run("/usr/bin/setpriv", asNobody + ["/bin/sh", "-c",
            "printf original > \(home.path)/Inbox/.x.txt && mv \(home.path)/Inbox/.x.txt \(home.path)/Inbox/x.txt"])
        #expect(drop.status == 0)
        let violation = try #require(try Journal.wait(for: ["_PID=\(process.processIdentifier)", "INBOX_EVENT=violation"]).first)
        #expect((violation["INBOX_REASON"] as? String)?.contains("change time") == true)
        #expect(try String(contentsOf: out.appendingPathComponent("result"), encoding: .utf8) == "write-denied\n")
        #expect(try String(contentsOfFile: home.path + "/state/failed/x.txt", encoding: .utf8) == "original")
    }
}

/// Whether the kernel offers Landlock (checked the way the agent does).
enum LandlockAvailability {
    static let available = LandlockRuleset.abi() > 0
}
