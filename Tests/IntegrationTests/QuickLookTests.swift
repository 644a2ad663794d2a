import Foundation
import Testing

/// Quick Look's built-in generators as a person sees them: the preview corpus (Tests/PreviewCorpus/make-corpus, made once
/// per test run) through `inboxctl preview --builtin`, as PNG pages (`--output --json`: how many, how big, not blank, the
/// colours where the manifest says) and on a terminal (tmux: titles, text, aligned tables, the keys).
@Suite(.serialized)
struct QuickLookTests {
    static let pictured = ["report.pdf", "photo.png", "photo.jpg", "photo.gif", "photo.webp", "Report.pages",
                           "Budget.numbers", "Deck.key", "drawing.ps"]
    static let textual = ["notes-utf8.txt", "notes-latin1.txt", "long.log", "data.json", "source.c", "table.csv",
                          "table.tsv"]
    static let office = ["letter.docx", "sheet.xlsx", "text.odt", "memo.rtf"]
    static let hostile = ["hostile/bomb.pdf", "hostile/huge.png", "hostile/bomb.docx", "hostile/notzip.docx"]
    /// The longest side asked of every page here: smaller than the photos, so scaling is seen.
    static let size = 600

    // MARK: PNG pages

    @Test(arguments: QuickLookTests.pictured + QuickLookTests.textual)
    func eachFileBecomesItsPagesAsPictures(name: String) throws {
        try showsItsPages(name)
    }

    @Test(.enabled(if: Office.available || Office.required, Comment(rawValue: Office.missing)), arguments: QuickLookTests.office)
    func officeDocumentsBecomeTheirPagesThroughLibreOffice(name: String) throws {
        try #require(Office.available, "CI=true: LibreOffice must be installed (\(Office.missing))")
        try showsItsPages(name, timeout: 180)
    }

    /// Runs `--output --json` on one corpus file and checks what a person would see in the pages.
    func showsItsPages(_ name: String, timeout: TimeInterval = 60) throws {
        let corpus = try QuickLookCorpus.shared.get()
        let item = try #require(corpus.item(name), "the manifest has no \(name)")
        let world = try AgentHarness()
        let out = world.root.appendingPathComponent("pages")
        let result = try preview(world, ["--output", out.path, "--json", "--size", "\(Self.size)", corpus.path(name)],
                                 timeout: timeout)
        #expect(result.status == 0, "\(name): \(result.stderr)")
        let shown = try #require(try PreviewJSON.decode(result.stdout).items.first, "\(name): no item in \(result.stdout)")
        #expect(shown.title == URL(fileURLWithPath: name).lastPathComponent)
        #expect(shown.file == corpus.path(name))
        #expect(shown.type == item.type)
        #expect(shown.generator == item.generator, "\(name): shown by \(shown.generator)")
        #expect(shown.error == nil, "\(name): \(shown.error ?? "")")
        if let pages = item.pages {
            #expect(shown.pageCount == pages)
            #expect(shown.pages.count == pages, "\(name): \(shown.pages.count) pictures for \(pages) pages")
        } else {
            #expect(shown.pages.count >= (item.minPages ?? 1))
            #expect(shown.pages.count <= 100, "--pages defaults to 100")
        }
        for (index, page) in shown.pages.enumerated() {
            #expect(page.path == out.appendingPathComponent("1-\(index + 1).png").path)
            let picture = try Picture(page.path)
            #expect(picture.width == page.width, "\(page.path): the JSON's width")
            #expect(picture.height == page.height, "\(page.path): the JSON's height")
            #expect(max(picture.width, picture.height) <= Self.size, "\(page.path) is \(picture.width)x\(picture.height)")
            if let size = item.size, max(size[0], size[1]) >= Self.size {
                // A picture is scaled to the size, keeping its proportions.
                #expect(max(picture.width, picture.height) == Self.size)
                #expect(abs(Double(picture.width) / Double(picture.height) - Double(size[0]) / Double(size[1])) < 0.02)
            }
            #expect(try picture.standardDeviation() > 0.01, "\(page.path) is blank")
            for sample in item.samples?[safe: index] ?? [] {
                let seen = try picture.colour(atFraction: sample.at)
                let tolerance = item.tolerance ?? 8
                #expect(zip(seen, sample.rgb).allSatisfy { abs($0 - $1) <= tolerance },
                        "\(name) page \(index + 1) at \(sample.at): \(seen), expected \(sample.rgb) ± \(tolerance)")
            }
        }
        #expect(world.contents(of: world.root.appendingPathComponent("tmp")).isEmpty, "scratch left behind")
    }

    @Test func pagesAreBoundedAndEveryItemIsShownInOrder() throws {
        let corpus = try QuickLookCorpus.shared.get()
        let world = try AgentHarness()
        let out = world.root.appendingPathComponent("pages")
        let result = try preview(world, ["--output", out.path, "--json", "--pages", "2", "--title", "The report",
                                         corpus.path("report.pdf"), corpus.path("long.log"), corpus.path("photo.png")])
        #expect(result.status == 0, "\(result.stderr)")
        let items = try PreviewJSON.decode(result.stdout).items
        #expect(items.map(\.index) == [1, 2, 3])
        #expect(items.map(\.title) == ["The report", "long.log", "photo.png"])
        #expect(items.map(\.pages.count) == [2, 2, 1])
        #expect(items.map(\.pageCount)[0] == 3, "the document's own count, not the bound")
        #expect(items.map(\.pageCount)[1] > 2)
        #expect(world.contents(of: out) == ["1-1.png", "1-2.png", "2-1.png", "2-2.png", "3-1.png"])
        // --output alone draws nothing on the terminal.
        #expect(!result.stdout.contains("\u{1B}["))
    }

    @Test func aFileThatCannotBeShownFailsAfterTheOthersAreShown() throws {
        let corpus = try QuickLookCorpus.shared.get()
        let world = try AgentHarness()
        let out = world.root.appendingPathComponent("pages")
        let result = try preview(world, ["--output", out.path, "--json", corpus.path("report.pdf"),
                                         corpus.path("hostile/notzip.docx"), corpus.path("photo.png")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("notzip.docx"), "\(result.stderr)")
        let items = try PreviewJSON.decode(result.stdout).items
        #expect(items.map(\.pages.count) == [3, 0, 1])
        #expect(items.map { $0.error == nil } == [true, false, true])
        #expect(world.contents(of: out) == ["1-1.png", "1-2.png", "1-3.png", "3-1.png"])
    }

    // MARK: Hostile files

    @Test(arguments: QuickLookTests.hostile)
    func aHostileFileEndsInAnErrorInTimeAndLeavesNothing(name: String) throws {
        let corpus = try QuickLookCorpus.shared.get()
        let item = try #require(corpus.item(name))
        let expect = try #require(item.expect, "\(name) has no expected outcome")
        if item.generator == "office" && !Office.available && !Office.required {
            // Without LibreOffice a Word document is refused as unsupported; the words are LibreOffice's case.
            print("QuickLookTests: \(name) checked without LibreOffice: exit 1 only")
        }
        let world = try AgentHarness()
        let out = world.root.appendingPathComponent("pages")
        let started = Date()
        let result = try preview(world, ["--output", out.path, "--json", corpus.path(name)],
                                 timeout: expect.withinSeconds + 30)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == expect.exit, "\(name): \(result.stderr)")
        #expect(elapsed <= expect.withinSeconds, "\(name) took \(Int(elapsed)) s")
        if item.generator != "office" || Office.available {
            for word in expect.words {
                #expect(result.stderr.lowercased().contains(word.lowercased()), "\(name): '\(word)' not in \(result.stderr)")
            }
        }
        #expect(result.stderr.contains(URL(fileURLWithPath: name).lastPathComponent), "the error names the file")
        if let shown = try? PreviewJSON.decode(result.stdout).items.first {
            #expect(shown.error != nil)
            #expect(shown.pages.isEmpty)
        }
        #expect(world.contents(of: out).filter { $0.hasSuffix(".png") }.isEmpty)
        let scratch = world.root.appendingPathComponent("tmp")
        #expect(world.contents(of: scratch).isEmpty, "scratch left behind: \(world.contents(of: scratch))")
        #expect(processesUsing(world.root.path).isEmpty, "left running: \(processesUsing(world.root.path))")
    }

    // MARK: Thumbnails

    @Test func aThumbnailIsWhereTheFreedesktopSpecSaysWithItsURIAndTime() throws {
        let corpus = try QuickLookCorpus.shared.get()
        let world = try AgentHarness()
        let photo = world.root.appendingPathComponent("photo.png")
        try FileManager.default.copyItem(atPath: corpus.path("photo.png"), toPath: photo.path)
        let cache = world.root.appendingPathComponent("cache")
        let result = try run(Binaries.inboxctl.path, ["thumbnail", photo.path],
                             environment: environment(world).merging(["XDG_CACHE_HOME": cache.path]) { $1 })
        #expect(result.status == 0, "\(result.stderr)")
        let uri = photo.absoluteString
        let digest = try run("/usr/bin/sh", ["-c", "printf %s \"$1\" | md5sum", "sh", uri]).stdout.prefix(32)
        let mtime = try FileManager.default.attributesOfItem(atPath: photo.path)[.modificationDate] as? Date
        for (directory, side) in [("normal", 128), ("large", 256)] {
            let path = cache.appendingPathComponent("thumbnails/\(directory)/\(digest).png").path
            let picture = try Picture(path)
            #expect(max(picture.width, picture.height) == side, "\(path): \(picture.width)x\(picture.height)")
            #expect(try picture.property("Thumb::URI") == uri)
            #expect(try picture.property("Thumb::MTime") == "\(Int(mtime?.timeIntervalSince1970 ?? 0))")
            #expect(try picture.colour(atFraction: [0.25, 0.25]).elementsEqual([255, 0, 0]) { abs($0 - $1) <= 8 })
        }
    }

    // MARK: On a terminal

    @Test(arguments: ["notes-utf8.txt", "notes-latin1.txt", "data.json", "source.c", "table.tsv", "long.log"])
    func textIsReadOnTheTerminalUnderItsTitle(name: String) throws {
        let corpus = try QuickLookCorpus.shared.get()
        let item = try #require(corpus.item(name))
        let world = try AgentHarness()
        let terminal = try Terminal(world, "inboxctl preview --builtin \(shellQuoted(corpus.path(name)))")
        let screen = try terminal.waitFor("[1/1] \(name)")
        for text in item.text ?? [] {
            #expect(screen.contains { $0.contains(text) }, "\(name): '\(text)' not on the screen:\n\(screen.joined(separator: "\n"))")
        }
        try terminal.send("q")
        try terminal.waitUntilEnded()
    }

    @Test func aTableShowsItsHeaderAndItsColumnsAligned() throws {
        let corpus = try QuickLookCorpus.shared.get()
        let item = try #require(corpus.item("table.csv"))
        let header = try #require(item.header), rows = try #require(item.rows)
        let world = try AgentHarness()
        let terminal = try Terminal(world, "inboxctl preview --builtin \(shellQuoted(corpus.path("table.csv")))")
        let screen = try terminal.waitFor("[1/1] table.csv")
        let shown = screen.joined(separator: "\n")
        let headerLine = try #require(screen.first { line in header.allSatisfy { line.contains($0) } }, "no header row:\n\(shown)")
        let columns = try #require(starts(of: header, in: headerLine), "header cells out of order: \(headerLine)")
        for row in rows {
            // A cell as a person reads it, by its first line's start (a line break in a cell is shown in one line).
            let cells = row.map { String($0.split(separator: "\n").first ?? "").prefix(6).description }
            let line = try #require(screen.first { $0.contains(cells[0]) }, "no row for \(row[0]):\n\(shown)")
            #expect(starts(of: cells, in: line) == columns, "\(row[0]): not aligned with the header:\n\(headerLine)\n\(line)")
        }
        try terminal.send("q")
        try terminal.waitUntilEnded()
    }

    @Test func twoItemsAreBrowsedWithTheKeys() throws {
        let corpus = try QuickLookCorpus.shared.get()
        let world = try AgentHarness()
        let terminal = try Terminal(world, "inboxctl preview --builtin \(shellQuoted(corpus.path("notes-utf8.txt"))) "
                                    + shellQuoted(corpus.path("long.log")))
        let first = try terminal.waitFor("[1/2] notes-utf8.txt")
        #expect(first.contains { $0.contains("Café au lait") })
        try terminal.send("]")
        let second = try terminal.waitFor("[2/2] long.log")
        let top = try #require(firstLogLine(second), "no log line on the screen:\n\(second.joined(separator: "\n"))")
        #expect(top == 1)
        try terminal.send(" ")
        var paged: Int?
        try waitUntil("the next page of long.log") {
            paged = firstLogLine(try terminal.capture())
            return (paged ?? top) > top
        }
        try terminal.send("p")
        try waitUntil("the previous page again") { firstLogLine(try terminal.capture()) == top }
        try terminal.send("[")
        _ = try terminal.waitFor("[1/2] notes-utf8.txt")
        try terminal.send("q")
        try terminal.waitUntilEnded()
    }

    /// The number that starts the first long.log line on the screen.
    func firstLogLine(_ screen: [String]) -> Int? {
        for line in screen {
            let trimmed = line.drop { $0 == " " }
            let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
            if digits.count == 4 && trimmed.dropFirst(4).hasPrefix(" 2024-") { return Int(digits) }
        }
        return nil
    }

    /// Where each of `cells` starts in `line`, in screen columns, each looked for after the one before; nil when one is
    /// missing.
    func starts(of cells: [String], in line: String) -> [Int]? {
        var from = line.startIndex, columns: [Int] = []
        for cell in cells {
            guard let found = line.range(of: cell, range: from..<line.endIndex) else { return nil }
            columns.append(line.distance(from: line.startIndex, to: found.lowerBound))
            from = found.upperBound
        }
        return columns
    }

    // MARK: Running inboxctl

    func environment(_ world: AgentHarness) -> [String: String] {
        let scratch = world.root.appendingPathComponent("tmp")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = scratch.path
        environment["HOME"] = world.root.path
        return environment
    }

    /// `inboxctl preview --builtin ARGUMENTS`, stopped (and recorded as an issue) past `timeout`.
    func preview(_ world: AgentHarness, _ arguments: [String], timeout: TimeInterval = 60) throws
        -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = Binaries.inboxctl
        // The agent's TimeoutSec= bounds a generator: 8 s, so that the PDF bomb ends soon.
        let config = world.root.appendingPathComponent("quicklook.conf")
        try "[Agent]\nTimeoutSec=8\n".write(to: config, atomically: true, encoding: .utf8)
        process.arguments = ["preview", "--builtin"] + arguments
            + ["--config", config.path, "--handlers", world.handlers.path, "--state", world.state.path]
        process.environment = environment(world)
        let stdout = world.root.appendingPathComponent("preview.out"), stderr = world.root.appendingPathComponent("preview.err")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            Issue.record("inboxctl preview \(arguments.joined(separator: " ")) still running after \(Int(timeout)) s")
            process.interrupt()
            process.waitUntilExit()
        }
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOf: stdout, encoding: .utf8),
                try String(contentsOf: stderr, encoding: .utf8))
    }
}

/// What `inboxctl preview --output --json` prints.
struct PreviewJSON: Decodable {
    struct Item: Decodable {
        struct Page: Decodable {
            let path: String
            let width: Int
            let height: Int
        }

        let index: Int
        let file: String
        let title: String
        let type: String
        let generator: String
        let pageCount: Int
        let pages: [Page]
        let notes: [String]
        let error: String?
    }

    let items: [Item]

    static func decode(_ text: String) throws -> PreviewJSON {
        try JSONDecoder().decode(PreviewJSON.self, from: Data(text.utf8))
    }
}

/// The preview corpus and its manifest (Tests/PreviewCorpus/README.md), made once per test run.
struct QuickLookCorpus: Sendable {
    struct Item: Decodable, Sendable {
        struct Sample: Decodable, Sendable {
            let at: [Double]
            let rgb: [Int]
        }

        struct Expectation: Decodable, Sendable {
            let exit: Int32
            let words: [String]
            let withinSeconds: Double
        }

        let name: String
        let type: String
        let generator: String
        let pages: Int?
        let minPages: Int?
        let samples: [[Sample]]?
        let tolerance: Int?
        let size: [Int]?
        let text: [String]?
        let header: [String]?
        let rows: [[String]]?
        let expect: Expectation?
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    struct Manifest: Decodable {
        let items: [Item]
    }

    let directory: URL
    let items: [Item]

    func item(_ name: String) -> Item? { items.first { $0.name == name } }
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../PreviewCorpus/make-corpus").standardizedFileURL

    /// Made on first use into /tmp/inboxd-quicklook-corpus-<pid>; those of test runs that are gone are removed.
    static let shared: Result<QuickLookCorpus, Failure> = {
        let base = URL(fileURLWithPath: NSTemporaryDirectory())
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        where name.hasPrefix("inboxd-quicklook-corpus-") {
            if let pid = Int32(name.dropFirst("inboxd-quicklook-corpus-".count)), kill(pid, 0) != 0 {
                try? FileManager.default.removeItem(at: base.appendingPathComponent(name))
            }
        }
        let directory = base.appendingPathComponent("inboxd-quicklook-corpus-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        do {
            let made = try run(QuickLookCorpus.script.path, [directory.path])
            guard made.status == 0 else { return .failure(Failure(description: "make-corpus failed: \(made.stderr)")) }
            let manifest = try JSONDecoder().decode(Manifest.self,
                                                    from: Data(contentsOf: directory.appendingPathComponent("manifest.json")))
            return .success(QuickLookCorpus(directory: directory, items: manifest.items))
        } catch {
            return .failure(Failure(description: "make-corpus: \(error)"))
        }
    }()
}

/// A PNG read back with ImageMagick's /usr/bin/convert (never /usr/local/bin's stand-in).
struct Picture {
    let path: String
    let width: Int
    let height: Int

    init(_ path: String) throws {
        self.path = path
        let size = try Self.format(path, "%w %h").split(separator: " ").compactMap { Int($0) }
        guard size.count == 2 else { throw QuickLookCorpus.Failure(description: "\(path): not a picture ImageMagick reads") }
        (width, height) = (size[0], size[1])
    }

    static func format(_ path: String, _ format: String) throws -> String {
        let result = try run("/usr/bin/convert", [path, "-format", format, "info:"])
        guard result.status == 0 else { throw QuickLookCorpus.Failure(description: "convert \(path): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The standard deviation of all channels, from 0 (one flat colour) to about 0.5.
    func standardDeviation() throws -> Double {
        Double(try Self.format(path, "%[fx:standard_deviation]")) ?? 0
    }

    /// The 8-bit RGB at fractions of the width and height from the top-left corner.
    func colour(atFraction at: [Double]) throws -> [Int] {
        let x = min(width - 1, Int(at[0] * Double(width))), y = min(height - 1, Int(at[1] * Double(height)))
        let channels = ["r", "g", "b"].map { "%[fx:round(255*p{\(x),\(y)}.\($0))]" }.joined(separator: ",")
        return try Self.format(path, channels).split(separator: ",").compactMap { Int($0) }
    }

    /// A PNG text chunk's value (`Thumb::URI`).
    func property(_ key: String) throws -> String {
        try Self.format(path, "%[\(key)]")
    }
}

/// A terminal of 100 x 30 that a person would look at: a tmux server of its own (its own socket), read back with
/// capture-pane; killed with its server at the end.
final class Terminal {
    let socket: String

    init(_ world: AgentHarness, _ command: String) throws {
        socket = "inboxd-terminal-\(world.tag)-\(UUID().uuidString.prefix(8))"
        // The command's directory holds inboxctl; `sleep` keeps the pane to look at after it ends.
        let line = "PATH=\(shellQuoted(Binaries.directory.path)):/usr/bin:/bin TMPDIR=\(shellQuoted(world.root.path)) "
            + "\(command); echo inboxctl-ended; sleep 30"
        // Not through Foundation's Process: the tmux server it starts outlives the client and may keep whatever
        // descriptors it inherited (another test's pipes among them), and Process would wait for them to close.
        let status = Self.spawnAndWait(["/usr/bin/tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d",
                                        "-x", "100", "-y", "30", line])
        guard status == 0 else { throw QuickLookCorpus.Failure(description: "tmux new-session exited with \(status)") }
    }

    /// Runs `arguments` with /dev/null as stdin, stdout and stderr and no other descriptor, and waits for it alone.
    static func spawnAndWait(_ arguments: [String]) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // Everything else the test process has open stays out of tmux's server: close-on-exec for all (a spawn that
        // means to pass one dup2s it, which clears the flag on the copy).
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(entry), fd > 2 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    deinit {
        _ = try? run("/usr/bin/tmux", ["-L", socket, "kill-server"])
    }

    func capture() throws -> [String] {
        try run("/usr/bin/tmux", ["-L", socket, "capture-pane", "-p"]).stdout.split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
    }

    /// Waits until a line of the screen holds `text`; the screen then.
    @discardableResult
    func waitFor(_ text: String, timeout: TimeInterval = 30) throws -> [String] {
        var screen: [String] = []
        do {
            try waitUntil("'\(text)' on the terminal", timeout: timeout) {
                screen = try capture()
                return screen.contains { $0.contains(text) }
            }
        } catch {
            Issue.record("the screen:\n\(screen.joined(separator: "\n"))")
            throw error
        }
        return screen
    }

    /// Types `keys` literally (` ` is the space bar).
    func send(_ keys: String) throws {
        _ = try run("/usr/bin/tmux", ["-L", socket, "send-keys", "-l", keys])
    }

    /// inboxctl has ended (after `q`): the line the pane's shell prints after it.
    func waitUntilEnded() throws {
        try waitFor("inboxctl-ended", timeout: 10)
    }
}

/// LibreOffice headless, which Office documents need; CI=true must have it.
enum Office {
    static let available = FileManager.default.isExecutableFile(atPath: "/usr/bin/soffice")
    static let required = ProcessInfo.processInfo.environment["CI"] == "true"
    static let missing = "no LibreOffice (/usr/bin/soffice): apt-get install libreoffice-writer-nogui "
        + "libreoffice-calc-nogui libreoffice-impress-nogui (scripts/setup)"
}

/// Processes whose command line, working directory or open files are under `path` (from /proc).
func processesUsing(_ path: String) -> [String] {
    var found: [String] = []
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
        guard let pid = Int32(entry), pid != getpid() else { continue }
        let command = ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "")
            .replacingOccurrences(of: "\0", with: " ")
        let cwd = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd")) ?? ""
        let fds = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [])
            .compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
        if command.contains(path) || cwd.hasPrefix(path) || fds.contains(where: { $0.hasPrefix(path) }) {
            found.append("\(pid) \(command)")
        }
    }
    return found
}

/// `text` quoted for sh.
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
