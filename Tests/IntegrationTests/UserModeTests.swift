import Foundation
import Testing

/// An agent started by an ordinary user, with no flags: the XDG directories of DESIGN.md.
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
}
