import Foundation
import Glibc
import InboxSystem
import Testing

/// Temporary places for inboxctl and package documents, without an agent: an Inbox, a directory the packages are made
/// in, an empty handlers.d, and an inboxd.conf of the test's.
final class PackagePlaces: @unchecked Sendable {
    // @unchecked: each test owns its places and uses them from one task at a time.
    let root: URL
    let inbox: URL
    let source: URL
    let handlers: URL
    let config: URL

    init(config text: String = "", _ name: String = #function) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("inboxctl-pkg-\(name.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))")
        inbox = root.appendingPathComponent("Inbox")
        source = root.appendingPathComponent("source")
        handlers = root.appendingPathComponent("handlers.d")
        config = root.appendingPathComponent("inboxd.conf")
        for directory in [inbox, source, handlers] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        try text.write(to: config, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// `inboxctl send` into this Inbox, with this configuration and handlers.d.
    func send(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.inboxctl.path, ["send", "--inbox", inbox.path, "--handlers", handlers.path,
                                         "--config", config.path] + arguments)
    }

    /// Every entry of the Inbox, hidden ones included.
    var everything: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: inbox.path)) ?? []).sorted() }
}

/// Package documents made for the tests, and what a tree holds.
enum Packages {
    /// An RTFD: its text, a picture and a nested note; 5 entries.
    static func rtfd(_ url: URL) throws {
        try make(url, files: ["TXT.rtf": Array(#"{\rtf1\ansi hello}"#.utf8), "Pictures/photo.png": pngBytes(width: 2, height: 2),
                              "Pictures/Nested/deep.txt": Array("deep\n".utf8)])
    }

    static let rtfdEntries = 5
    static var rtfdBytes: Int { 18 + pngBytes(width: 2, height: 2).count + 5 }

    /// A directory at `url` with `files` (relative paths; their directories are made).
    static func make(_ url: URL, files: [String: [UInt8]]) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (path, bytes) in files {
            let file = url.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: file)
        }
    }

    /// Every entry below `url`, by relative path: "dir", or a file's contents; links and others by their kind. Nothing
    /// is followed.
    static func tree(of url: URL, below prefix: String = "") -> [String: String] {
        var result: [String: String] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        for name in names {
            let entry = url.appendingPathComponent(name), path = prefix + name
            var st = stat()
            guard lstat(entry.path, &st) == 0 else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                result[path] = "dir"
                result.merge(tree(of: entry, below: path + "/")) { $1 }
            case S_IFREG:
                result[path] = (try? String(decoding: Data(contentsOf: entry), as: UTF8.self)) ?? "?"
            default:
                result[path] = "mode \(st.st_mode & S_IFMT)"
            }
        }
        return result
    }

    /// 33 nested directories: one level more than MaxPackageDepth='s default.
    static func tooDeep(_ url: URL) throws {
        let path = (0..<33).map { _ in "d" }.joined(separator: "/")
        try make(url, files: ["TXT.rtf": Array("x".utf8), path + "/last.txt": Array("x".utf8)])
    }
}

/// `inboxctl send DIR`: a package document staged under a hidden name, its metadata on its directory, renamed in
/// whole; whatever the agent would refuse in it refused before anything appears in the Inbox; a plain directory
/// refused up front.
@Suite struct InboxctlPackageSendTests {
    @Test func aCleanRTFDIsStagedHiddenThenRenamedInWithItsAttributesAndTheSameTree() throws {
        let places = try PackagePlaces()
        let source = places.source.appendingPathComponent("Report.rtfd")
        try Packages.rtfd(source)
        let events = try Inotify()
        _ = try events.addWatch(places.inbox.path, mask: [.create, .movedTo, .movedFrom, .delete])
        let result = try places.send(["--source-app", "com.example.mail", "--annotation", #"{"a":1}"#, source.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == places.inbox.appendingPathComponent("Report.rtfd").path + "\n")
        #expect(result.stderr.isEmpty)
        #expect(places.everything == ["Report.rtfd"])
        let placed = places.inbox.appendingPathComponent("Report.rtfd")
        #expect(Packages.tree(of: placed) == Packages.tree(of: source))
        #expect(Packages.tree(of: placed).count == Packages.rtfdEntries)
        #expect(attribute("user.inbox.source-app", of: placed) == "com.example.mail")
        #expect(attribute("user.inbox.annotation", of: placed) == #"{"a":1}"#)
        // The Inbox saw one directory made, under a hidden name, and that directory renamed to its name: never a
        // visible one half filled.
        let seen = try events.read().map { (mask: $0.mask, name: displayName($0.name)) }
        let created = seen.filter { $0.mask.contains(.create) }
        #expect(created.count == 1, "\(seen)")
        let staged = try #require(created.first)
        #expect(staged.mask.contains(.isDirectory) && staged.name.hasPrefix(".inboxctl-send-"), "\(seen)")
        #expect(seen.filter { $0.mask.contains(.movedFrom) }.map(\.name) == [staged.name])
        #expect(seen.filter { $0.mask.contains(.movedTo) }.map(\.name) == ["Report.rtfd"])
    }

    @Test func jsonSaysItIsAPackageWithItsEntriesAndBytes() throws {
        let places = try PackagePlaces()
        let source = places.source.appendingPathComponent("Report.rtfd")
        try Packages.rtfd(source)
        let result = try places.send(["--json", source.path])
        #expect(result.status == 0, "\(result.stderr)")
        let inbox = places.inbox.path
        #expect(result.stdout == #"{"inbox":"\#(inbox)","handler":null,"sent":[{"file":"\#(source.path)","path":"\#(inbox)/Report.rtfd","#
                + #""package":true,"entries":\#(Packages.rtfdEntries),"bytes":\#(Packages.rtfdBytes)}],"failed":[]}"# + "\n")
        // The next one of the same name takes the next name, as a file does.
        let again = try places.send(["--json", source.path])
        #expect(again.stdout.contains(#""path":"\#(inbox)/Report-2.rtfd","package":true"#), "\(again.stdout)")
        #expect(places.everything == ["Report-2.rtfd", "Report.rtfd"])
    }

    @Test func metadataTooLargeForAttributesTravelsInASidecar() throws {
        let places = try PackagePlaces()
        let source = places.source.appendingPathComponent("Report.rtfd")
        try Packages.rtfd(source)
        let big = "\"" + String(repeating: "x", count: 20_000) + "\""
        let result = try places.send(["--annotation", big, source.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(places.everything == [".Report.rtfd.inbox-meta", "Report.rtfd"])
        let sidecar = try String(contentsOf: places.inbox.appendingPathComponent(".Report.rtfd.inbox-meta"), encoding: .utf8)
        #expect(sidecar == #"{"annotation":\#(big)}"# + "\n")
        #expect(attributeNames(places.inbox.appendingPathComponent("Report.rtfd").path).isEmpty)
    }

    /// A package the agent would refuse, built in `url`, and the reason (`PackageRefusal.reason`) both give.
    struct Hostile: CustomTestStringConvertible, Sendable {
        let name: String
        let config: String
        let reason: String
        let build: @Sendable (URL) throws -> Void
        var testDescription: String { name }
    }

    static let hostile: [Hostile] = [
        Hostile(name: "an absolute symbolic link", config: "", reason: "contains a symbolic link: Data/passwd") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8), "Data/keep.txt": Array("k".utf8)])
            try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("Data/passwd").path,
                                                       withDestinationPath: "/etc/passwd")
        },
        Hostile(name: "a relative symbolic link out", config: "", reason: "contains a symbolic link: up") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8)])
            try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("up").path,
                                                       withDestinationPath: "../../..")
        },
        Hostile(name: "a chain of two links", config: "", reason: "contains a symbolic link: a") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8)])
            try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("a").path, withDestinationPath: "b")
            try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("b").path, withDestinationPath: "/etc")
        },
        Hostile(name: "a hard link", config: "", reason: "contains a file with more than one link: attachment.rtf") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8)])
            let outside = url.deletingLastPathComponent().appendingPathComponent("secret-\(UUID().uuidString)")
            try Data("secret".utf8).write(to: outside)
            #expect(link(outside.path, url.appendingPathComponent("attachment.rtf").path) == 0)
        },
        Hostile(name: "a FIFO", config: "", reason: "contains a FIFO: pipe") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8)])
            #expect(mkfifo(url.appendingPathComponent("pipe").path, 0o600) == 0)
        },
        Hostile(name: "33 levels", config: "", reason: "is more than 32 levels deep (MaxPackageDepth=)") { url in
            try Packages.tooDeep(url)
        },
        Hostile(name: "10,001 entries", config: "", reason: "has more than 10000 entries (MaxPackageEntries=)") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8)])
            for index in 0..<10_000 {
                let fd = open(url.appendingPathComponent("e\(index)").path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
                #expect(fd >= 0)
                close(fd)
            }
        },
        Hostile(name: "over MaxInboxBytes=", config: "[Agent]\nMaxInboxBytes=1000\n",
                reason: "is larger than 1000 bytes (MaxPackageSize=)") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8), "Data/big.bin": [UInt8](repeating: 7, count: 2000)])
        },
        // The agent's own bounds, from its inboxd.conf: what it would refuse is what send refuses.
        Hostile(name: "over MaxPackageSize=", config: "[Agent]\nMaxInboxBytes=1M\nMaxPackageSize=500\n",
                reason: "is larger than 500 bytes (MaxPackageSize=)") { url in
            try Packages.make(url, files: ["TXT.rtf": [UInt8](repeating: 1, count: 300), "b.bin": [UInt8](repeating: 2, count: 300)])
        },
        Hostile(name: "over MaxPackageDepth=", config: "[Agent]\nMaxPackageDepth=2\n",
                reason: "is more than 2 levels deep (MaxPackageDepth=)") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8), "a/b/c/d.txt": Array("x".utf8)])
        },
        Hostile(name: "over MaxPackageEntries=", config: "[Agent]\nMaxPackageEntries=3\n",
                reason: "has more than 3 entries (MaxPackageEntries=)") { url in
            try Packages.make(url, files: ["TXT.rtf": Array("x".utf8), "a.txt": [], "b.txt": [], "c.txt": []])
        },
    ]

    @Test(arguments: hostile)
    func whatTheAgentWouldRefuseIsRefusedWithItsReasonAndLeavesNothing(_ hostile: Hostile) throws {
        let places = try PackagePlaces(config: hostile.config)
        let source = places.source.appendingPathComponent("Report.rtfd")
        try hostile.build(source)
        let result = try places.send([source.path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "inboxctl: cannot send \(source.path): the package \(hostile.reason); nothing was sent\n")
        #expect(places.everything.isEmpty, "\(places.everything)")
        let json = try places.send(["--json", source.path])
        #expect(json.status == 1)
        #expect(json.stdout == #"{"inbox":"\#(places.inbox.path)","handler":null,"sent":[],"failed":[{"file":"\#(source.path)","#
                + #""error":"the package \#(hostile.reason); nothing was sent"}]}"# + "\n")
        #expect(places.everything.isEmpty, "\(places.everything)")
    }

    @Test(.enabled(if: getuid() == 0, "a device node and a mount need root"))
    func aDeviceAndAMountPointAreRefusedAndLeaveNothing() throws {
        let places = try PackagePlaces()
        let device = places.source.appendingPathComponent("Device.rtfd")
        try Packages.make(device, files: ["TXT.rtf": Array("x".utf8)])
        #expect(try run("/usr/bin/mknod", ["-m", "600", device.appendingPathComponent("null").path, "c", "1", "3"]).status == 0)
        let refused = try places.send([device.path])
        #expect(refused.status == 1)
        #expect(refused.stderr == "inboxctl: cannot send \(device.path): the package contains a character device: null; "
                + "nothing was sent\n")
        #expect(places.everything.isEmpty)

        let mounted = places.source.appendingPathComponent("Mounted.rtfd")
        try Packages.make(mounted, files: ["TXT.rtf": Array("x".utf8), "mnt/.keep": []])
        let point = mounted.appendingPathComponent("mnt").path
        let mountedTmpfs = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", point])
        try #require(mountedTmpfs.status == 0, "\(mountedTmpfs.stderr)")
        defer { _ = try? run("/bin/umount", ["-l", point]) }
        try Data("on another filesystem".utf8).write(to: mounted.appendingPathComponent("mnt/inside.txt"))
        let result = try places.send([mounted.path])
        #expect(result.status == 1)
        #expect(result.stderr == "inboxctl: cannot send \(mounted.path): the package contains a mount point: mnt; "
                + "nothing was sent\n")
        #expect(places.everything.isEmpty, "\(places.everything)")
    }

    @Test func aPlainDirectoryIsRefusedUpFrontNamingThePackageTypes() throws {
        let places = try PackagePlaces()
        let photos = places.source.appendingPathComponent("Photos")
        try Packages.make(photos, files: ["a.png": pngBytes(width: 1, height: 1)])
        let result = try places.send([photos.path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("inboxctl: cannot send \(photos.path): it is a directory whose name has no "
                                        + "package type's extension (."), "\(result.stderr)")
        #expect(result.stderr.contains(".app, ") && result.stderr.contains(".key, ") && result.stderr.contains(".rtfd"),
                "\(result.stderr)")
        #expect(result.stderr.hasSuffix("; 'inboxctl types --tree com.apple.package' lists them): the agent takes a "
                                        + "directory only as a package document; give it one (--name NAME.EXT) or its "
                                        + "type (--type UTI)\n"), "\(result.stderr)")
        #expect(places.everything.isEmpty)

        // A type that is no package's is refused too; a package type names it by its extension.
        let text = try places.send(["--type", "public.plain-text", photos.path])
        #expect(text.status == 1)
        #expect(text.stderr == "inboxctl: cannot send \(photos.path): it is a directory, and public.plain-text is not a "
                + "package type: a directory is sent whole only as a package document ('inboxctl types --tree "
                + "com.apple.package' lists them)\n")
        #expect(places.everything.isEmpty)
        let typed = try places.send(["--type", "com.apple.rtfd", photos.path])
        #expect(typed.status == 0, "\(typed.stderr)")
        #expect(typed.stdout == places.inbox.appendingPathComponent("Photos.rtfd").path + "\n")
        #expect(attribute("user.inbox.content-type", of: places.inbox.appendingPathComponent("Photos.rtfd")) == "com.apple.rtfd")
        #expect(places.everything == ["Photos.rtfd"])
    }

    /// The shared Inbox of the system instance (root's, 1733): a user may make and rename entries in it, not list it.
    @Test(.enabled(if: nobodyCanRunTheAgent, "the built inboxctl is not executable by nobody (uid 65534) from here"))
    func anotherUserSendsAPackageIntoTheSharedInbox() throws {
        let places = try PackagePlaces()
        #expect(chmod(places.root.path, 0o755) == 0 && chmod(places.source.path, 0o755) == 0)
        #expect(chmod(places.inbox.path, 0o1733) == 0 && chmod(places.handlers.path, 0o755) == 0)
        #expect(chmod(places.config.path, 0o644) == 0)
        let source = places.source.appendingPathComponent("Report.rtfd")
        try Packages.rtfd(source)
        #expect(try run("/bin/chmod", ["-R", "a+rX", source.path]).status == 0)
        let result = try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "-i",
                                                  "HOME=/nonexistent", "PATH=/usr/bin:/bin", Binaries.inboxctl.path, "send",
                                                  "--inbox", places.inbox.path, "--handlers", places.handlers.path,
                                                  "--config", places.config.path, source.path])
        #expect(result.status == 0, "\(result.stderr)")
        let placed = places.inbox.appendingPathComponent("Report.rtfd")
        #expect(Packages.tree(of: placed) == Packages.tree(of: source))
        var st = stat()
        #expect(lstat(placed.path, &st) == 0 && st.st_uid == 65534 && st.st_mode & 0o7777 == 0o700)
        #expect(places.everything == ["Report.rtfd"])
    }

    /// As a symbolic link given for a file is (the target's data, sent under the link's name), so for a package: the
    /// argument is the user's to name; nothing inside it is ever followed.
    @Test func aSymbolicLinkGivenAsTheArgumentIsTakenAsAFileArgumentIs() throws {
        let places = try PackagePlaces()
        let source = places.source.appendingPathComponent("Report.rtfd")
        try Packages.rtfd(source)
        let shortcut = places.source.appendingPathComponent("Shortcut.rtfd")
        try FileManager.default.createSymbolicLink(atPath: shortcut.path, withDestinationPath: "Report.rtfd")
        let result = try places.send([shortcut.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Packages.tree(of: places.inbox.appendingPathComponent("Shortcut.rtfd")) == Packages.tree(of: source))
    }
}

/// `inboxctl info`, `handlers`, `list`, `retry`, `discard` and `log` of package documents, without an agent: a package
/// held in failed/ is made by hand as the agent leaves one (its delivery and failure records on its directory).
@Suite struct InboxctlPackageHeldTests {
    static func world(_ name: String = #function) throws -> (AgentHarness, String) {
        let world = try AgentHarness(name)
        let handler = "test.rtfd.\(world.tag)"
        try world.register(handler, contentTypes: "com.apple.rtfd")
        return (world, handler)
    }

    @Test func infoAndHandlersTypeAPackageByItsExtensionAndMarker() throws {
        let (world, handler) = try Self.world()
        let report = world.root.appendingPathComponent("Report.rtfd")
        try Packages.rtfd(report)
        let info = try world.inboxctl("info", [report.path])
        #expect(info.status == 0, "\(info.stderr)")
        let rows = info.stdout.split(separator: "\n").map(String.init)
        #expect(rows.contains("Name:         Report.rtfd"), "\(info.stdout)")
        #expect(rows.contains { $0.hasPrefix("Type:         com.apple.rtfd") }, "\(info.stdout)")
        #expect(rows.contains("Package:      a directory of \(Packages.rtfdEntries) entries, \(Packages.rtfdBytes) bytes"),
                "\(info.stdout)")
        #expect(rows.contains { $0.contains(handler) && $0.contains("*") }, "\(info.stdout)")
        #expect(!rows.contains { $0.hasPrefix("Note:") }, "\(info.stdout)")

        let json = try world.inboxctl("info", ["--json", report.path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]).first
        #expect(object?["contentType"] as? String == "com.apple.rtfd")
        #expect((object?["package"] as? [String: Any])?["entries"] as? Int == Packages.rtfdEntries)
        #expect((object?["package"] as? [String: Any])?["bytes"] as? Int == Packages.rtfdBytes)
        #expect(object?["chosen"] as? String == handler, "\(json.stdout)")

        let handlers = try world.inboxctl("handlers", [report.path])
        #expect(handlers.status == 0, "\(handlers.stderr)")
        #expect(handlers.stdout.hasPrefix("Handlers for Report.rtfd (com.apple.rtfd):\n"), "\(handlers.stdout)")
        #expect(handlers.stdout.contains(handler))

        // open --with sends it to that handler, as a file; preview shows what the built-in previews know of it.
        let opened = try world.inboxctl("open", ["--with", handler, report.path])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == world.inbox.appendingPathComponent("Report.rtfd").path + "\n")
        #expect(attribute("user.inbox.handler", of: world.inbox.appendingPathComponent("Report.rtfd")) == handler)
        let preview = try world.inboxctl("preview", [report.path])
        #expect(preview.status == 0, "\(preview.stderr)")
        #expect(preview.stdout.hasPrefix("[1/1] Report.rtfd\nName:     Report.rtfd\nType:     com.apple.rtfd"),
                "\(preview.stdout)")
        #expect(preview.stdout.contains("Package:  \(Packages.rtfdEntries) entries, \(Packages.rtfdBytes) bytes"),
                "\(preview.stdout)")

        // A file's info is as it was: no package row.
        let note = world.root.appendingPathComponent("note.txt")
        try Data("words\n".utf8).write(to: note)
        let file = try world.inboxctl("info", [note.path])
        #expect(!file.stdout.contains("Package:"), "\(file.stdout)")
    }

    @Test func infoSaysWhatTheAgentWouldRefuseInAPackageAndALinkToOneIsNotFollowed() throws {
        let (world, _) = try Self.world()
        let report = world.root.appendingPathComponent("Report.rtfd")
        try Packages.make(report, files: ["TXT.rtf": Array("x".utf8)])
        try FileManager.default.createSymbolicLink(atPath: report.appendingPathComponent("passwd").path,
                                                   withDestinationPath: "/etc/passwd")
        let info = try world.inboxctl("info", [report.path])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("Note:         the package contains a symbolic link: passwd: from a drop Inbox the "
                                     + "agent would refuse it and move it to failed/\n"), "\(info.stdout)")
        let link = world.root.appendingPathComponent("Link.rtfd")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: report.path)
        let linked = try world.inboxctl("info", [link.path])
        #expect(linked.status == 1)
        #expect(linked.stderr == "inboxctl: \(link.path): is a symbolic link\n")
        // A directory of no package type: the agent would move it aside.
        let photos = world.root.appendingPathComponent("Photos")
        try Packages.make(photos, files: ["a.txt": Array("a".utf8)])
        let plain = try world.inboxctl("info", [photos.path])
        #expect(plain.stdout.contains("Note:         a directory whose name has no package type's extension: from a drop "
                                      + "Inbox the agent would move it aside to failed/\n"), "\(plain.stdout)")
    }

    /// A package as the agent keeps it in failed/ after its handler failed: its records on its directory.
    static func held(_ world: AgentHarness, _ name: String, id: String, uid: UInt32 = getuid()) throws -> URL {
        let package = world.failedDirectory.appendingPathComponent(name)
        try Packages.rtfd(package)
        try setAttribute("user.inboxd.delivery", "\(id) \(uid) \(name)", on: package)
        try setAttribute("user.inboxd.failure", "exit status 1 after 1 attempt", on: package)
        try setAttribute("user.inboxd.attempts", "1", on: package)
        return package
    }

    @Test func aPackageInFailedIsListedRetriedByRenameAndDiscardedWhole() throws {
        let (world, _) = try Self.world()
        let id = String(repeating: "ab", count: 16), otherID = String(repeating: "cd", count: 16)
        let package = try Self.held(world, "Report.rtfd", id: id)
        let expected = Packages.tree(of: package)
        _ = try Self.held(world, "Other.rtfd", id: otherID)
        // A directory the agent moved aside unopened: no package, no records.
        try Packages.make(world.failedDirectory.appendingPathComponent("rejected-Photos"), files: ["a.txt": Array("a".utf8)])

        let list = try world.inboxctl("list", ["failed"])
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "failed/ (\(world.failedDirectory.path)): 3 files")
        let report = try #require(lines.first { $0.hasPrefix("Report.rtfd/ ") }, "\(list.stdout)")
        #expect(report.contains("  \(id)  ") && report.hasSuffix("  package, \(Packages.rtfdEntries) entries, "
                                                                   + "\(Packages.rtfdBytes) bytes: exit status 1 after 1 attempt"),
                "\(report)")
        let plain = try #require(lines.first { $0.hasPrefix("rejected-Photos/ ") }, "\(list.stdout)")
        #expect(plain.contains(" -  ") && plain.hasSuffix("  a directory that is no package document, moved aside "
                                                          + "(inboxctl discard removes it)"), "\(plain)")
        let places = " --inbox \(world.inbox.path) --handlers \(world.handlers.path) --state \(world.state.path)"
        #expect(lines.contains("  inboxctl retry failed/Report.rtfd" + places), "\(list.stdout)")
        #expect(!lines.contains { $0.contains("retry failed/rejected-Photos") }, "\(list.stdout)")

        let json = try world.inboxctl("list", ["failed", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let files = try #require(object["files"] as? [[String: Any]])
        let listed = try #require(files.first { $0["name"] as? String == "Report.rtfd" })
        #expect(listed["package"] as? Bool == true)
        #expect(listed["entries"] as? Int == Packages.rtfdEntries)
        #expect(listed["bytes"] as? Int == Packages.rtfdBytes)
        #expect(listed["deliveryID"] as? String == id)
        let moved = try #require(files.first { $0["name"] as? String == "rejected-Photos" })
        #expect(moved["package"] as? Bool == false && moved["retry"] is NSNull)

        // retry by its delivery id: one rename back, its failure record gone, its tree as it was.
        let retried = try world.inboxctl("retry", [id])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stdout == "\(package.path) -> \(world.inbox.path)/Report.rtfd\n")
        let back = world.inbox.appendingPathComponent("Report.rtfd")
        #expect(Packages.tree(of: back) == expected)
        #expect(attribute("user.inboxd.failure", of: back) == nil)
        #expect(attribute("user.inboxd.attempts", of: back) == nil)
        #expect(world.allEntries(of: world.inbox) == ["Report.rtfd"])
        #expect(!FileManager.default.fileExists(atPath: package.path))

        // A directory that is no package is not sent again: the agent would only move it aside.
        let refused = try world.inboxctl("retry", ["rejected-Photos"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("a directory that is no package document"), "\(refused.stderr)")
        #expect(world.allEntries(of: world.inbox) == ["Report.rtfd"])

        // discard: a package whole, and the directory moved aside.
        let discarded = try world.inboxctl("discard", ["failed/Other.rtfd/"])
        #expect(discarded.status == 0, "\(discarded.stderr)")
        #expect(discarded.stdout == "removed \(world.failedDirectory.path)/Other.rtfd\n")
        let removed = try world.inboxctl("discard", ["--json", "rejected-Photos"])
        #expect(removed.stdout == #"{"removed":["\#(world.failedDirectory.path)/rejected-Photos"],"failed":[]}"# + "\n")
        #expect(world.allEntries(of: world.failedDirectory).isEmpty)
    }

    @Test(.enabled(if: getuid() == 0, "giving a package back to its sender needs root"))
    func aRetriedPackageIsGivenBackToItsSenderEntryByEntry() throws {
        let (world, _) = try Self.world()
        let id = String(repeating: "ef", count: 16)
        _ = try Self.held(world, "Report.rtfd", id: id, uid: 4321)
        let retried = try world.inboxctl("retry", ["Report.rtfd"])
        #expect(retried.status == 0, "\(retried.stderr)")
        let back = world.inbox.appendingPathComponent("Report.rtfd")
        for path in ["", "/TXT.rtf", "/Pictures", "/Pictures/Nested/deep.txt"] {
            var st = stat()
            #expect(lstat(back.path + path, &st) == 0 && st.st_uid == 4321, "\(path)")
        }
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs for the Inbox needs root"))
    func aPackageRetriedIntoAnInboxOnAnotherFilesystemIsCopiedThenRemoved() throws {
        let (world, _) = try Self.world()
        let id = String(repeating: "0f", count: 16)
        let package = try Self.held(world, "Report.rtfd", id: id)
        let expected = Packages.tree(of: package)
        let mounted = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", world.inbox.path])
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? run("/bin/umount", ["-l", world.inbox.path]) }
        let retried = try world.inboxctl("retry", ["--json", id])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stdout == #"{"retried":[{"from":"\#(package.path)","to":"\#(world.inbox.path)/Report.rtfd"}],"failed":[]}"#
                + "\n")
        #expect(Packages.tree(of: world.inbox.appendingPathComponent("Report.rtfd")) == expected)
        #expect(world.allEntries(of: world.inbox) == ["Report.rtfd"])
        #expect(world.allEntries(of: world.failedDirectory).isEmpty)
    }

    @Test func logTakesAPackageNameWithItsTrailingSlash() throws {
        let (world, _) = try Self.world()
        let log = try world.inboxctl("log", ["--file", "Report.rtfd/", "-n", "0"])
        #expect(log.stderr.hasPrefix("journalctl -n 0 -t inboxd INBOX_FILE=\(world.inbox.path)/Report.rtfd "
                                     + "INBOX_FILE=\(world.failedDirectory.path)/Report.rtfd "), "\(log.stderr)")
    }
}

/// A sender's view of a package the agent holds: read back at start-up from its directory's records, marked as one.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxctlPackageSenderViewTests {
    @Test func aHeldPackageIsInItsSendersViewMarkedAsOne() throws {
        let world = try AgentHarness()
        let id = String(repeating: "5a", count: 16)
        _ = try InboxctlPackageHeldTests.held(world, "Report.rtfd", id: id)
        try world.start()
        let places = ["--inbox", world.inbox.path, "--handlers", world.handlers.path, "--state", world.state.path,
                      "--runtime-dir", world.runtime.path]
        var listed: (status: Int32, stdout: String, stderr: String) = (0, "", "")
        try waitUntil("the sender's view lists the package") {
            listed = try run(Binaries.inboxctl.path, ["list", "--mine", "--json"] + places)
            return listed.stdout.contains(id)
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let file = try #require((object["files"] as? [[String: Any]])?.first { $0["deliveryID"] as? String == id })
        #expect(file["name"] as? String == "Report.rtfd")
        #expect(file["package"] as? Bool == true)
        #expect(file["state"] as? String == "failed")
        let text = try run(Binaries.inboxctl.path, ["list", "--mine"] + places)
        #expect(text.stdout.split(separator: "\n").contains { $0.hasPrefix("Report.rtfd/  failed ") }, "\(text.stdout)")
        let status = try run(Binaries.inboxctl.path, ["status", "Report.rtfd/"] + places)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.hasPrefix("Report.rtfd/: failed (package)\n"), "\(status.stdout)")
    }
}

/// End to end through the real agent: a package sent with inboxctl reaches its handler whole; one its handler failed on
/// is listed in failed/, retried, delivered, and its sender's view says it was a package.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxctlPackageDeliveryTests {
    @Test func aSentPackageFailsIsListedRetriedAndDeliveredWhole() throws {
        let world = try AgentHarness()
        let handler = "test.rtfd.\(world.tag)"
        try world.register(handler, contentTypes: "com.apple.rtfd", exit: 1)
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        let source = world.root.appendingPathComponent("Report.rtfd")
        try Packages.rtfd(source)
        let sent = try world.inboxctl("send", ["--source-app", "com.example.mail", source.path])
        #expect(sent.status == 0, "\(sent.stderr)")
        let failed = try #require(try world.waitForEvents("failed").first)
        let id = try #require(failed["INBOX_DELIVERY_ID"] as? String)
        #expect(failed["INBOX_PACKAGE"] as? String == "1")
        let list = try world.inboxctl("list", ["failed"])
        #expect(list.stdout.split(separator: "\n").contains { line in
            line.hasPrefix("Report.rtfd/ ") && line.contains(id) && line.contains("package, \(Packages.rtfdEntries) entries, ")
        }, "\(list.stdout)")

        let fixed = world.registrationText(handler, exec: "\(world.recorderURL.path) --file %f", contentTypes: "com.apple.rtfd",
                                           environment: "EXIT_CODE=0")
        try world.write(fixed, to: world.handlerFile(handler))
        try world.waitForRegistrationLoads(2)
        let retried = try world.inboxctl("retry", [id])
        #expect(retried.status == 0, "\(retried.stderr)")
        let finished = try #require(try world.waitForEvents("finished").first)
        let newID = try #require(finished["INBOX_DELIVERY_ID"] as? String)
        let record = try #require(world.recordings().first { $0.key.hasPrefix(newID) }?.value, "\(world.recordings().keys)")
        #expect(record.contains("INBOX_PACKAGE=1\n"), "\(record)")
        #expect(record.contains("INBOX_NAME=Report.rtfd\n"), "\(record)")
        #expect(record.contains("INBOX_SOURCE_APP=com.example.mail\n"), "\(record)")
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        try waitUntil("the Inbox is empty") { world.allEntries(of: world.inbox).isEmpty }
    }
}
