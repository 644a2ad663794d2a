import Foundation
import Testing

/// A user instance as `systemctl --user` runs it: an ordinary user, no flags, the XDG variables of a session. It reads
/// the user's own inboxd.conf from $XDG_CONFIG_HOME/inboxd/ and keeps its status file in $XDG_RUNTIME_DIR/inboxd, and
/// the same user's inboxctl finds it there without being told.
@Suite(.enabled(if: getuid() == 0, "switching to an unprivileged user needs root"),
       .enabled(if: nobodyCanRunTheAgent, "the built inboxd is not executable by nobody (uid 65534) from here"))
struct UserInstanceTests {
    static let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]

    /// A scratch home owned by nobody, with `files` (relative paths) in it.
    static func home(_ files: [String: String]) throws -> URL {
        let home = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-user-instance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        for (path, text) in files {
            let file = home.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        _ = try run("/bin/chown", ["-R", "65534:65534", home.path])
        _ = try run("/bin/chmod", ["-R", "go-w", home.path])
        return home
    }

    /// Starts the agent as nobody with `environment` and no flags but the log target.
    static func startAgent(_ environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = asNobody + [Binaries.inboxd.path, "--log-target", "stderr"]
        process.environment = environment
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func readsTheUsersOwnConfigurationAndFindsItsRuntimeDirectory() throws {
        let home = try Self.home([
            "config/inboxd/inboxd.conf": "[Agent]\nInbox=/PLACEHOLDER/drop\nStateDirectory=/PLACEHOLDER/kept\n",
            "config/inboxd/handlers.d/test.user-instance.handler":
                "[Handler]\nExec=/bin/true\n[DocumentType]\nContentTypes=public.plain-text\n",
        ])
        defer { try? FileManager.default.removeItem(at: home) }
        // The configuration names directories in this scratch home, which is only known now.
        let conf = home.appendingPathComponent("config/inboxd/inboxd.conf")
        try String(contentsOf: conf, encoding: .utf8).replacingOccurrences(of: "/PLACEHOLDER", with: home.path)
            .write(to: conf, atomically: false, encoding: .utf8)
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/config",
                           "XDG_RUNTIME_DIR": home.path + "/run", "PATH": "/usr/bin:/bin"]
        try FileManager.default.createDirectory(atPath: home.path + "/run", withIntermediateDirectories: true)
        _ = try run("/bin/chown", ["65534:65534", home.path + "/run"])

        let agent = try Self.startAgent(environment)
        defer { if agent.isRunning { agent.terminate(); agent.waitUntilExit() } }
        let status = home.path + "/run/inboxd/status.json"
        try waitUntil("the user instance is ready") { FileManager.default.fileExists(atPath: status) }
        let text = try String(contentsOfFile: status, encoding: .utf8)
        #expect(text.contains("\"inboxes\":[\"\(home.path)/drop\"]"), "\(text)")
        #expect(text.contains("\"stateDirectory\":\"\(home.path)/kept\""), "\(text)")

        // The same user's inboxctl, with the same session and no flags, sees the same agent and registrations.
        let inboxctl = try run("/usr/bin/setpriv", Self.asNobody + [Binaries.inboxctl.path, "status", "--json"],
                               environment: environment)
        #expect(inboxctl.status == 0, "\(inboxctl.stderr)")
        #expect(inboxctl.stdout.contains("\"pid\":\(agent.processIdentifier)"), "\(inboxctl.stdout)")
        let handlers = try run("/usr/bin/setpriv", Self.asNobody + [Binaries.inboxctl.path, "handlers"],
                               environment: environment)
        #expect(handlers.stdout.contains("test.user-instance"), "\(handlers.stdout)\(handlers.stderr)")

        agent.terminate()
        agent.waitUntilExit()
        #expect(agent.terminationStatus == 0)
    }

    @Test func withoutARuntimeDirectoryTheStatusFileGoesToTheState() throws {
        let home = try Self.home([:])
        defer { try? FileManager.default.removeItem(at: home) }
        let agent = try Self.startAgent(["HOME": home.path, "PATH": "/usr/bin:/bin"])
        defer { if agent.isRunning { agent.terminate(); agent.waitUntilExit() } }
        let status = home.path + "/.local/state/inboxd/run/status.json"
        try waitUntil("the user instance is ready") { FileManager.default.fileExists(atPath: status) }
        #expect(try String(contentsOfFile: status, encoding: .utf8)
            .contains("\"inboxes\":[\"\(home.path)/.local/share/inboxd/Inbox\"]"))
        agent.terminate()
        agent.waitUntilExit()
        #expect(agent.terminationStatus == 0)
    }
}
