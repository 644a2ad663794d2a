import Foundation
import Testing

/// `inboxctl preview`: a Role=Viewer handler shows files, read-only, nothing consumed.
@Suite(.serialized, .enabled(if: LandlockAvailability.available, "the kernel has no Landlock"),
       .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxctlPreviewTests {
    /// A viewer that reports who it is and what it was told, then tries everything a viewer may not do.
    static let probe = """
        echo "item $INBOX_PREVIEW_INDEX/$INBOX_PREVIEW_COUNT title=$INBOX_TITLE preview=$INBOX_PREVIEW uid=$(id -u)"
        echo "name=$INBOX_NAME type=$INBOX_CONTENT_TYPE handler=$INBOX_HANDLER"
        echo "content=$(cat "$INBOX_FILE")"
        echo "stdin=$(cat)"
        rm -f "$INBOX_FILE" 2>/dev/null && echo "rm=allowed" || echo "rm=denied"
        (echo more >>"$INBOX_FILE") 2>/dev/null && echo "append=allowed" || echo "append=denied"
        mv "$INBOX_FILE" "$INBOX_FILE.moved" 2>/dev/null && echo "mv=allowed" || echo "mv=denied"
        (echo kept >"$OUTPUT_DIR/kept") 2>/dev/null && echo "output=allowed" || echo "output=denied"
        echo scratch >"$TMPDIR/scratch" && [ "$TMPDIR" = "$INBOX_DOCUMENTS" ] && echo "tmp=allowed"
        echo "tmpdir=$TMPDIR"
        """

    func world() throws -> (AgentHarness, viewer: String) {
        let world = try AgentHarness()
        let viewer = "test.viewer.\(world.tag)"
        let script = try world.script("viewer", Self.probe)
        try world.register(viewer, exec: script.path, contentTypes: "public.plain-text")
        return (world, viewer)
    }

    func lines(_ text: String, _ prefix: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    @Test func aViewerShowsSeveralFilesWithTheirTitlesAndCannotChangeThem() throws {
        let (world, viewer) = try world()
        try world.start()
        let first = world.root.appendingPathComponent("first.txt"), second = world.root.appendingPathComponent("second.txt")
        try Data("one\n".utf8).write(to: first)
        try Data("two\n".utf8).write(to: second)
        let result = try world.inboxctl("preview", ["--title", "The first", first.path, second.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let items = lines(result.stdout, "item ")
        #expect(items.count == 2)
        #expect(items.first?.hasPrefix("item 1/2 title=The first preview=1 uid=") == true)
        #expect(items.last?.hasPrefix("item 2/2 title=second.txt preview=1 uid=") == true)
        if geteuid() == 0 {
            // As root the viewer runs as the identity the agent gives the handler, never as root.
            #expect(!items.contains { $0.hasSuffix(" uid=0") })
        }
        #expect(lines(result.stdout, "name=") == ["name=first.txt type=public.plain-text handler=\(viewer)",
                                                  "name=second.txt type=public.plain-text handler=\(viewer)"])
        #expect(lines(result.stdout, "content=") == ["content=one", "content=two"])
        let stdin = lines(result.stdout, "stdin=")
        #expect(stdin.first?.contains(#""preview":{"title":"The first","index":1,"count":2}"#) == true)
        for probe in ["rm=denied", "append=denied", "mv=denied", "output=denied", "tmp=allowed"] {
            #expect(lines(result.stdout, probe).count == 2, "\(probe): \(result.stdout)")
        }
        // Nothing consumed, nothing left: the files as they were, the scratch directories gone, the agent untouched.
        #expect(try String(contentsOf: first, encoding: .utf8) == "one\n")
        #expect(try String(contentsOf: second, encoding: .utf8) == "two\n")
        for line in lines(result.stdout, "tmpdir=") {
            let scratch = URL(fileURLWithPath: String(line.dropFirst("tmpdir=".count))).deletingLastPathComponent()
            #expect(!FileManager.default.fileExists(atPath: scratch.path))
        }
        #expect(world.allEntries(of: world.output).isEmpty)
        #expect(world.journal(["INBOX_EVENT=finished"]).isEmpty)
        #expect(world.allEntries(of: world.inbox).isEmpty)
    }

    @Test func onlyViewersPreview() throws {
        let (world, viewer) = try world()
        let editor = "test.editor.\(world.tag)"
        let text = world.registrationText(editor, exec: "/bin/true", contentTypes: "public.png", rank: "Owner")
            .replacingOccurrences(of: "Rank=Owner", with: "Rank=Owner\nRole=Editor")
        try world.write(text, to: world.handlerFile(editor))
        let photo = world.root.appendingPathComponent("photo.png")
        try Data(pngBytes(width: 2, height: 2)).write(to: photo)
        let none = try world.inboxctl("preview", [photo.path])
        #expect(none.status == 1)
        #expect(none.stderr == "inboxctl: no viewer for \(photo.path) (public.png): no handler has Role=Viewer for it\n")

        let note = world.root.appendingPathComponent("note.txt")
        try Data("note\n".utf8).write(to: note)
        let notViewer = try world.inboxctl("preview", ["--with", editor, note.path])
        #expect(notViewer.status == 1)
        #expect(notViewer.stderr.hasPrefix("inboxctl: \(editor) is not a viewer of \(note.path) (public.plain-text); "
                                           + "the viewers that are, best first:\n  * 1  \(viewer)"))
        let tooManyTitles = try world.inboxctl("preview", ["--title", "a", "--title", "b", note.path])
        #expect(tooManyTitles.status == 2)
        #expect(tooManyTitles.stderr.hasPrefix("Error: 2 titles for 1 file\n"))
    }

    @Test func aViewerIsStoppedAtItsTimeout() throws {
        let world = try AgentHarness()
        let viewer = "test.slow.\(world.tag)"
        let script = try world.script("slow", "echo started; sleep 30 & wait")
        try world.register(viewer, exec: script.path, contentTypes: "public.plain-text", extraHandler: "TimeoutSec=1")
        let note = world.root.appendingPathComponent("note.txt")
        try Data("note\n".utf8).write(to: note)
        let started = Date()
        let result = try world.inboxctl("preview", [note.path])
        #expect(result.status == 1)
        #expect(result.stdout == "started\n")
        #expect(result.stderr == "inboxctl: \(viewer) was stopped after 1.0 seconds showing \(note.path) (TimeoutSec=)\n")
        #expect(Date().timeIntervalSince(started) < 10)
        // The viewer's whole process group went with it.
        let left = try run("/usr/bin/pgrep", ["-f", script.path])
        #expect(left.stdout.isEmpty)
    }

    @Test func anInterruptedPreviewStopsItsViewerAndCleansUp() throws {
        let world = try AgentHarness()
        let script = try world.script("slow", "echo started; sleep 30 & wait")
        try world.register("test.slow.\(world.tag)", exec: script.path, contentTypes: "public.plain-text")
        let note = world.root.appendingPathComponent("note.txt")
        try Data("note\n".utf8).write(to: note)
        let scratchBase = world.root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: scratchBase, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = Binaries.inboxctl
        process.arguments = ["preview", "--handlers", world.handlers.path, "--state", world.state.path, note.path]
        process.environment = ["TMPDIR": scratchBase.path, "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(String(decoding: out.fileHandleForReading.readData(ofLength: 8), as: UTF8.self) == "started\n")
        #expect(kill(process.processIdentifier, SIGINT) == 0)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGINT)
        #expect(try run("/usr/bin/pgrep", ["-f", script.path]).stdout.isEmpty)
        #expect(world.allEntries(of: scratchBase).isEmpty)
        #expect(try String(contentsOf: note, encoding: .utf8) == "note\n")
    }

    /// An ordinary user's viewer runs as that user on the file in place: Landlock, not permissions, keeps the file.
    @Test(.enabled(if: nobodyCanRunTheAgent, "the built inboxctl is not executable by nobody (uid 65534) from here"))
    func anOrdinaryUsersViewerCannotRemoveItsOwnFileAndAChmodIsReported() throws {
        let (world, _) = try world()
        let home = world.root.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let note = home.appendingPathComponent("note.txt")
        try Data("mine\n".utf8).write(to: note)
        for path in [home.path, note.path] { #expect(chown(path, 65534, 65534) == 0) }
        func preview() throws -> (status: Int32, stdout: String, stderr: String) {
            try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "-i",
                                         "HOME=\(home.path)", "PATH=/usr/bin:/bin", Binaries.inboxctl.path, "preview",
                                         "--handlers", world.handlers.path, "--state", home.path + "/state", note.path])
        }
        let shown = try preview()
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(lines(shown.stdout, "item 1/1 title=note.txt preview=1 uid=65534").count == 1, "\(shown.stdout)")
        #expect(lines(shown.stdout, "rm=denied").count == 1)
        #expect(lines(shown.stdout, "append=denied").count == 1)
        #expect(lines(shown.stdout, "mv=denied").count == 1)
        #expect(try String(contentsOf: note, encoding: .utf8) == "mine\n")

        // Its owner may chmod it, which Landlock does not cover: the change is found and reported.
        try world.script("viewer", "chmod 0600 \"$INBOX_FILE\"")
        let changed = try preview()
        #expect(changed.status == 1)
        #expect(changed.stderr.hasPrefix("inboxctl: test.viewer.\(world.tag) changed \(note.path), which it may only read: change time"))
        #expect(FileManager.default.fileExists(atPath: note.path))
    }
}
