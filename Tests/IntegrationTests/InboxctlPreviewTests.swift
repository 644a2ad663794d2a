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
        // No viewer: the Editor is not asked; the built-in preview shows it (written out: stdout is no terminal).
        let none = try world.inboxctl("preview", [photo.path])
        #expect(none.stdout.hasPrefix("[1/1] photo.png\n"), "\(none.stdout)")
        #expect(!none.stderr.contains(editor), "\(none.stderr)")
        #expect(world.allEntries(of: world.output).isEmpty)

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

    // MARK: Every kind of viewer, and viewers that cannot be started

    /// A resident viewer (Activation=resident) in Python: prints what it is told and answers ANSWER (default done).
    static let residentViewer = """
        #!/usr/bin/python3
        import json, os, socket
        print(f"started listen={os.environ.get('LISTEN_FDNAMES')} preview={os.environ.get('INBOX_PREVIEW')} "
              f"pid-ok={os.environ.get('LISTEN_PID') == str(os.getpid())}", flush=True)
        sock = socket.socket(fileno=3)
        while True:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 18, 4)
            if not message:
                print("eof", flush=True)
                break
            d = json.loads(message)
            data = os.read(fds[0], 4096).decode().strip()
            try:
                os.write(fds[0], b"x")
                wrote = "yes"
            except OSError:
                wrote = "no"
            print(f"got {d['name']} title={d['preview']['title']} content={data} wrote={wrote}", flush=True)
            sock.send(json.dumps({"deliveryID": d["deliveryID"], "result": os.environ.get("ANSWER", "done"),
                                  "reason": "as told"}).encode())

        """

    func residentViewer(_ world: AgentHarness, _ identifier: String, extra: String = "") throws {
        let program = world.root.appendingPathComponent("resident-viewer")
        try Self.residentViewer.write(to: program, atomically: true, encoding: .utf8)
        chmod(program.path, 0o755)
        try world.register(identifier, exec: program.path, contentTypes: "public.plain-text",
                           extraHandler: "Activation=resident\n" + extra)
    }

    func note(_ world: AgentHarness) throws -> URL {
        let note = world.root.appendingPathComponent("note.txt")
        try Data("hello\n".utf8).write(to: note)
        return note
    }

    /// A resident viewer is served as the agent serves one: started with its socket as fd 3, sent the file as one
    /// delivery with a read-only descriptor, told to exit once it has answered.
    @Test func aResidentViewerIsStartedSentTheFileAndToldToExit() throws {
        let world = try AgentHarness()
        let viewer = "test.resident.\(world.tag)"
        try residentViewer(world, viewer)
        let note = try note(world)
        let result = try world.inboxctl("preview", ["--title", "A note", note.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(result.stdout == "started listen=inbox preview=1 pid-ok=True\n"
                + "got note.txt title=A note content=hello wrote=no\neof\n")
        #expect(try String(contentsOf: note, encoding: .utf8) == "hello\n")

        // An answer other than done is the viewer's failure.
        try residentViewer(world, viewer, extra: "Environment=ANSWER=failed")
        let failed = try world.inboxctl("preview", [note.path])
        #expect(failed.status == 1)
        #expect(failed.stderr == "inboxctl: \(viewer) answered failed (as told) showing \(note.path)\n")
    }

    /// The shipped resident example, registered as a viewer of plain text, previews a file (it used to exit with
    /// "not started by inboxd as a resident handler").
    @Test func theShippedResidentExamplePreviews() throws {
        let world = try AgentHarness()
        let repository = ExampleHandlersTests.repository
        let program = world.root.appendingPathComponent("text-checksum")
        try FileManager.default.copyItem(at: repository.appendingPathComponent("handlers.d/bin/text-checksum"), to: program)
        chmod(program.path, 0o755)
        let text = try String(contentsOf: repository.appendingPathComponent("handlers.d/com.example.text-checksum.handler"),
                              encoding: .utf8).replacingOccurrences(of: "@HANDLERS_BIN@/text-checksum", with: program.path)
        try world.write(text, to: world.handlers.appendingPathComponent("com.example.text-checksum.handler"))
        let note = try note(world)
        let result = try world.inboxctl("preview", [note.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
    }

    /// Exec= with %F is run as a batch of one, as the agent runs it: the file as the list, a JSON array on stdin.
    @Test func aBatchViewerGetsABatchOfOne() throws {
        let world = try AgentHarness()
        let script = try world.script("batch", """
            echo "args=$# $1 size=$INBOX_BATCH_SIZE preview=$INBOX_PREVIEW file=${INBOX_FILE:-none}"
            echo "stdin=$(cat)"
            """)
        try world.register("test.batch.\(world.tag)", exec: "\(script.path) %F", contentTypes: "public.plain-text")
        let note = try note(world)
        let result = try world.inboxctl("preview", [note.path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        // The file itself, or (as root) its read-only copy.
        #expect(lines.first?.hasPrefix("args=1 /") == true && lines.first?.hasSuffix("/note.txt size=1 preview=1 file=none") == true,
                "\(result.stdout)")
        #expect(lines.last?.hasPrefix("stdin=[{") == true && lines.last?.hasSuffix("}]") == true, "\(result.stdout)")
        #expect(lines.last?.contains(#""preview":{"title":"note.txt","index":1,"count":1}"#) == true)
    }

    /// The best viewer cannot be started (its program is missing; as root, also its User= is): a note, then the next
    /// viewer shows the file. With --with it is the error; with none left, one error lists what was tried.
    @Test(arguments: ["Exec=/nonexistent/viewer %f"] + (geteuid() == 0 ? ["User=inboxd-no-such-user"] : []))
    func aViewerThatCannotStartIsPassedOverForTheNext(broken: String) throws {
        let (world, viewer) = try world()
        let best = "test.broken.\(world.tag)"
        var text = world.registrationText(best, exec: "/bin/true %f", contentTypes: "public.plain-text", rank: "Owner")
        if broken.hasPrefix("Exec=") {
            text = text.replacingOccurrences(of: "Exec=/bin/true %f", with: broken)
        } else {
            text = text.replacingOccurrences(of: "[DocumentType]", with: broken + "\n\n[DocumentType]")
        }
        try world.write(text, to: world.handlerFile(best))
        let note = try note(world)
        let shown = try world.inboxctl("preview", [note.path])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stderr.hasPrefix("inboxctl: cannot show \(note.path) with \(best): "), "\(shown.stderr)")
        #expect(shown.stderr.hasSuffix("; trying \(viewer)\n"), "\(shown.stderr)")
        #expect(shown.stderr.split(separator: "\n").count == 1)
        #expect(lines(shown.stdout, "content=") == ["content=hello"])

        let chosen = try world.inboxctl("preview", ["--with", best, note.path])
        #expect(chosen.status == 1)
        #expect(chosen.stdout.isEmpty)
        #expect(chosen.stderr.hasPrefix("inboxctl: cannot show \(note.path) with \(best): "), "\(chosen.stderr)")
        #expect(chosen.stderr.split(separator: "\n").count == 1)

        try FileManager.default.removeItem(at: world.handlerFile(viewer))
        let second = "test.broken2.\(world.tag)"
        try world.write(world.registrationText(second, exec: "/nonexistent/other %f", contentTypes: "public.plain-text"),
                        to: world.handlerFile(second))
        // No registered viewer starts: after saying which were tried and why, the built-in preview shows it.
        let none = try world.inboxctl("preview", [note.path])
        #expect(none.status == 0, "\(none.stderr)")
        #expect(none.stdout == "[1/1] note.txt\nhello\n", "\(none.stdout)")
        let last = Array(none.stderr.split(separator: "\n").map(String.init).drop { !$0.hasPrefix("inboxctl: no registered") })
        #expect(last.first == "inboxctl: no registered viewer could show \(note.path) (public.plain-text); tried, best first:",
                "\(none.stderr)")
        #expect(last.dropFirst().dropLast().map { $0.prefix { $0 != ":" } } == ["  \(best)", "  \(second)"],
                "\(none.stderr)")
        #expect(last.dropLast().last?.contains("execve /nonexistent/other: No such file or directory") == true,
                "\(none.stderr)")
        #expect(last.last == "inboxctl: showing the built-in preview of \(note.path)", "\(none.stderr)")
    }
}
