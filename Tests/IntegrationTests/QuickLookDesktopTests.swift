import Foundation
import Testing

/// `inboxctl preview` in a desktop session: the document goes to the desktop's own viewer for its type through the
/// real xdg-open, which finds it the desktop's way (mimeapps.list and a .desktop file in the test's own XDG
/// directories); `--terminal` keeps it here.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/xdg-open")
                              || ProcessInfo.processInfo.environment["CI"] == "true",
                             "xdg-open is not installed (xdg-utils)"),
       .enabled(if: getuid() != 0 || nobodyCanRunTheAgent,
                "as root the desktop is never asked; nobody (uid 65534) cannot run the built inboxctl from here"))
struct QuickLookDesktopTests: InspectsWorkspace {
    let workspace: InspectWorkspace

    init() throws {
        workspace = try InspectWorkspace()
        // As root the test runs inboxctl as nobody (root's previews never go to a desktop): the workspace is theirs too.
        _ = chmod(workspace.directory.path, 0o777)
    }

    /// inboxctl with exactly `environment`, as the caller, or as nobody when the caller is root.
    func preview(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let all = ["preview"] + arguments + agentOptions
        guard getuid() == 0 else { return try inboxctl(all, environment: environment) }
        return try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "-i"]
                       + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                       + [Binaries.inboxctl.path] + all)
    }

    /// A desktop of the test's own: `recorder.desktop` is the default application for `mimeType`, and writes the
    /// path it was given to `record`.
    func desktop(handling mimeType: String) throws -> (environment: [String: String], record: URL) {
        let record = directory.appendingPathComponent("record")
        let recorder = try write("recorder", "#!/bin/sh\necho \"$1\" >\(record.path).part && mv \(record.path).part \(record.path)\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: recorder.path)
        for file in ["inboxd.conf"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory.appendingPathComponent(file).path)
        }
        let applications = directory.appendingPathComponent("data/applications")
        let config = directory.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        _ = try write("recorder.desktop", """
            [Desktop Entry]
            Type=Application
            Name=Recorder
            Exec=\(recorder.path) %f
            MimeType=\(mimeType);

            """, in: applications)
        _ = try write("mimeapps.list", "[Default Applications]\n\(mimeType)=recorder.desktop\n", in: config)
        let environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "DISPLAY": ":99",
                           "XDG_DATA_HOME": directory.appendingPathComponent("data").path,
                           "XDG_CONFIG_HOME": config.path, "XDG_DATA_DIRS": "/usr/share",
                           "TMPDIR": directory.path]
        return (environment, record)
    }

    func waitFor(_ url: URL, seconds: Double = 10) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let text = try? String(contentsOf: url, encoding: .utf8) { return text }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    @Test func aDesktopSessionHandsTheFileToItsViewer() throws {
        let (environment, record) = try desktop(handling: "text/plain")
        let note = try write("note.txt", "Minutes of Monday\n")
        let shown = try preview([note.path], environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.isEmpty, "\(shown.stdout)")
        #expect(waitFor(record) == note.path + "\n")
    }

    @Test func terminalKeepsThePreviewHere() throws {
        let (environment, record) = try desktop(handling: "text/plain")
        let note = try write("note.txt", "Minutes of Monday\n")
        let shown = try preview(["--terminal", note.path], environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout == "[1/1] note.txt\nMinutes of Monday\n", "\(shown.stdout)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(!FileManager.default.fileExists(atPath: record.path))
    }

    @Test func aTypeTheDesktopHasNoViewerForIsAnError() throws {
        let (environment, _) = try desktop(handling: "application/x-inboxd-nothing")
        let note = try write("note.txt", "Minutes of Monday\n")
        let shown = try preview([note.path], environment: environment)
        #expect(shown.status == 1)
        #expect(shown.stderr.contains("inboxctl: cannot preview \(note.path): xdg-open exited with status"),
                "\(shown.stderr)")
    }
}
