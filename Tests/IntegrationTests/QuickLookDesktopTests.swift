import Foundation
import Testing

/// `inboxctl preview` in a desktop session: the document goes to the desktop's own viewer for its type through the
/// real xdg-open, which finds it the desktop's way (mimeapps.list and a .desktop file in the test's own XDG
/// directories); `--terminal` keeps it here.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/xdg-open")
                              || ProcessInfo.processInfo.environment["CI"] == "true",
                             "xdg-open is not installed (xdg-utils)"))
struct QuickLookDesktopTests: InspectsWorkspace {
    let workspace: InspectWorkspace

    init() throws { workspace = try InspectWorkspace() }

    /// A desktop of the test's own: `recorder.desktop` is the default application for `mimeType`, and writes the
    /// path it was given to `record`.
    func desktop(handling mimeType: String) throws -> (environment: [String: String], record: URL) {
        let record = directory.appendingPathComponent("record")
        let recorder = try write("recorder", "#!/bin/sh\necho \"$1\" >\(record.path).part && mv \(record.path).part \(record.path)\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: recorder.path)
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
                           "TMPDIR": NSTemporaryDirectory()]
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
        let shown = try inboxctl(["preview", note.path] + agentOptions, environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.isEmpty, "\(shown.stdout)")
        #expect(waitFor(record) == note.path + "\n")
    }

    @Test func terminalKeepsThePreviewHere() throws {
        let (environment, record) = try desktop(handling: "text/plain")
        let note = try write("note.txt", "Minutes of Monday\n")
        let shown = try inboxctl(["preview", "--terminal", note.path] + agentOptions, environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout == "[1/1] note.txt\nMinutes of Monday\n", "\(shown.stdout)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(!FileManager.default.fileExists(atPath: record.path))
    }

    @Test func aTypeTheDesktopHasNoViewerForIsAnError() throws {
        let (environment, _) = try desktop(handling: "application/x-inboxd-nothing")
        let note = try write("note.txt", "Minutes of Monday\n")
        let shown = try inboxctl(["preview", note.path] + agentOptions, environment: environment)
        #expect(shown.status == 1)
        #expect(shown.stderr.contains("inboxctl: cannot preview \(note.path): xdg-open exited with status"),
                "\(shown.stderr)")
    }
}
