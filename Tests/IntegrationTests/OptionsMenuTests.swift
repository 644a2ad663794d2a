import Foundation
import Testing

/// `inboxctl options FILE`, the options menu, as a person meets it: on a real terminal (tmux) with two viewers
/// registered and a private cupsd's queue, dismissed with q and Escape, a key that opens the file in a handler the real
/// agent then runs; `--do` copying into a directory (never over a file, never through a link), printing into the queue,
/// onto an X server's clipboard (Xvfb, read back with xclip); `--json`; an empty menu; and `inboxctl open FILE` showing
/// its Open In list on the terminal.
@Suite(.serialized)
struct OptionsMenuTests {
    /// An Owner viewer for PNG and an Alternate viewer for any image (the harness's recording handler: both Viewers).
    struct World {
        let agent: AgentHarness
        let owner: String
        let alternate: String
        let config: URL
        /// A socket no CUPS server listens on: no printer unless a test starts one.
        var noPrinter: String { agent.root.appendingPathComponent("no-cups.sock").path }

        init() throws {
            agent = try AgentHarness()
            owner = "test.png-viewer.\(agent.tag)"
            alternate = "test.image-viewer.\(agent.tag)"
            try agent.register(owner, contentTypes: "public.png", rank: "Owner")
            try agent.register(alternate, contentTypes: "public.image", rank: "Alternate")
            config = agent.root.appendingPathComponent("inboxd.conf")
            try "".write(to: config, atomically: true, encoding: .utf8)
        }

        /// The agent's options, as the agent itself gets them (`start`).
        var options: [String] {
            ["--inbox", agent.inbox.path, "--handlers", agent.handlers.path, "--state", agent.state.path,
             "--runtime-dir", agent.runtime.path, "--defaults", agent.root.appendingPathComponent("defaults.conf").path,
             "--config", config.path]
        }

        func start() throws { try agent.start(config: "") }

        /// A PNG in the world's root, outside the Inbox.
        func photo(_ name: String = "photo.png") throws -> URL {
            let url = agent.root.appendingPathComponent(name)
            try Data(pngBytes(width: 4, height: 4)).write(to: url)
            return url
        }

        func file(_ name: String, _ bytes: [UInt8]) throws -> URL {
            let url = agent.root.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url
        }

        func directory(_ name: String) throws -> URL {
            let url = agent.root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }

        /// The test's environment with no desktop session, no default printer, and `cups` as the CUPS server.
        func environment(cups: String? = nil, display: String? = nil) -> [String: String] {
            var environment = ProcessInfo.processInfo.environment
            for key in ["DISPLAY", "WAYLAND_DISPLAY", "PRINTER", "LPDEST"] { environment.removeValue(forKey: key) }
            environment["CUPS_SERVER"] = cups ?? noPrinter
            if let display {
                environment["DISPLAY"] = display
                // No cookie of this user's: Xvfb without -auth takes any local client.
                environment["XAUTHORITY"] = agent.root.appendingPathComponent("no-xauthority").path
            }
            return environment
        }

        func inboxctl(_ arguments: [String], cups: String? = nil, display: String? = nil) throws
            -> (status: Int32, stdout: String, stderr: String) {
            try run(Binaries.inboxctl.path, arguments + options, environment: environment(cups: cups, display: display))
        }

        /// `inboxctl ARGUMENTS` on a terminal of its own, its exit status printed after it.
        func terminal(_ arguments: [String], cups: String? = nil) throws -> Terminal {
            try Terminal(agent, "env -u DISPLAY -u WAYLAND_DISPLAY -u PRINTER -u LPDEST CUPS_SERVER="
                         + shellQuoted(cups ?? noPrinter) + " inboxctl "
                         + (arguments + options).map(shellQuoted).joined(separator: " ") + "; echo status=$?")
        }

        /// `--json`'s document.
        func menu(_ arguments: [String], cups: String? = nil, display: String? = nil) throws -> [String: Any] {
            let result = try inboxctl(["options", "--json"] + arguments, cups: cups, display: display)
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        }
    }

    static func actions(_ menu: [String: Any]) -> [[String: Any]] { menu["actions"] as? [[String: Any]] ?? [] }

    // MARK: The menu

    @Test(.enabled(if: PrintServer.available || PrintServer.required, Comment(rawValue: PrintServer.missing)))
    func aPictureWithTwoViewersAndAPrinterHasEveryItem() throws {
        try #require(PrintServer.available, "CI=true: cupsd must be installed (\(PrintServer.missing))")
        let world = try World()
        let server = try PrintServer()
        try server.addQueue("q")
        let photo = try world.photo(), copies = try world.directory("copies")
        let arguments = [photo.path, "--printer", "q", "--to", copies.path]

        let menu = try world.menu(arguments, cups: server.socket)
        #expect(menu["file"] as? String == photo.path)
        #expect(menu["type"] as? String == "public.png")
        let actions = Self.actions(menu)
        #expect(actions.map { $0["action"] as? String } == ["quicklook", "open", "open", "print", "copy", "send"],
                "\(actions)")
        #expect(actions.first?["viewer"] as? String == world.owner)
        #expect(actions.first?["generator"] as? String == "image")
        #expect(actions[safe: 1]?["handler"] as? String == world.owner)
        #expect(actions[safe: 1]?["do"] as? String == "open=\(world.owner)")
        #expect(actions[safe: 1]?["position"] as? Int == 1)
        #expect(actions[safe: 1]?["rank"] as? String == "Owner")
        #expect(actions[safe: 1]?["reason"] as? String == "Owner for public.png, distance 0; chosen: rank Owner")
        #expect(actions[safe: 2]?["handler"] as? String == world.alternate)
        #expect(actions[safe: 2]?["rank"] as? String == "Alternate")
        #expect(actions[safe: 2]?["reason"] as? String == "Alternate for public.image, distance 1")
        #expect(actions[safe: 3]?["destination"] as? String == "q")
        #expect(actions[safe: 3]?["format"] as? String == "image/png" || actions[safe: 3]?["convert"] != nil,
                "\(actions[safe: 3] ?? [:])")
        #expect(actions[safe: 4]?["to"] as? String == copies.path)
        #expect(actions[safe: 5]?["inbox"] as? String == world.agent.inbox.path)

        // The same menu on a terminal, numbered; q dismisses it and nothing is done.
        let terminal = try world.terminal(["options"] + arguments, cups: server.socket)
        let screen = try terminal.waitFor("Choose 1-6, or q to dismiss")
        for row in ["photo.png (public.png):", "1  Quick Look with \(world.owner)", "2  Open in \(world.owner)",
                    "3  Open in \(world.alternate)", "4  Print on q", "5  Copy to \(copies.path)",
                    "6  Send to the Inbox \(world.agent.inbox.path)"] {
            #expect(screen.contains { $0.contains(row) }, "'\(row)' not on the screen:\n\(screen.joined(separator: "\n"))")
        }
        #expect(screen.contains { $0.contains("Owner for public.png, distance 0; chosen: rank Owner") })
        try terminal.send("q")
        _ = try terminal.waitFor("status=1")
        #expect(try terminal.capture().contains { $0.contains("Dismissed.") })
        #expect(world.agent.allEntries(of: copies).isEmpty)
        #expect(world.agent.allEntries(of: world.agent.inbox).isEmpty)
        #expect(try server.lp("/usr/bin/lpstat", ["-W", "all", "-o"]).isEmpty)
    }

    @Test func qAndEscapeDismissTheMenu() throws {
        let world = try World()
        let photo = try world.photo(), copies = try world.directory("copies")
        for key in ["q", "Escape"] {
            let terminal = try world.terminal(["options", photo.path, "--to", copies.path])
            let screen = try terminal.waitFor("or q to dismiss")
            #expect(screen.contains { $0.contains("Open in \(world.owner)") }, "\(screen)")
            #expect(!screen.contains { $0.contains("Print on") }, "no printer, no Print:\n\(screen)")
            if key == "q" { try terminal.send("q") } else { try terminal.press(key) }
            _ = try terminal.waitFor("status=1")
            #expect(try terminal.capture().contains { $0.contains("Dismissed.") }, "\(key)")
        }
        #expect(world.agent.allEntries(of: copies).isEmpty)
        #expect(world.agent.allEntries(of: world.agent.inbox).isEmpty)
    }

    @Test(.enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
    func aKeyOpensTheFileInTheHandlerItNames() throws {
        let world = try World()
        try world.start()
        let photo = try world.photo()
        let terminal = try world.terminal(["options", photo.path])
        _ = try terminal.waitFor("or q to dismiss")
        try terminal.send("3")
        _ = try terminal.waitFor("status=0")
        // Sent as open --with sends it: the agent runs the handler the key named.
        let finished = try world.agent.waitForEvents("finished", ["INBOX_HANDLER=\(world.alternate)"])
        #expect(finished.first?[field: "INBOX_CHOSEN_BY"] == "sender")
        try waitUntil("the handler recorded the delivery") { world.agent.recordings().count == 1 }
        #expect(world.agent.recordings().values.first?.contains("INBOX_HANDLER=\(world.alternate)") == true)
        #expect(world.agent.events("finished", ["INBOX_HANDLER=\(world.owner)"]).isEmpty)
        // The original stays where it was: the Inbox got a copy.
        #expect(FileManager.default.fileExists(atPath: photo.path))
    }

    // MARK: --do

    @Test func copyIntoADirectoryMakesTheSameBytesAndNeverReplacesAFile() throws {
        let world = try World()
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let blob = try world.file("blob.bin", bytes), copies = try world.directory("copies")
        let copied = try world.inboxctl(["options", blob.path, "--do", "copy=\(copies.path)"])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stdout == "Copied \(blob.path) to \(copies.path)/blob.bin\n")
        #expect(try Data(contentsOf: copies.appendingPathComponent("blob.bin")) == Data(bytes))
        #expect(world.agent.allEntries(of: copies) == ["blob.bin"])

        // A file of that name is never replaced, whether it is the copy or another file.
        let again = try world.inboxctl(["options", blob.path, "--to", copies.path, "--do", "copy"])
        #expect(again.status == 1)
        #expect(again.stderr == "inboxctl: cannot copy \(blob.path): \(copies.path)/blob.bin already exists; "
                + "nothing was replaced\n")
        let other = try world.directory("other")
        try Data("someone else's\n".utf8).write(to: other.appendingPathComponent("blob.bin"))
        #expect(try world.inboxctl(["options", blob.path, "--do", "copy=\(other.path)"]).status == 1)
        #expect(try String(contentsOf: other.appendingPathComponent("blob.bin"), encoding: .utf8) == "someone else's\n")
        #expect(world.agent.allEntries(of: copies) == ["blob.bin"])
        #expect(world.agent.allEntries(of: other) == ["blob.bin"])

        // A symbolic link given as FILE is refused, as the agent refuses one: nothing is copied.
        let link = world.agent.root.appendingPathComponent("link.bin"), empty = try world.directory("empty")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: blob)
        let refused = try world.inboxctl(["options", link.path, "--do", "copy=\(empty.path)"])
        #expect(refused.status == 1)
        #expect(refused.stderr == "inboxctl: \(link.path): is a symbolic link\n")
        #expect(world.agent.allEntries(of: empty).isEmpty)
    }

    @Test(.enabled(if: PrintServer.available || PrintServer.required, Comment(rawValue: PrintServer.missing)))
    func printSendsTheFileToTheQueue() throws {
        try #require(PrintServer.available, "CI=true: cupsd must be installed (\(PrintServer.missing))")
        let world = try World()
        let server = try PrintServer()
        let output = try server.addQueue("q")
        let note = try world.file("note.txt", Array("printed from the options menu\n".utf8))
        let menu = try world.menu([note.path, "--printer", "q"], cups: server.socket)
        let printing = try #require(Self.actions(menu).first { $0["action"] as? String == "print" }, "\(menu)")
        #expect(printing["convert"] as? String == "text")
        let printed = try world.inboxctl(["options", note.path, "--do", "print=q"], cups: server.socket)
        #expect(printed.status == 0, "\(printed.stderr)")
        let text = try run("/usr/bin/pdftotext", [output.path, "-"]).stdout
        #expect(text.contains("printed from the options menu"), "\(text)")
        let info = try run("/usr/bin/pdfinfo", [output.path]).stdout
        let pages = info.split(separator: "\n").first { $0.hasPrefix("Pages:") }
            .flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) }
        #expect(pages == 1, "\(info)")
    }

    @Test func quickLookShowsWhatPreviewShows() throws {
        let world = try World()
        let note = try world.file("note.txt", Array("Café au lait\nsecond line\n".utf8))
        let menu = try world.menu([note.path])
        #expect(Self.actions(menu).first?["generator"] as? String == "text", "\(menu)")
        // Off a terminal and with no desktop session, preview writes the text out; so does Quick Look here.
        let shown = try world.inboxctl(["options", note.path, "--do", "quicklook"])
        let preview = try world.inboxctl(["preview", note.path])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Café au lait") && shown.stdout.contains("second line"), "\(shown.stdout)")
        #expect(shown.stdout == preview.stdout)
    }

    @Test func sendPutsTheFileIntoTheOtherInbox() throws {
        let world = try World()
        let photo = try world.photo()
        let sent = try world.inboxctl(["options", photo.path, "--do", "send=\(world.agent.inbox.path)/"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout == world.agent.inbox.appendingPathComponent("photo.png").path + "\n")
        #expect(try Data(contentsOf: world.agent.inbox.appendingPathComponent("photo.png")) == Data(contentsOf: photo))
        // Lying in that Inbox now, the copy there has nowhere else to go.
        let again = try world.inboxctl(["options", world.agent.inbox.appendingPathComponent("photo.png").path,
                                        "--do", "send=\(world.agent.inbox.path)"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("does not apply"), "\(again.stderr)")
    }

    @Test func withNoPrinterPrintDoesNotApplyAndTheErrorSaysWhatDoes() throws {
        let world = try World()
        let photo = try world.photo()
        let result = try world.inboxctl(["options", photo.path, "--do", "print"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("inboxctl: --do print does not apply to \(photo.path) (public.png): "
                                        + "no CUPS server answers ("), "\(result.stderr)")
        #expect(result.stderr.hasSuffix("; what does: quicklook, open=\(world.owner), open=\(world.alternate), "
                                        + "send=\(world.agent.inbox.path)\n"), "\(result.stderr)")
        let menu = try world.menu([photo.path])
        #expect(Self.actions(menu).map { $0["action"] as? String } == ["quicklook", "open", "open", "send"])
        let unknown = try world.inboxctl(["options", photo.path, "--do", "open=com.example.nobody"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix("inboxctl: --do open=com.example.nobody does not apply to \(photo.path) "
                                         + "(public.png): no handler 'com.example.nobody' is registered; what does: "))
        let copy = try world.inboxctl(["options", photo.path, "--do", "copy"])
        #expect(copy.status == 1)
        #expect(copy.stderr.hasPrefix("inboxctl: --do copy does not apply to \(photo.path) (public.png): no --to DIR, "
                                      + "and no desktop session (WAYLAND_DISPLAY, DISPLAY) for the clipboard; "))
    }

    @Test func anEmptyMenuExitsOne() throws {
        let world = try World()
        // Bytes no preview reads and no handler opens, already in the only Inbox: no printer, no clipboard, no --to.
        let blob = world.agent.inbox.appendingPathComponent("blob.bin")
        try Data((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) }).write(to: blob)
        let json = try world.inboxctl(["options", "--json", blob.path])
        #expect(json.status == 1)
        #expect(json.stdout == "{\"file\":\"\(blob.path)\",\"type\":\"public.data\",\"mimeType\":"
                + "\"application/octet-stream\",\"package\":false,\"actions\":[]}\n")
        let done = try world.inboxctl(["options", blob.path, "--do", "quicklook"])
        #expect(done.status == 1)
        #expect(done.stderr == "inboxctl: --do quicklook does not apply to \(blob.path) (public.data): no registered "
                + "viewer shows public.data, and no built-in preview has more to show than its facts; nothing does\n")
        let send = try world.inboxctl(["options", blob.path, "--do", "send=\(world.agent.inbox.path)"])
        #expect(send.stderr == "inboxctl: --do send=\(world.agent.inbox.path) does not apply to \(blob.path) "
                + "(public.data): it lies in \(world.agent.inbox.path) already; nothing does\n")
        let terminal = try world.terminal(["options", blob.path])
        _ = try terminal.waitFor("status=1")
        #expect(try terminal.capture().contains {
            $0.contains("nothing can be done with \(blob.path) (public.data)")
        })
    }

    @Test func offATerminalTheMenuNeedsDoOrJSON() throws {
        let world = try World()
        let photo = try world.photo()
        let usage = try world.inboxctl(["options", photo.path])
        #expect(usage.status == 2)
        #expect(usage.stderr.hasPrefix("Error: not on a terminal, so no menu to choose from: give --do ACTION or --json\n"))
        let both = try world.inboxctl(["options", photo.path, "--json", "--do", "quicklook"])
        #expect(both.status == 2)
        let wrong = try world.inboxctl(["options", photo.path, "--do", "prnt"])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.hasPrefix("Error: unknown action 'prnt' (one of quicklook, open, print, copy, send); "
                                       + "did you mean 'print'?\n"))
    }

    // MARK: The desktop's clipboard

    @Test(.enabled(if: VirtualDisplay.available || VirtualDisplay.required, Comment(rawValue: VirtualDisplay.missing)))
    func copyPutsTheURIAndTheBytesOnTheXClipboard() throws {
        try #require(VirtualDisplay.available, "CI=true: Xvfb and xclip must be installed (\(VirtualDisplay.missing))")
        let world = try World()
        let display = try VirtualDisplay()
        defer { display.stop() }
        let png = world.agent.root.appendingPathComponent("red.png")
        _ = try run("/usr/bin/convert", ["-size", "30x20", "xc:red", png.path])
        let pngBytes = try Data(contentsOf: png)

        let menu = try world.menu([png.path], display: display.name)
        let copy = try #require(Self.actions(menu).first { $0["action"] as? String == "copy" }, "\(menu)")
        #expect(copy["clipboard"] as? String == "x11")
        #expect(copy["targets"] as? [String] == ["text/uri-list", "image/png"])

        let copied = try world.inboxctl(["options", png.path, "--do", "copy"], display: display.name)
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stdout == "Copied \(png.path) to the clipboard (X11: text/uri-list, image/png)\n")
        #expect(try display.paste("TARGETS") == Data("TARGETS\ntext/uri-list\nimage/png\n".utf8))
        #expect(try display.paste("text/uri-list") == Data("file://\(png.path)\r\n".utf8))
        #expect(try display.paste("image/png") == pngBytes)

        // The owner is inboxctl spawned for it: in a session of its own, in /, with /dev/null as 0 (its handoff's
        // memory file let go once read), 1 and 2, the connection as 3, and nothing else open.
        let owner = try #require(owners(display).first.flatMap { Int32($0.prefix { $0 != " " }) }, "\(owners(display))")
        let link = { (name: String) in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(owner)/\(name)")) ?? ""
        }
        #expect(link("cwd") == "/")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(owner)/fd")) ?? []).sorted()
                == ["0", "1", "2", "3"])
        #expect(["fd/0", "fd/1", "fd/2"].map(link) == ["/dev/null", "/dev/null", "/dev/null"])
        #expect(link("fd/3").hasPrefix("socket:"))
        let stat = (try? String(contentsOfFile: "/proc/\(owner)/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        #expect(fields.count > 3 && fields[3] == "\(owner)", "session leader: \(stat)")

        // More than one request takes (INCR, in parts); the first copy's owner gives way to the second's.
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) }
        let blob = try world.file("blob.bin", bytes)
        let big = try world.inboxctl(["options", blob.path, "--do", "copy"], display: display.name)
        #expect(big.status == 0, "\(big.stderr)")
        #expect(try display.paste("application/octet-stream") == Data(bytes))
        #expect(try display.paste("text/uri-list") == Data("file://\(blob.path)\r\n".utf8))
        try waitUntil("only the last copy's owner runs") { owners(display).count == 1 }

        // When the display goes, so does the owner: nothing is left behind.
        display.stop()
        try waitUntil("the clipboard's owner has exited") { owners(display).isEmpty }
    }

    /// The processes serving the clipboard of this test's display: inboxctl spawned as
    /// `inboxctl --serve-x11-clipboard DISPLAY`.
    func owners(_ display: VirtualDisplay) -> [String] {
        var found: [String] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != getpid(),
                  let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { continue }
            let words = command.split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
            if words.count >= 3, words[0].hasSuffix("inboxctl"), words[1] == "--serve-x11-clipboard",
               words[2] == display.name {
                found.append("\(pid) \(words.joined(separator: " "))")
            }
        }
        return found
    }

    // MARK: inboxctl open on a terminal

    @Test(.enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
    func openWithoutAHandlerShowsTheOpenInListOnATerminal() throws {
        let world = try World()
        try world.start()
        let photo = try world.photo()
        let dismissed = try world.terminal(["open", photo.path])
        let screen = try dismissed.waitFor("Choose 1-2, or q to dismiss")
        #expect(screen.contains { $0.contains("Open photo.png (public.png) in:") }, "\(screen)")
        #expect(screen.contains { $0.contains("1  \(world.owner)") && $0.contains("chosen: rank Owner") }, "\(screen)")
        #expect(screen.contains { $0.contains("2  \(world.alternate)") && $0.contains("Alternate for public.image") })
        try dismissed.send("q")
        _ = try dismissed.waitFor("status=1")
        #expect(world.agent.allEntries(of: world.agent.inbox).isEmpty)

        let picked = try world.terminal(["open", photo.path])
        _ = try picked.waitFor("Choose 1-2")
        try picked.send("2")
        _ = try picked.waitFor("status=0")
        let finished = try world.agent.waitForEvents("finished", ["INBOX_HANDLER=\(world.alternate)"])
        #expect(finished.first?[field: "INBOX_CHOSEN_BY"] == "sender")
    }
}

extension Terminal {
    /// Presses a key by its tmux name (`Escape`, `Enter`), not typed literally.
    func press(_ key: String) throws {
        _ = try run("/usr/bin/tmux", ["-L", socket, "send-keys", key])
    }
}

/// An X server of the test's own (Xvfb on the first free display from :90), stopped by its PID; and xclip to read its
/// clipboard back as bytes.
final class VirtualDisplay: @unchecked Sendable {
    // @unchecked: each test owns its display and uses it from one task at a time.
    static let available = FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/xclip")
    static let required = ProcessInfo.processInfo.environment["CI"] == "true"
    static let missing = "no Xvfb or xclip: apt-get install xvfb xclip (scripts/setup)"

    let number: Int
    private var process: Process?
    var name: String { ":\(number)" }

    init() throws {
        for number in 90..<200 {
            let socket = "/tmp/.X11-unix/X\(number)"
            guard !FileManager.default.fileExists(atPath: socket),
                  !FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") else { continue }
            let xvfb = Process()
            // The test process blocks SIGTERM, and exec keeps the mask: Xvfb is started with an empty one, so that
            // terminate() stops it (as PrintServer starts cupsd).
            xvfb.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            xvfb.arguments = ["-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                              + "os.execv(sys.argv[1], sys.argv[1:])", "/usr/bin/Xvfb", ":\(number)", "-nolisten", "tcp",
                              "-screen", "0", "320x240x24"]
            xvfb.standardInput = FileHandle.nullDevice
            xvfb.standardOutput = FileHandle.nullDevice
            xvfb.standardError = FileHandle.nullDevice
            try xvfb.run()
            // Another run may have taken the number meanwhile: then Xvfb exits, and the next one is tried.
            let deadline = Date().addingTimeInterval(10)
            while xvfb.isRunning && !FileManager.default.fileExists(atPath: socket) && Date() < deadline {
                usleep(20_000)
            }
            if xvfb.isRunning && FileManager.default.fileExists(atPath: socket) {
                self.number = number
                process = xvfb
                return
            }
            if xvfb.isRunning { xvfb.terminate() }
            xvfb.waitUntilExit()
        }
        throw PrintServerError(what: "no free X display from :90 to :199")
    }

    deinit { stop() }

    /// Stops the Xvfb this display started (by its PID), and waits for it.
    func stop() {
        guard let process else { return }
        // SIGKILL if SIGTERM has not ended it within 10 s; only ever this PID.
        stopStarted(process, grace: 10)
        self.process = nil
    }

    /// The clipboard as `target`, read by `xclip -selection clipboard -o -t TARGET`.
    func paste(_ target: String) throws -> Data {
        let xclip = Process()
        xclip.executableURL = URL(fileURLWithPath: "/usr/bin/xclip")
        xclip.arguments = ["-selection", "clipboard", "-o", "-t", target]
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = name
        environment.removeValue(forKey: "XAUTHORITY")
        xclip.environment = environment
        let out = Pipe()
        xclip.standardOutput = out
        xclip.standardError = FileHandle.nullDevice
        xclip.standardInput = FileHandle.nullDevice
        try xclip.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        xclip.waitUntilExit()
        guard xclip.terminationStatus == 0 else {
            throw PrintServerError(what: "xclip -o -t \(target) exited with \(xclip.terminationStatus)")
        }
        return data
    }
}
