import Foundation
import InboxCore
import InboxSystem
import Testing

/// The two instances' built-in places (docs/design.md, Directories): the system's as root, the XDG base
/// directories for anyone else, and a user's agent reads its own inboxd.conf and defaults.conf, never the system's.
struct InstanceSettingsTests {
    /// A scratch $HOME with the given files under it (paths relative to it), removed by the caller.
    static func home(_ files: [String: String] = [:]) throws -> URL {
        let home = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-instance-\(UUID().uuidString)")
        for (path, text) in files {
            let file = home.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        return home
    }

    @Test func theSystemInstanceUsesTheFHSPlaces() {
        let defaults = AgentSettings.defaults(environment: ["HOME": "/root", "XDG_RUNTIME_DIR": "/run/user/0"], isRoot: true)
        #expect(defaults == InstanceDefaults(
            inbox: "/var/spool/inboxd/Inbox", state: "/var/lib/inboxd", runtime: "/run/inboxd",
            handlers: ["/etc/inboxd/handlers.d", "/run/inboxd/handlers.d", "/usr/lib/inboxd/handlers.d"],
            configFile: "/etc/inboxd/inboxd.conf", preferencesFile: "/etc/inboxd/defaults.conf"))
    }

    @Test(arguments: [
        // Every variable set: each place follows its own.
        (["HOME": "/home/a", "XDG_DATA_HOME": "/d", "XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c",
          "XDG_RUNTIME_DIR": "/run/user/1000"],
         InstanceDefaults(inbox: "/d/inboxd/Inbox", state: "/s/inboxd", runtime: "/run/user/1000/inboxd",
                          handlers: ["/c/inboxd/handlers.d"] + AgentSettings.systemHandlerDirectories,
                          configFile: "/c/inboxd/inboxd.conf", preferencesFile: "/c/inboxd/defaults.conf")),
        // Only HOME (a session without XDG_RUNTIME_DIR, such as su or cron): the status file goes to the state.
        (["HOME": "/home/a"],
         InstanceDefaults(inbox: "/home/a/.local/share/inboxd/Inbox", state: "/home/a/.local/state/inboxd",
                          runtime: "/home/a/.local/state/inboxd/run",
                          handlers: ["/home/a/.config/inboxd/handlers.d"] + AgentSettings.systemHandlerDirectories,
                          configFile: "/home/a/.config/inboxd/inboxd.conf",
                          preferencesFile: "/home/a/.config/inboxd/defaults.conf")),
        // Relative or empty values are ignored, as the XDG Base Directory specification says.
        (["HOME": "/home/a", "XDG_CONFIG_HOME": "config", "XDG_RUNTIME_DIR": "", "XDG_STATE_HOME": "./s"],
         InstanceDefaults(inbox: "/home/a/.local/share/inboxd/Inbox", state: "/home/a/.local/state/inboxd",
                          runtime: "/home/a/.local/state/inboxd/run",
                          handlers: ["/home/a/.config/inboxd/handlers.d"] + AgentSettings.systemHandlerDirectories,
                          configFile: "/home/a/.config/inboxd/inboxd.conf",
                          preferencesFile: "/home/a/.config/inboxd/defaults.conf")),
    ] as [([String: String], InstanceDefaults)])
    func aUserInstanceUsesTheXDGPlaces(environment: [String: String], expected: InstanceDefaults) {
        #expect(AgentSettings.defaults(environment: environment, isRoot: false) == expected)
    }

    @Test func aUserInstanceReadsNothingOfTheSystemsConfiguration() {
        let defaults = AgentSettings.defaults(environment: ["HOME": "/home/a"], isRoot: false)
        for path in [defaults.inbox, defaults.state, defaults.runtime, defaults.configFile, defaults.preferencesFile] {
            #expect(path.hasPrefix("/home/a/"), "\(path)")
        }
    }

    @Test func aUsersInboxdConfIsRead() throws {
        let home = try Self.home(["config/inboxd/inboxd.conf": "[Agent]\nInbox=/srv/drop\nMaxConcurrent=3\n"])
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/config"]
        let (settings, diagnostics) = SettingsResolver.resolve(SettingsOverrides(), environment: environment, isRoot: false)
        #expect(diagnostics.isEmpty)
        let resolved = try settings.get()
        #expect(resolved.inboxes == ["/srv/drop"])
        #expect(resolved.maxConcurrent == 3)
        #expect(resolved.defaultsFile == home.path + "/config/inboxd/defaults.conf")
        #expect(resolved.handlerDirectories.first == home.path + "/config/inboxd/handlers.d")
    }

    @Test func anErrorInAUsersInboxdConfNamesThatFile() throws {
        let home = try Self.home([".config/inboxd/inboxd.conf": "[Agent]\nMaxConcurrent=many\n"])
        defer { try? FileManager.default.removeItem(at: home) }
        let (settings, diagnostics) = SettingsResolver.resolve(SettingsOverrides(), environment: ["HOME": home.path],
                                                               isRoot: false)
        let path = home.path + "/.config/inboxd/inboxd.conf"
        #expect(throws: SettingsResolver.ResolveError.self) { try settings.get() }
        #expect(diagnostics.contains { $0.isError && $0.description.hasPrefix(path + ":2: ") }, "\(diagnostics)")
    }

    @Test func withoutAUsersInboxdConfTheDefaultsHold() throws {
        let home = try Self.home()
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["HOME": home.path, "XDG_RUNTIME_DIR": home.path + "/run"]
        let (settings, diagnostics) = SettingsResolver.resolve(SettingsOverrides(), environment: environment, isRoot: false)
        #expect(diagnostics.isEmpty)
        let resolved = try settings.get()
        #expect(resolved.inboxes == [home.path + "/.local/share/inboxd/Inbox"])
        #expect(resolved.stateDirectory == home.path + "/.local/state/inboxd")
        #expect(resolved.runtimeDirectory == home.path + "/run/inboxd")
    }

    @Test func flagsStillWinOverTheUsersFile() throws {
        let home = try Self.home([".config/inboxd/inboxd.conf": "[Agent]\nInbox=/srv/drop\n"])
        defer { try? FileManager.default.removeItem(at: home) }
        var overrides = SettingsOverrides()
        overrides.inboxes = ["/srv/other"]
        overrides.runtimeDirectory = "/srv/run"
        let resolved = try SettingsResolver.resolve(overrides, environment: ["HOME": home.path], isRoot: false).settings.get()
        #expect(resolved.inboxes == ["/srv/other"])
        #expect(resolved.runtimeDirectory == "/srv/run")
    }
}
