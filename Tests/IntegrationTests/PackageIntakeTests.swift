import Foundation
import Testing

/// Package documents at intake, through the real agent: which directories are taken, what is moved aside and why, a
/// refused package kept whole in failed/ and expired from there, and a package the agent held when it was killed.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct PackageIntakeTests {
    static let notAPackage = "not a package document: its name's extension names no package type"
    static let madeInPlace = "a directory made in place is never taken: rename a finished directory in"

    /// Makes a directory `name` with `files` (relative path → contents; a value starting with "->" is a symbolic
    /// link to the rest) beside the Inbox, then renames it in whole, as a sender does.
    @discardableResult
    static func dropPackage(_ world: AgentHarness, _ name: String, _ files: [String: String],
                            into directory: URL? = nil, stagedIn staging: URL? = nil) throws -> URL {
        let staged = (staging ?? world.root).appendingPathComponent(".stage-\(name)")
        for (path, contents) in files {
            let url = staged.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            if contents.hasPrefix("->") {
                #expect(symlink(String(contents.dropFirst(2)), url.path) == 0)
            } else {
                try Data(contents.utf8).write(to: url)
            }
        }
        let target = (directory ?? world.inbox).appendingPathComponent(name)
        #expect(rename(staged.path, target.path) == 0)
        return target
    }

    static let report = ["TXT.rtf": "{\\rtf1 hello}\n", "Pictures/a.txt": "attached\n"]

    func rtfdHandler(_ world: AgentHarness) throws -> String {
        let handler = "test.rtfd.\(world.tag)"
        try world.register(handler, contentTypes: "com.apple.rtfd", rank: "Owner")
        return handler
    }

    /// A directory renamed in whose name is no package type's, and one made in place with a package's name, are each
    /// moved aside with one warning naming why; neither is opened.
    @Test func directoriesThatAreNotPackagesAreMovedAsideWithWhy() throws {
        let world = try AgentHarness()
        _ = try rtfdHandler(world)
        try world.start()
        try Self.dropPackage(world, "Photos", Self.report)
        #expect(mkdir(world.inbox.appendingPathComponent("Made.rtfd").path, 0o755) == 0)
        let rejected = try world.waitForEvents("rejected", count: 2)
        var reasons: [String: String] = [:]
        for entry in rejected {
            guard let file = entry[field: "INBOX_FILE"] else { continue }
            reasons[(file as NSString).lastPathComponent] = entry[field: "INBOX_REASON"] ?? "none"
        }
        #expect(reasons == ["Photos": Self.notAPackage, "Made.rtfd": Self.madeInPlace])
        #expect(Set(world.contents(of: world.failedDirectory)) == ["rejected-Photos", "rejected-Made.rtfd"])
        #expect(world.contents(of: world.failedDirectory.appendingPathComponent("rejected-Photos")).sorted()
                == ["Pictures", "TXT.rtf"])
        #expect(world.contents(of: world.inbox).isEmpty)
        // One warning each, not one per look.
        try world.drop("after.txt", contents: Array("a later file\n".utf8))
        try waitUntil("the later file is moved aside or left") { world.contents(of: world.inbox).isEmpty }
        #expect(world.events("rejected", ["_PID=\(world.pid)"]).count == 2)
    }

    /// A package with a symbolic link inside goes to failed/ whole, its reason in its failure attribute and one
    /// `rejected` entry naming its sender; after KeepFailedSec= it is removed whole, the link never followed.
    @Test func aRefusedPackageIsKeptWholeThenExpires() throws {
        let world = try AgentHarness()
        _ = try rtfdHandler(world)
        try world.start(config: "[Agent]\nKeepFailedSec=2s\n")
        let secret = world.root.appendingPathComponent("secret.txt")
        try "not to be removed".write(to: secret, atomically: true, encoding: .utf8)
        try Self.dropPackage(world, "Report.rtfd", Self.report.merging(["Pictures/b.txt": "->" + secret.path]) { a, _ in a })
        let rejected = try #require(world.waitForEvents("rejected").first)
        #expect(rejected[field: "INBOX_REASON"] == "contains a symbolic link: Pictures/b.txt")
        #expect(rejected[field: "INBOX_SOURCE_UID"] == String(getuid()))
        let kept = world.failedDirectory.appendingPathComponent("Report.rtfd")
        #expect(world.contents(of: world.failedDirectory) == ["Report.rtfd"])
        #expect(attribute("user.inboxd.failure", of: kept) == "contains a symbolic link: Pictures/b.txt")
        #expect(world.contents(of: kept.appendingPathComponent("Pictures")).sorted() == ["a.txt", "b.txt"])

        let expired = try #require(world.waitForEvents("expired").first)
        #expect(expired[field: "INBOX_FILE"] == kept.path)
        #expect(expired[field: "INBOX_FILE_KIND"] == "directory")
        #expect(expired[field: "INBOX_DELIVERY_ID"] == rejected[field: "INBOX_DELIVERY_ID"])
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        #expect(try String(contentsOf: secret, encoding: .utf8) == "not to be removed")
    }

    /// inboxd.conf's package bounds are the ones a package is checked within.
    @Test func aPackageBeyondMaxPackageEntriesIsRefused() throws {
        let world = try AgentHarness()
        _ = try rtfdHandler(world)
        try world.start(config: "[Agent]\nMaxPackageEntries=2\n")
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        let rejected = try #require(world.waitForEvents("rejected").first)
        #expect(rejected[field: "INBOX_REASON"] == "has more than 2 entries (MaxPackageEntries=)")
        #expect(world.contents(of: world.failedDirectory) == ["Report.rtfd"])
    }

    /// A package the agent had taken into intake/ when it was killed (here it could not go on: its container Inbox
    /// is another filesystem) is delivered from there after the restart, under the name it was dropped as.
    @Test func aPackageInIntakeWhenTheAgentIsKilledIsDeliveredAfterTheRestart() throws {
        let world = try AgentHarness()
        let handler = try rtfdHandler(world)
        let containerInbox = world.containerInbox(handler)
        try FileManager.default.createDirectory(at: containerInbox, withIntermediateDirectories: true)
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=0770", "tmpfs", containerInbox.path]).status == 0)
        var mounted = true
        defer { if mounted { _ = try? run("/bin/umount", [containerInbox.path]) } }
        try world.start()
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        let intake = world.state.appendingPathComponent("intake")
        try waitUntil("the package waits in intake/") { world.contents(of: intake).count == 1 }
        let staged = intake.appendingPathComponent(world.contents(of: intake)[0])
        #expect(world.contents(of: staged).sorted() == ["Pictures", "TXT.rtf"])
        let killed = try #require(world.process)
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        #expect(try run("/bin/umount", [containerInbox.path]).status == 0)
        mounted = false

        try world.start()
        let finished = try #require(world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"]).first)
        #expect((finished[field: "INBOX_FILE"] as String?)?.hasSuffix("/Report.rtfd") == true)
        #expect(world.contents(of: intake).isEmpty)
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        let record = try #require(world.recordings().values.first)
        #expect(record.contains("INBOX_CONTENT_TYPE=com.apple.rtfd"))
    }

    /// A drop Inbox on another filesystem: a package is copied entry by entry with its attributes and its original
    /// removed (kept in unhandled/ here, no handler claiming RTFDs); a refused one cannot be moved aside whole, and is
    /// left in place with one warning naming why.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs for the Inbox needs root"))
    func aPackageOnAnotherFilesystemIsCopiedWhole() throws {
        let world = try AgentHarness()
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m,mode=1733", "tmpfs", world.inbox.path]).status == 0)
        defer {
            world.stop()
            _ = try? run("/bin/umount", [world.inbox.path])
        }
        try world.start()
        let files = Self.report.merging(["Pictures/Deeper/b.txt": "deeper\n"]) { a, _ in a }
        try Self.dropPackage(world, "Report.rtfd", files, stagedIn: world.inbox)
        let unhandled = try #require(world.waitForEvents("unhandled").first)
        #expect(unhandled[field: "INBOX_CONTENT_TYPE"] == "com.apple.rtfd")
        let kept = world.unhandledDirectory.appendingPathComponent("Report.rtfd")
        #expect(world.contents(of: world.unhandledDirectory) == ["Report.rtfd"])
        for (path, contents) in files {
            #expect(try String(contentsOf: kept.appendingPathComponent(path), encoding: .utf8) == contents, "\(path)")
        }
        #expect(attribute("user.inboxd.delivery", of: kept)?.hasSuffix(" Report.rtfd") == true)
        #expect(world.contents(of: world.inbox).isEmpty)
        #expect(world.contents(of: world.state.appendingPathComponent("intake")).isEmpty)

        try Self.dropPackage(world, "Linked.rtfd", Self.report.merging(["link": "->/etc/hostname"]) { a, _ in a },
                             stagedIn: world.inbox)
        let left = try #require(world.waitForEvents("rejected").first)
        #expect((left[field: "INBOX_REASON"] as String?)?.hasPrefix("contains a symbolic link: link") == true)
        #expect(world.contents(of: world.inbox) == ["Linked.rtfd"])
        #expect(world.contents(of: world.failedDirectory).isEmpty)
    }

    /// A package already in the Inbox when the agent starts is taken by the first scan like one renamed in.
    @Test func aPackageFoundByTheStartUpScanIsTaken() throws {
        let world = try AgentHarness()
        let handler = try rtfdHandler(world)
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        try world.start()
        let finished = try #require(world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"]).first)
        #expect((finished[field: "INBOX_FILE"] as String?)?.hasSuffix("/Report.rtfd") == true)
        #expect(world.contents(of: world.inbox).isEmpty)
        #expect(world.contents(of: world.failedDirectory).isEmpty)
    }
}
