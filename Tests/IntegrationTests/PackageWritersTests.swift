import Foundation
import Testing

/// A sender that opened a file inside a package for writing before renaming the package in keeps that descriptor
/// once the package is the agent's: the agent asks every file of the package for a read lease after the hand-over,
/// and a package with a file still open for writing goes to failed/ whole, naming the entry, and reaches no handler.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct PackageWritersTests {
    /// A sender process holding `file` open for writing (append) until it is stopped; started once it has it open.
    final class Writer {
        let process = Process()

        init(holding file: URL) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", "import sys, time\nf = open(sys.argv[1], 'a')\nprint('open', flush=True)\n"
                                 + "time.sleep(600)\n", file.path]
            let ready = Pipe()
            process.standardOutput = ready
            try process.run()
            let line = ready.fileHandleForReading.readData(ofLength: 5)
            #expect(String(decoding: line, as: UTF8.self) == "open\n")
        }

        func stop() {
            guard process.isRunning else { return }
            // SIGKILL: the test process's blocked signals are inherited by what Foundation starts, SIGTERM with them.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        deinit { stop() }
    }

    static let report = ["TXT.rtf": "{\\rtf1 hello}\n", "Pictures/a.txt": "attached\n",
                         "Pictures/Deep/notes.txt": "notes\n"]

    /// Makes the package beside the Inbox (as `PackageIntakeTests.dropPackage` does), with `heldOpen` (a path inside
    /// it) held open for writing by a sender process started before the package is renamed in.
    static func drop(_ world: AgentHarness, _ name: String, heldOpen: String?) throws -> Writer? {
        let staged = world.root.appendingPathComponent(".stage-\(name)")
        for (path, contents) in report {
            let url = staged.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: url)
        }
        let writer = try heldOpen.map { try Writer(holding: staged.appendingPathComponent($0)) }
        #expect(rename(staged.path, world.inbox.appendingPathComponent(name).path) == 0)
        return writer
    }

    func rtfdHandler(_ world: AgentHarness) throws -> String {
        let handler = "test.rtfd.\(world.tag)"
        try world.register(handler, contentTypes: "com.apple.rtfd", rank: "Owner")
        return handler
    }

    /// Refused whole to failed/, the entry named in the reason, the failure attribute and one `rejected` entry with
    /// the sender's uid; no handler ran.
    func expectRefused(_ entry: String) throws {
        let world = try AgentHarness()
        _ = try rtfdHandler(world)
        try world.start()
        let writer = try Self.drop(world, "Report.rtfd", heldOpen: entry)
        defer { writer?.stop() }
        let rejected = try #require(world.waitForEvents("rejected").first)
        let reason = "its sender (uid \(getuid())) kept entry \(entry) open for writing, so its content could still change"
        #expect(rejected[field: "INBOX_REASON"] == reason)
        #expect(rejected[field: "INBOX_SOURCE_UID"] == String(getuid()))
        #expect(rejected[field: "INBOX_PACKAGE"] == "1")
        let kept = world.failedDirectory.appendingPathComponent("Report.rtfd")
        #expect(world.contents(of: world.failedDirectory) == ["Report.rtfd"])
        #expect(attribute("user.inboxd.failure", of: kept) == reason)
        for (path, contents) in Self.report {
            #expect(try String(contentsOf: kept.appendingPathComponent(path), encoding: .utf8) == contents, "\(path)")
        }
        #expect(world.contents(of: world.inbox).isEmpty)
        #expect(world.contents(of: world.state.appendingPathComponent("intake")).isEmpty)
        // Nothing reached a handler, then or later.
        try world.drop("after.txt", contents: Array("a later file\n".utf8))
        try waitUntil("the later file is taken") { world.contents(of: world.inbox).isEmpty }
        #expect(world.recordings().isEmpty)
        #expect(world.events("dispatched", ["_PID=\(world.pid)"]).isEmpty)
    }

    @Test(.enabled(if: getuid() == 0, "a lease on a file the agent does not own needs CAP_LEASE"))
    func aPackageWithAFileStillOpenForWritingIsRefused() throws {
        try expectRefused("TXT.rtf")
    }

    @Test(.enabled(if: getuid() == 0, "a lease on a file the agent does not own needs CAP_LEASE"))
    func aWriterOnAFileInANestedDirectoryIsCaughtToo() throws {
        try expectRefused("Pictures/Deep/notes.txt")
    }

    /// The same package with no writer (one that closed its file before the rename) is delivered whole.
    @Test func theSamePackageWithoutAWriterIsDelivered() throws {
        let world = try AgentHarness()
        let handler = try rtfdHandler(world)
        try world.start()
        let writer = try Self.drop(world, "Report.rtfd", heldOpen: nil)
        #expect(writer == nil)
        let finished = try #require(world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"]).first)
        #expect((finished[field: "INBOX_FILE"] as String?)?.hasSuffix("/Report.rtfd") == true)
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        #expect(world.events("rejected", ["_PID=\(world.pid)"]).isEmpty)
        #expect(world.recordings().count == 1)
    }
}
