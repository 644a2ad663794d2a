import Foundation
import Testing

/// A package with something in it the agent must not take: each is refused whole, by descriptor, before anything
/// else sees it. Built in staging/ as `Report.rtfd` (an RTFD, so it is a package by its name) around one hostile
/// entry.
enum HostileShape: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case absoluteLink, relativeLink, linkChain, hardLink, fifo, socket, device, nestedMount, tooDeep, tooManyEntries,
         tooLarge

    var testDescription: String { rawValue }

    static let name = "Report.rtfd"
    /// The agent's and inboxctl's bound for `tooLarge` (inboxd.conf, MaxPackageSize=).
    static let sizeLimit = 4096
    static let config = "[Agent]\nMaxPackageSize=\(sizeLimit)\n"

    /// The refusal's reason, any of these (the walk's order decides which link of a chain it meets first).
    var reasons: [String] {
        switch self {
        case .absoluteLink: ["contains a symbolic link: Data/link"]
        case .relativeLink: ["contains a symbolic link: Data/up"]
        case .linkChain: ["contains a symbolic link: Data/first", "contains a symbolic link: Data/second"]
        case .hardLink: ["contains a file with more than one link: Data/note.txt"]
        case .fifo: ["contains a FIFO: Data/pipe"]
        case .socket: ["contains a socket: Data/socket"]
        case .device: ["contains a character device: Data/null"]
        case .nestedMount: ["contains a mount point: Data/mnt"]
        case .tooDeep: ["is more than 32 levels deep (MaxPackageDepth=)"]
        case .tooManyEntries: ["has more than 10000 entries (MaxPackageEntries=)"]
        case .tooLarge: ["is larger than \(Self.sizeLimit) bytes (MaxPackageSize=)"]
        }
    }

    /// Builds the package in `world`'s staging/ (the canary beside it is what its links lead to); returns it.
    func build(in world: AgentHarness, canary: Canary) throws -> URL {
        var files = SamplePackages.rtfd
        files["Data/note.txt"] = Array("a note\n".utf8)
        var directories: [String] = []
        switch self {
        case .tooDeep:
            // Data is level 1: 33 levels of directories in all, one more than MaxPackageDepth= allows.
            directories.append((["Data"] + (2...33).map { "level\($0)" }).joined(separator: "/"))
        case .tooManyEntries:
            // TXT.rtf, image.png, Data, Data/note.txt, Data/many and 9,996 files in it: 10,001 entries.
            for index in 0..<9_996 { files["Data/many/\(index)"] = [] }
        case .tooLarge:
            files["Data/big.bin"] = [UInt8](repeating: 0x42, count: Self.sizeLimit + 1)
        default:
            break
        }
        let package = try world.makePackage(Self.name, files, directories: directories)
        let data = package.appendingPathComponent("Data")
        func check(_ status: Int32, _ what: String) throws {
            guard status == 0 else {
                Issue.record("\(what): \(String(cString: strerror(errno)))")
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
        switch self {
        case .absoluteLink:
            try check(symlink(canary.fifo.path, data.appendingPathComponent("link").path), "symlink")
        case .relativeLink:
            // From Inbox/Report.rtfd/Data (and staging/Report.rtfd/Data): up three levels is the world's root.
            try check(symlink("../../../outside/secret", data.appendingPathComponent("up").path), "symlink")
        case .linkChain:
            try check(symlink("second", data.appendingPathComponent("first").path), "symlink")
            try check(symlink("../../../outside", data.appendingPathComponent("second").path), "symlink")
        case .hardLink:
            try check(link(data.appendingPathComponent("note.txt").path, canary.directory.appendingPathComponent("hard").path),
                      "link")
        case .fifo:
            try check(mkfifo(data.appendingPathComponent("pipe").path, 0o644), "mkfifo")
        case .socket:
            // Bound by a relative name: the whole path is longer than sun_path.
            let bound = try run("/usr/bin/python3", ["-c", "import os,socket,sys; os.chdir(sys.argv[1]); socket.socket(socket.AF_UNIX).bind('socket')",
                                                     data.path])
            #expect(bound.status == 0, "\(bound.stderr)")
        case .device:
            try check(mknod(data.appendingPathComponent("null").path, S_IFCHR | 0o666, makedev(1, 3)), "mknod")
        case .nestedMount:
            let point = data.appendingPathComponent("mnt")
            try FileManager.default.createDirectory(at: point, withIntermediateDirectories: true)
            try TestMounts.mountTmpfs(at: point)
            try Data("on another filesystem\n".utf8).write(to: point.appendingPathComponent("inside.txt"))
        case .tooDeep, .tooManyEntries, .tooLarge:
            break
        }
        return package
    }
}

private func makedev(_ major: UInt32, _ minor: UInt32) -> dev_t {
    dev_t((major & 0xfff) << 8 | (minor & 0xff) | ((minor & ~0xff) << 12))
}

/// Hostile packages through the real agent (renamed into its Inbox) and through `inboxctl send`: refused whole,
/// with the reason in the failure attribute and one journal entry, nothing inside followed, nothing delivered; and
/// the directories that are not packages at all. Root only: devices, mounts and a secret only root may read.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: getuid() == 0, "devices, mounts and a root-only canary need root"))
struct PackageHostileTests {
    /// A handler for RTFDs (it must never run here) and one for text: a text file dropped after the package is
    /// delivered only if the agent is not stuck on it (a FIFO opened, a link followed into one).
    private func world(_ name: String = #function) throws -> (AgentHarness, String) {
        let world = try AgentHarness(name)
        let handler = "test.rtfd.\(world.tag)"
        try world.register(handler, exec: "\(try world.packageRecorder().path) %f", contentTypes: "com.apple.rtfd")
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        return (world, handler)
    }

    @Test(arguments: HostileShape.allCases)
    func aHostilePackageIsRefusedWholeAndNothingInsideIsFollowed(shape: HostileShape) throws {
        let (world, handler) = try world()
        defer { TestMounts.unmountAll(under: world.root) }
        let canary = try Canary(in: world)
        try world.start(config: HostileShape.config)
        let package = try shape.build(in: world, canary: canary)
        let before = TreeSnapshot.of(package)
        let watch = try canary.watch()
        try world.dropPackage(package)

        let rejected = try world.waitForEvents("rejected", timeout: 20)
        let entry = try #require(rejected.first)
        let reason = entry[field: "INBOX_REASON"] ?? ""
        #expect(shape.reasons.contains { reason.contains($0) }, "reason: \(reason)")
        #expect(entry[field: "INBOX_FILE"] == world.inbox.appendingPathComponent(HostileShape.name).path)
        #expect(entry[field: "PRIORITY"] == "4")
        // Said of a package, so that its sender's view marks it as one.
        #expect(entry[field: "INBOX_PACKAGE"] == "1")
        // The agent goes on: a file dropped after it is delivered (nothing blocked on a FIFO or a followed link).
        try world.drop("after.txt", contents: Array("after the package\n".utf8))
        try world.waitForEvents("finished", ["INBOX_HANDLER=test.text.\(world.tag)"])

        // In failed/ whole, as it was built: every entry there, of the same kind, links still links to where they led.
        let kept = world.visibleEntries(of: world.failedDirectory)
        #expect(kept.count == 1, "failed/: \(kept)")
        let keptPackage = try #require(kept.first.map { world.failedDirectory.appendingPathComponent($0) })
        #expect(TreeSnapshot.of(keptPackage) == before)
        #expect(attribute("user.inboxd.failure", of: keptPackage).map { value in shape.reasons.contains { value.contains($0) } }
                == true, "failure attribute: \(attribute("user.inboxd.failure", of: keptPackage) ?? "none")")
        // One journal entry for its outcome; nothing dispatched, nothing run, nothing left anywhere else.
        #expect(world.outcomeEntries(naming: HostileShape.name).count == 1,
                "\(world.outcomeEntries(naming: HostileShape.name).map { $0[field: "MESSAGE"] ?? "" })")
        #expect(world.events("dispatched", ["INBOX_HANDLER=\(handler)"]).isEmpty)
        #expect(world.recording(named: HostileShape.name) == nil)
        #expect(world.allEntries(of: world.inbox).isEmpty)
        #expect(world.allEntries(of: world.state.appendingPathComponent("intake")).isEmpty)
        #expect(world.containerEntries(handler).isEmpty)
        // Nothing outside the package was opened, read or listed through it.
        #expect(watch.events() == [])
        #expect(try String(contentsOf: canary.secret, encoding: .utf8) == canary.text)
        // The agent still runs (a crash would have ended it).
        #expect(world.process?.isRunning == true)
    }

    /// The same packages given to `inboxctl send`: refused by send itself (its copy refuses what the agent would,
    /// within the same bounds), exit status 1 with the reason, and nothing in the Inbox, not even its hidden copy.
    @Test(arguments: HostileShape.allCases)
    func sendRefusesAHostilePackageAndLeavesNothingInTheInbox(shape: HostileShape) throws {
        let (world, _) = try world()
        defer { TestMounts.unmountAll(under: world.root) }
        let canary = try Canary(in: world)
        let config = world.root.appendingPathComponent("send.conf")
        try HostileShape.config.write(to: config, atomically: true, encoding: .utf8)
        let package = try shape.build(in: world, canary: canary)
        let before = TreeSnapshot.of(package)
        let watch = try canary.watch()
        // No agent runs: whatever send leaves in the Inbox stays there to be seen.
        let sent = try world.inboxctl("send", ["--config", config.path, package.path])
        #expect(sent.status == 1, "stdout: \(sent.stdout) stderr: \(sent.stderr)")
        #expect(shape.reasons.contains { sent.stderr.contains($0) }, "stderr: \(sent.stderr)")
        #expect(sent.stdout.isEmpty)
        #expect(world.allEntries(of: world.inbox).isEmpty)
        // The sender's own package is untouched, and nothing outside it was opened.
        #expect(TreeSnapshot.of(package) == before)
        #expect(watch.events() == [])
    }

    /// A directory whose name is no package type is moved aside as before: one warning, in failed/ whole, nothing
    /// delivered; and one made in place with mkdir (it cannot arrive whole), even with a package's name.
    @Test func aDirectoryThatIsNoPackageIsMovedAsideWithOneWarning() throws {
        let (world, handler) = try world()
        try world.start()
        let plain = try world.makePackage("Holiday photos", ["one.png": pngBytes(width: 1, height: 1),
                                                             "notes/day1.txt": Array("sun\n".utf8)])
        let before = TreeSnapshot.of(plain)
        try world.dropPackage(plain)
        let rejected = try world.waitForEvents("rejected")
        #expect(rejected.first?[field: "INBOX_FILE_KIND"] == "directory")
        #expect(rejected.first?[field: "PRIORITY"] == "4")
        #expect(mkdir(world.inbox.appendingPathComponent("Made in place.rtfd").path, 0o755) == 0)
        try world.waitForEvents("rejected", count: 2)
        try world.drop("after.txt", contents: Array("after\n".utf8))
        try world.waitForEvents("finished", ["INBOX_HANDLER=test.text.\(world.tag)"])

        #expect(world.outcomeEntries(naming: "Holiday photos").count == 1)
        #expect(world.outcomeEntries(naming: "Made in place.rtfd").count == 1)
        let kept = world.visibleEntries(of: world.failedDirectory)
        #expect(kept.count == 2, "failed/: \(kept)")
        let keptPlain = try #require(kept.first { $0.contains("Holiday photos") })
        #expect(TreeSnapshot.of(world.failedDirectory.appendingPathComponent(keptPlain)) == before)
        #expect(kept.contains { $0.contains("Made in place.rtfd") })
        #expect(world.events("dispatched", ["INBOX_HANDLER=\(handler)"]).isEmpty)
        #expect(world.allEntries(of: world.inbox).isEmpty)
    }

    /// A sender that is not root and keeps changing its package after the rename (from a working directory inside
    /// it, which follows the package wherever it is moved): refused as still being written, and nothing is
    /// delivered. Seen changing between two checks a wait apart, it is checked again through the writer back-off
    /// (about 3 s) and then refused; seen changing by the comparison in intake/ (a write just after a check that
    /// found it still), at once.
    @Test func aPackageThatKeepsChangingIsRefusedAfterTheBackOff() throws {
        let (world, handler) = try world()
        try world.start()
        let package = try world.makePackage(HostileShape.name, SamplePackages.rtfd)
        let stop = world.root.appendingPathComponent("stop-writing")
        let writer = try Self.writer(in: package, until: stop)
        defer {
            _ = FileManager.default.createFile(atPath: stop.path, contents: nil)
            writer.waitUntilExit()
        }
        try waitUntil("the writer is writing") { FileManager.default.fileExists(atPath: package.appendingPathComponent("w0").path) }
        let dropped = Date()
        try world.dropPackage(package)
        let rejected = try world.waitForEvents("rejected", timeout: 30)
        let elapsed = Date().timeIntervalSince(dropped)
        let reason = rejected.first?[field: "INBOX_REASON"] ?? ""
        // Seen changing by the settle checks, or by the comparison in intake/ after a write just after the check that
        // found it still: still written by its sender either way.
        #expect(reason.contains("was still being written") || reason.contains("was still writing it"), "reason: \(reason)")
        // Never longer than the back-off (Backoff.writer: 0.1 s doubling, five retries: about 3 s) and the walks.
        #expect(elapsed < 10, "refused after \(elapsed) s")
        #expect(world.events("dispatched", ["INBOX_HANDLER=\(handler)"]).isEmpty)
        #expect(world.recording(named: HostileShape.name) == nil)
        #expect(world.visibleEntries(of: world.failedDirectory).count == 1)
        #expect(world.allEntries(of: world.inbox).isEmpty)
        #expect(world.outcomeEntries(naming: HostileShape.name).count == 1)
    }

    /// The same sender stopping within the back-off (it adds 100 files, a few milliseconds apart, once the package is
    /// renamed in, then writes `done`): the package is taken once it is still, and its handler sees the tree as the
    /// writer left it, never a part of it.
    @Test func aPackageThatSettlesWithinTheBackOffIsDeliveredAsItWasLeft() throws {
        let (world, handler) = try world()
        try world.start()
        let package = try world.makePackage(HostileShape.name, SamplePackages.rtfd)
        let writer = try Self.writer(in: package, until: world.root.appendingPathComponent("never"), addingAfterRename: 100)
        try waitUntil("the writer is writing") { FileManager.default.fileExists(atPath: package.appendingPathComponent("w0").path) }
        try world.dropPackage(package)
        writer.waitUntilExit()
        // 0: it added every file; 2 (sh's status for a failed redirection): the package was handed over, and so no
        // longer its to write, before it was done.
        #expect(writer.terminationStatus == 0, "the writer was cut off: its package was taken before it settled")
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"], timeout: 30)
        #expect(finished.first?[field: "INBOX_EXIT_STATUS"] == "0")
        let recording = try #require(world.recording(named: HostileShape.name))
        let tree = SamplePackages.recordedTree(recording)
        #expect(tree.contains("file counter 440 " + Array("done\n".utf8).map { String(format: "%02x", $0) }.joined()),
                "\(tree.filter { $0.contains("counter") })")
        #expect(tree.filter { $0.hasPrefix("file a") }.count == 100)
        #expect(tree.filter { $0.hasPrefix("file w") }.count == 20)
        #expect(world.events("rejected").isEmpty)
        #expect(world.containerEntries(handler).isEmpty)
    }

    /// A writer as nobody, working inside `package` (made its own): it rewrites w0 ... w19 and `counter` in a tight
    /// loop until `stop` exists; with `addingAfterRename`, once the package has left staging/ it adds that many files
    /// instead, a few milliseconds apart, writes `done` to `counter` and exits.
    private static func writer(in package: URL, until stop: URL, addingAfterRename: Int? = nil) throws -> Process {
        for path in [package.path] + ((FileManager.default.subpaths(atPath: package.path) ?? []).map { package.path + "/" + $0 }) {
            #expect(chown(path, 65534, 65534) == 0)
        }
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        writer.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", """
            cd "$1" || exit 1
            i=0
            while [ ! -e "$2" ]; do
              i=$((i + 1))
              : > "w$((i % 20))"
              echo "$i" > counter
              if [ -n "$3" ] && [ "$i" -ge 20 ] && [ ! -d "$1" ]; then
                n=0
                while [ "$n" -lt "$3" ]; do : > "a$n" || exit 1; n=$((n + 1)); sleep 0.002; done
                echo done > counter || exit 1
                exit 0
              fi
            done
            """, "writer", package.path, stop.path, addingAfterRename.map(String.init) ?? ""]
        writer.standardOutput = FileHandle.nullDevice
        writer.standardError = FileHandle.nullDevice
        try writer.run()
        return writer
    }
}
