import Foundation
import Glibc
import InboxCore
import Testing
@testable import InboxSystem

/// A tree built inside a sandbox's package `P.rtfd` (which holds `TXT.rtf`), and what the check says of it.
struct HostileTree: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let build: @Sendable (PackageSandbox) throws -> Void
    let refusal: PackageRefusal

    init(_ name: String, _ refusal: PackageRefusal, _ build: @escaping @Sendable (PackageSandbox) throws -> Void) {
        testDescription = name
        self.build = build
        self.refusal = refusal
    }

    static let withoutMounts: [HostileTree] = [
        HostileTree("absolute symlink", .symlink(path: "link")) { try $0.symlink("P.rtfd/link", to: "/etc/passwd") },
        HostileTree("relative symlink out by ..", .symlink(path: "Data/up")) {
            try $0.file("outside/secret", "TOPSECRET", mode: 0o600)
            try $0.symlink("P.rtfd/Data/up", to: "../../outside/secret")
        },
        HostileTree("two-hop chain", .symlink(path: "a")) {
            try $0.symlink("P.rtfd/a", to: "b")
            try $0.symlink("P.rtfd/b", to: "/etc")
        },
        HostileTree("symlink to a directory inside", .symlink(path: "alias")) {
            try $0.directory("P.rtfd/real")
            try $0.symlink("P.rtfd/alias", to: "real")
        },
        HostileTree("symlink deep inside", .symlink(path: "d1/d2/d3/d4/link")) {
            try $0.file("P.rtfd/d1/d2/d3/d4/a.png")
            try $0.symlink("P.rtfd/d1/d2/d3/d4/link", to: "../../../../../outside")
        },
        HostileTree("hard link inside", .hardLink(path: "a.png")) {
            try $0.file("P.rtfd/a.png")
            try succeeded(link($0.at("P.rtfd/a.png"), $0.at("P.rtfd/b.png")), "link")
        },
        HostileTree("hard link to a file outside", .hardLink(path: "Data/f")) {
            try $0.file("outside/f", "TOPSECRET", mode: 0o600)
            try $0.directory("P.rtfd/Data")
            try succeeded(link($0.at("outside/f"), $0.at("P.rtfd/Data/f")), "link")
        },
        HostileTree("FIFO", .special(path: "pipe", kind: .fifo)) {
            try succeeded(mkfifo($0.at("P.rtfd/pipe"), 0o644), "mkfifo")
        },
        HostileTree("character device", .special(path: "Data/null", kind: .characterDevice)) {
            try $0.directory("P.rtfd/Data")
            try succeeded(mknod($0.at("P.rtfd/Data/null"), S_IFCHR | 0o666, dev_t(1 << 8 | 3)), "mknod")
        },
        HostileTree("block device", .special(path: "loop", kind: .blockDevice)) {
            try succeeded(mknod($0.at("P.rtfd/loop"), S_IFBLK | 0o600, dev_t(7 << 8)), "mknod")
        },
        HostileTree("socket", .special(path: "sock", kind: .socket)) { try bindSocket($0.at("P.rtfd/sock")) },
    ]

    static let withMounts: [HostileTree] = [
        HostileTree("tmpfs mounted inside", .mountPoint(path: "Data/mnt")) {
            try $0.directory("P.rtfd/Data/mnt")
            try $0.mountTemporaryFileSystem(at: "P.rtfd/Data/mnt")
            try $0.file("P.rtfd/Data/mnt/inside.png")
        },
        HostileTree("directory of the same filesystem bound inside", .mountPoint(path: "Data/bound")) {
            try $0.file("outside/dir/secret", "TOPSECRET", mode: 0o600)
            try $0.directory("P.rtfd/Data/bound")
            try $0.bind("outside/dir", at: "P.rtfd/Data/bound")
        },
        HostileTree("file of the same filesystem bound onto an entry", .mountPoint(path: "f")) {
            try $0.file("outside/secret", "TOPSECRET", mode: 0o600)
            try $0.file("P.rtfd/f")
            try $0.bind("outside/secret", at: "P.rtfd/f")
        },
    ]
}

func bindSocket(_ path: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8).prefix($0.count - 1)) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    try succeeded(bound, "bind")
}

let resolutions: [PackageResolution] = [.openat2, .byHand]

/// An RTFD: the text and its attachments.
func makeRTFD(_ sandbox: PackageSandbox, _ name: String = "P.rtfd") throws {
    try sandbox.file("\(name)/TXT.rtf", "{\\rtf1 hello}")
    try sandbox.file("\(name)/image.png", "PNGDATA")
    try sandbox.file("\(name)/Pasted Graphic.tiff", "TIFF")
}

/// The package form of a Pages document.
func makeIWork(_ sandbox: PackageSandbox, _ name: String = "Doc.pages") throws {
    try sandbox.file("\(name)/Index/Document.iwa", "doc")
    try sandbox.file("\(name)/Index/Metadata.iwa", "meta")
    try sandbox.file("\(name)/Data/a.png", "aa")
    try sandbox.file("\(name)/Data/b.jpg", "bbb")
    try sandbox.file("\(name)/Metadata/Properties.plist", "props")
    try sandbox.file("\(name)/Metadata/BuildVersionHistory.plist", "history")
    try sandbox.file("\(name)/preview.jpg", "preview!")
}

@Suite("Package trees: the check")
struct PackageCheckTests {
    @Test(arguments: resolutions)
    func anRTFDIsListedInByteOrderWithItsCountsAndBytes(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox)
        let manifest = try #require(try sandbox.check("P.rtfd", resolution: resolution).value)
        #expect(paths(manifest) == ["", "Pasted Graphic.tiff", "TXT.rtf", "image.png"])
        #expect(manifest.entryCount == 3)
        #expect(manifest.totalBytes == 4 + 13 + 7)
        #expect(manifest.topLevel.map(\.name) == ["Pasted Graphic.tiff", "TXT.rtf", "image.png"])
        #expect(manifest.entries.map(\.depth) == [0, 1, 1, 1])
        let txt = try #require(sandbox.status("P.rtfd/TXT.rtf"))
        #expect(manifest.entries[2].inode == UInt64(txt.st_ino) && manifest.entries[2].size == 13)
        #expect(manifest.root.inode == UInt64(try #require(sandbox.status("P.rtfd")).st_ino))
    }

    @Test(arguments: resolutions)
    func anIWorkPackageIsWalkedDepthFirst(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeIWork(sandbox)
        let manifest = try #require(try sandbox.check("Doc.pages", resolution: resolution).value)
        #expect(paths(manifest) == ["", "Data", "Data/a.png", "Data/b.jpg", "Index", "Index/Document.iwa",
                                    "Index/Metadata.iwa", "Metadata", "Metadata/BuildVersionHistory.plist",
                                    "Metadata/Properties.plist", "preview.jpg"])
        #expect(manifest.entries.map(\.depth) == [0, 1, 2, 2, 1, 2, 2, 1, 2, 2, 1])
        #expect(manifest.entries.map(\.kind) == [.directory, .directory, .regular, .regular, .directory, .regular,
                                                 .regular, .directory, .regular, .regular, .regular])
        #expect(manifest.entryCount == 10 && manifest.totalBytes == 2 + 3 + 3 + 4 + 7 + 5 + 8)
        #expect(manifest.topLevel.filter(\.isDirectory).map(\.name) == ["Data", "Index", "Metadata"])
    }

    @Test(arguments: HostileTree.withoutMounts, resolutions)
    func aHostileEntryIsRefusedWithItsPath(tree: HostileTree, resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox)
        try tree.build(sandbox)
        #expect(try sandbox.check("P.rtfd", resolution: resolution).failure == tree.refusal)
    }

    @Test(.enabled(if: Mounts.available, "this process cannot mount (needs root with CAP_SYS_ADMIN)"),
          arguments: HostileTree.withMounts, resolutions)
    func aMountPointInsideIsRefused(tree: HostileTree, resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox)
        try tree.build(sandbox)
        #expect(try sandbox.check("P.rtfd", resolution: resolution).failure == tree.refusal)
    }

    @Test(.enabled(if: Mounts.available, "this process cannot mount (needs root with CAP_SYS_ADMIN)"),
          arguments: resolutions)
    func aPackageThatIsItselfAMountIsRefused(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try sandbox.directory("P.rtfd")
        try sandbox.mountTemporaryFileSystem(at: "P.rtfd")
        try makeRTFD(sandbox)
        #expect(try sandbox.check("P.rtfd", resolution: resolution).failure == .mountPoint(path: "."))
    }

    /// `levels` directories nested in the package, and a file in the deepest when asked.
    private func nest(_ sandbox: PackageSandbox, _ levels: Int, file: Bool) throws {
        let deepest = "P.rtfd/" + Array(repeating: "d", count: levels).joined(separator: "/")
        try sandbox.directory(deepest)
        if file { try sandbox.file(deepest + "/leaf") }
    }

    @Test(arguments: resolutions)
    func thirtyTwoLevelsPassAndAThirtyThirdIsRefused(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try nest(sandbox, 32, file: false)
        let manifest = try #require(try sandbox.check("P.rtfd", resolution: resolution).value)
        #expect(manifest.entries.last?.depth == 32 && manifest.entryCount == 32)
        try nest(sandbox, 33, file: true)
        var visited = 0
        #expect(try sandbox.check("P.rtfd", resolution: resolution) { _ in visited += 1 }.failure == .tooDeep(limit: 32))
        #expect(visited == 32)
    }

    @Test func theDepthCountsLevelsOfDirectories() throws {
        let sandbox = try PackageSandbox()
        try nest(sandbox, 32, file: true)
        #expect(try sandbox.check("P.rtfd").value?.entries.last?.depth == 33)
        try sandbox.file("Q.rtfd/d/leaf")
        #expect(try sandbox.check("Q.rtfd", limits: PackageLimits(maxDepth: 1)).value?.entryCount == 2)
        #expect(try sandbox.check("Q.rtfd", limits: PackageLimits(maxDepth: 0)).failure == .tooDeep(limit: 0))
        try sandbox.file("Q.rtfd/d/e/leaf")
        #expect(try sandbox.check("Q.rtfd", limits: PackageLimits(maxDepth: 1)).failure == .tooDeep(limit: 1))
        #expect(try sandbox.check("Q.rtfd", limits: PackageLimits(maxDepth: 2)).value?.entryCount == 4)
    }

    private func fill(_ sandbox: PackageSandbox, _ directory: String, _ count: Int) throws {
        try sandbox.directory(directory)
        for index in 0..<count {
            let fd = open(sandbox.at("\(directory)/f\(index)"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            try succeeded(fd < 0 ? -1 : close(fd), "create")
        }
    }

    @Test func tenThousandEntriesPassAndTenThousandAndOneAreRefused() throws {
        let sandbox = try PackageSandbox(inMemory: true)
        try fill(sandbox, "P.rtfd", 10_000)
        #expect(try sandbox.check("P.rtfd").value?.entryCount == 10_000)
        try sandbox.file("P.rtfd/one-more")
        #expect(try sandbox.check("P.rtfd").failure == .tooManyEntries(limit: 10_000))
    }

    @Test func theWalkStopsAtTheEntryBoundWithoutVisitingTheRest() throws {
        let sandbox = try PackageSandbox(inMemory: true)
        try fill(sandbox, "P.rtfd/a", 60)
        try fill(sandbox, "P.rtfd/b", 60)
        try fill(sandbox, "Q.rtfd", 5_000)
        var visited = 0
        let limits = PackageLimits(maxEntries: 100)
        #expect(try sandbox.check("P.rtfd", limits: limits) { _ in visited += 1 }.failure == .tooManyEntries(limit: 100))
        #expect(visited <= 100)
        visited = 0
        #expect(try sandbox.check("Q.rtfd", limits: limits) { _ in visited += 1 }.failure == .tooManyEntries(limit: 100))
        #expect(visited == 0)
    }

    @Test func theTotalSizeIsBounded() throws {
        let sandbox = try PackageSandbox()
        try sandbox.file("P.rtfd/a", String(repeating: "a", count: 600))
        try sandbox.file("P.rtfd/Data/b", String(repeating: "b", count: 400))
        #expect(try sandbox.check("P.rtfd", limits: PackageLimits(maxBytes: 1000)).value?.totalBytes == 1000)
        try sandbox.file("P.rtfd/Data/c", "c")
        #expect(try sandbox.check("P.rtfd", limits: PackageLimits(maxBytes: 1000)).failure == .tooLarge(limit: 1000))
        // Sparse: its size counts, not its blocks; without a bound, any size passes.
        try succeeded(truncate(sandbox.at("P.rtfd/Data/c"), 1 << 40), "truncate")
        #expect(try sandbox.check("P.rtfd").value?.totalBytes == 1000 + (1 << 40))
    }

    /// A change made at a known point of the walk (when `when` is visited) to what was visited before, or ahead.
    struct Changing: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let when: String
        let change: @Sendable (PackageSandbox) throws -> Void
        let path: String
    }

    static let changes: [Changing] = [
        Changing(testDescription: "a visited file written to", when: "b", change: {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: $0.at("P.rtfd/a/x")))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("more".utf8))
            try handle.close()
        }, path: "a/x"),
        Changing(testDescription: "an entry added to a visited directory", when: "b", change: {
            try $0.file("P.rtfd/a/new")
        }, path: "a"),
        Changing(testDescription: "an entry added to the package's own directory", when: "b", change: {
            try $0.file("P.rtfd/c")
        }, path: "."),
        Changing(testDescription: "an entry removed before it was reached", when: "a/x", change: {
            try succeeded(unlink($0.at("P.rtfd/b")), "unlink")
        }, path: "b"),
        Changing(testDescription: "a visited file replaced by a symlink", when: "b", change: {
            try $0.symlink("P.rtfd/link", to: "/etc/passwd")
            try succeeded(rename($0.at("P.rtfd/link"), $0.at("P.rtfd/a/x")), "rename")
        }, path: "a"),
        Changing(testDescription: "a visited file's mode changed", when: "b", change: {
            try succeeded(chmod($0.at("P.rtfd/a/x"), 0o600), "chmod")
        }, path: "a/x"),
    ]

    @Test(arguments: changes, resolutions)
    func aTreeChangedWhileItIsWalkedIsStillBeingWritten(changing: Changing, resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try sandbox.file("P.rtfd/a/x", "x")
        try sandbox.file("P.rtfd/b", "b")
        var failure: (any Error)?
        let result = try sandbox.check("P.rtfd", resolution: resolution) { entry in
            guard String(decoding: entry.path, as: UTF8.self) == changing.when else { return }
            do { try changing.change(sandbox) } catch { failure = error }
        }
        #expect(failure == nil)
        #expect(result.failure == .changing(path: changing.path))
        #expect(result.failure?.passes == true)
    }

    @Test func aRefusalSaysWhatAndWhere() {
        #expect(PackageRefusal.symlink(path: "Data/link").reason == "contains a symbolic link: Data/link")
        #expect(PackageRefusal.mountPoint(path: ".").reason == "contains a mount point: .")
        #expect(!PackageRefusal.tooDeep(limit: 32).passes)
    }
}

@Suite("Package trees: what changed between two checks")
struct PackageChangeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let change: @Sendable (PackageSandbox) throws -> Void
        var allowingRemoval = true
        var ignoringRootChange = false
        let expected: PackageChange?
    }

    static func remove(_ sandbox: PackageSandbox, _ relative: String) throws {
        try FileManager.default.removeItem(atPath: sandbox.at("P.rtfd/" + relative))
    }

    static func append(_ sandbox: PackageSandbox, _ relative: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: sandbox.at("P.rtfd/" + relative)))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("more".utf8))
        try handle.close()
    }

    static let cases: [Case] = [
        Case(testDescription: "nothing", change: { _ in }, allowingRemoval: false, expected: nil),
        Case(testDescription: "a file added", change: { try $0.file("P.rtfd/Data/c.png") },
             expected: .added(path: "Data/c.png")),
        Case(testDescription: "a file added, removal not allowed", change: { try $0.file("P.rtfd/Data/c.png") },
             allowingRemoval: false, expected: .added(path: "Data/c.png")),
        Case(testDescription: "a directory added", change: { try $0.directory("P.rtfd/Data/New") },
             expected: .added(path: "Data/New")),
        Case(testDescription: "a file removed, allowed", change: { try remove($0, "Data/a.png") }, expected: nil),
        Case(testDescription: "a file removed, not allowed", change: { try remove($0, "Data/a.png") },
             allowingRemoval: false, expected: .removed(path: "Data/a.png")),
        Case(testDescription: "a directory removed whole, allowed", change: { try remove($0, "Data") }, expected: nil),
        Case(testDescription: "everything inside removed, allowed", change: {
            for name in ["Data", "Index", "TXT.rtf"] { try remove($0, name) }
        }, expected: nil),
        Case(testDescription: "one removed and another added", change: {
            try remove($0, "Data/a.png")
            try $0.file("P.rtfd/Data/c.png")
        }, expected: .added(path: "Data/c.png")),
        Case(testDescription: "a file created and removed again: the directory changed", change: {
            try $0.file("P.rtfd/Data/tmp")
            try remove($0, "Data/tmp")
        }, expected: .changed(path: "Data")),
        Case(testDescription: "a file replaced by another", change: {
            try $0.file("P.rtfd/Index/new", "{\\rtf1 hello}")
            try succeeded(rename($0.at("P.rtfd/Index/new"), $0.at("P.rtfd/TXT.rtf")), "rename")
        }, expected: .swapped(path: "TXT.rtf")),
        Case(testDescription: "a directory replaced by a file", change: {
            try remove($0, "Index")
            try $0.file("P.rtfd/Index")
        }, expected: .swapped(path: "Index")),
        Case(testDescription: "content written", change: { try append($0, "TXT.rtf") },
             expected: .changed(path: "TXT.rtf")),
        Case(testDescription: "a mode changed", change: { try succeeded(chmod($0.at("P.rtfd/Data/b.png"), 0o600), "chmod") },
             expected: .changed(path: "Data/b.png")),
        Case(testDescription: "an owner changed", change: {
            try succeeded(lchown($0.at("P.rtfd/Data/b.png"), 4321, gid_t.max), "lchown")
        }, expected: .changed(path: "Data/b.png")),
        Case(testDescription: "an attribute on an entry", change: {
            try $0.setAttribute("P.rtfd/Data/b.png", "user.test", "v")
        }, ignoringRootChange: true, expected: .changed(path: "Data/b.png")),
        Case(testDescription: "an attribute on the package's directory, ignored", change: {
            try $0.setAttribute("P.rtfd", "user.test", "v")
        }, allowingRemoval: false, ignoringRootChange: true, expected: nil),
        Case(testDescription: "an attribute on the package's directory", change: {
            try $0.setAttribute("P.rtfd", "user.test", "v")
        }, allowingRemoval: false, expected: .changed(path: ".")),
    ]

    @Test(arguments: cases)
    func theFirstDifference(_ test: Case) throws {
        let sandbox = try PackageSandbox()
        try sandbox.file("P.rtfd/TXT.rtf", "{\\rtf1 hello}")
        try sandbox.file("P.rtfd/Data/a.png", "a")
        try sandbox.file("P.rtfd/Data/b.png", "b")
        try sandbox.file("P.rtfd/Index/doc.iwa", "doc")
        let before = try #require(try sandbox.check("P.rtfd").value)
        try test.change(sandbox)
        let after = try #require(try sandbox.check("P.rtfd").value)
        #expect(after.change(since: before, allowingRemoval: test.allowingRemoval,
                             ignoringRootChange: test.ignoringRootChange) == test.expected)
    }

    @Test func aChangeSaysWhatHappenedToWhichEntry() {
        #expect(PackageChange.added(path: "Data/x.png").description == "entry Data/x.png was added")
        #expect(PackageChange.swapped(path: "TXT.rtf").description == "entry TXT.rtf was replaced by another file")
    }
}

@Suite("Package trees: hand-over, copy, removal, opening")
struct PackageActionTests {
    static let isRoot = geteuid() == 0

    @Test(.enabled(if: isRoot, "only root gives entries to another owner"), arguments: resolutions)
    func theHandOverGivesEveryEntryItsOwnerAndMode(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeIWork(sandbox)
        let root = try sandbox.openPackage("Doc.pages")
        defer { root.close() }
        let manifest = try #require(PackageTree.check(root, limits: PackageLimits(), resolution: resolution).value)
        #expect(PackageTree.handOver(root, manifest: manifest, owner: 4321, group: 8765, fileMode: 0o440,
                                     directoryMode: 0o770, resolution: resolution) == nil)
        for entry in manifest.entries {
            let st = try #require(sandbox.status("Doc.pages/" + String(decoding: entry.path, as: UTF8.self)))
            #expect(st.st_uid == 4321 && st.st_gid == 8765)
            #expect(st.st_mode & 0o7777 == (entry.kind == .directory ? 0o770 : 0o440))
        }
        // Without an owner, only the modes.
        #expect(PackageTree.handOver(root, manifest: manifest, owner: nil, group: nil, fileMode: 0o400,
                                     directoryMode: 0o700, resolution: resolution) == nil)
        #expect(sandbox.status("Doc.pages/Data/a.png").map { $0.st_uid == 4321 && $0.st_mode & 0o7777 == 0o400 } == true)
    }

    @Test(.enabled(if: isRoot, "only root gives entries to another owner"), arguments: resolutions)
    func theHandOverNeverActsOnAnotherInode(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeIWork(sandbox)
        try sandbox.file("outside/a.png", "outside")
        try sandbox.file("outside/b.jpg", "outside")
        let root = try sandbox.openPackage("Doc.pages")
        defer { root.close() }
        let manifest = try #require(PackageTree.check(root, limits: PackageLimits(), resolution: resolution).value)
        // A file replaced by another: refused there, the other untouched.
        try sandbox.file("Doc.pages/Index/new", "doc")
        try succeeded(rename(sandbox.at("Doc.pages/Index/new"), sandbox.at("Doc.pages/Index/Document.iwa")), "rename")
        #expect(PackageTree.handOver(root, manifest: manifest, owner: 4321, group: 8765, fileMode: 0o440,
                                     directoryMode: 0o770, resolution: resolution) == .staleEntry)
        let swapped = try #require(sandbox.status("Doc.pages/Index/Document.iwa"))
        #expect(swapped.st_uid == 0 && swapped.st_mode & 0o7777 == 0o644)
        // A directory replaced by a symlink to another: what it leads to is never changed.
        try FileManager.default.removeItem(atPath: sandbox.at("Doc.pages/Data"))
        try sandbox.symlink("Doc.pages/Data", to: "../outside")
        #expect(PackageTree.handOver(root, manifest: manifest, owner: 4321, group: 8765, fileMode: 0o440,
                                     directoryMode: 0o770, resolution: resolution) != nil)
        for name in ["outside", "outside/a.png", "outside/b.jpg"] {
            #expect(sandbox.status(name).map { $0.st_uid == 0 && $0.st_mode & 0o022 == 0 } == true, "\(name)")
            #expect(sandbox.status(name).map { $0.st_mode & 0o7777 == ($0.st_mode & S_IFMT == S_IFDIR ? 0o755 : 0o644) } == true)
        }
    }

    @Test(.enabled(if: isRoot, "only root gives entries to another owner"))
    func theHandOverRefusesAnotherPackagesManifest() throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox, "P.rtfd")
        try makeRTFD(sandbox, "Q.rtfd")
        let root = try sandbox.openPackage("P.rtfd")
        defer { root.close() }
        let other = try #require(try sandbox.check("Q.rtfd").value)
        #expect(PackageTree.handOver(root, manifest: other, owner: 4321, group: 8765, fileMode: 0o440,
                                     directoryMode: 0o770) == .staleEntry)
        for name in ["P.rtfd", "P.rtfd/TXT.rtf", "Q.rtfd", "Q.rtfd/TXT.rtf"] {
            #expect(sandbox.status(name)?.st_uid == 0, "\(name)")
        }
    }

    @Test(arguments: resolutions)
    func aCopyHasTheSameTreeWithOrdinaryModes(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeIWork(sandbox)
        try succeeded(chmod(sandbox.at("Doc.pages/preview.jpg"), 0o666), "chmod")
        try succeeded(chmod(sandbox.at("Doc.pages/Index/Metadata.iwa"), 0o4775), "chmod")
        try succeeded(chmod(sandbox.at("Doc.pages/Data"), 0o777), "chmod")
        try succeeded(chmod(sandbox.at("Doc.pages/Metadata"), 0o500), "chmod")
        try sandbox.setAttribute("Doc.pages", "user.inbox.test", "meta")
        try sandbox.directory("Inbox")
        let root = try sandbox.openPackage("Doc.pages")
        defer { root.close() }
        let inbox = try Directory(path: sandbox.at("Inbox"))
        let copied = PackageTree.copy(root, into: inbox, as: Array(".stage".utf8), limits: PackageLimits(),
                                      resolution: resolution)
        let copy = try #require(copied.value)
        let source = try #require(try sandbox.check("Doc.pages").value)
        #expect(paths(copy) == paths(source))
        #expect(copy.entries.map(\.kind) == source.entries.map(\.kind))
        #expect(copy.totalBytes == source.totalBytes)
        for entry in source.entries where entry.kind == .regular {
            let path = String(decoding: entry.path, as: UTF8.self)
            #expect(sandbox.contents("Inbox/.stage/" + path) == sandbox.contents("Doc.pages/" + path))
        }
        let mode = { (path: String) in sandbox.status("Inbox/.stage" + path).map { $0.st_mode & 0o7777 } }
        #expect(mode("") == 0o700)
        #expect(mode("/preview.jpg") == 0o644)
        #expect(mode("/Index/Metadata.iwa") == 0o755)
        #expect(mode("/Data") == 0o755)
        #expect(mode("/Metadata") == 0o700)
        #expect(mode("/Data/a.png") == 0o644)
        // The copy's manifest is the copy's.
        #expect(copy.root.inode == sandbox.status("Inbox/.stage").map { UInt64($0.st_ino) })
        #expect(copy.entries.dropFirst().allSatisfy { entry in
            sandbox.status("Inbox/.stage/" + String(decoding: entry.path, as: UTF8.self)).map { UInt64($0.st_ino) }
                == entry.inode
        })
        #expect(sandbox.attribute("Inbox/.stage", "user.inbox.test") == "meta")
    }

    @Test(arguments: HostileTree.withoutMounts, resolutions)
    func aCopyRefusesWhatTheCheckRefusesAndLeavesNothing(tree: HostileTree, resolution: PackageResolution) throws {
        try copyRefuses(tree, resolution)
    }

    @Test(.enabled(if: Mounts.available, "this process cannot mount (needs root with CAP_SYS_ADMIN)"),
          arguments: HostileTree.withMounts, resolutions)
    func aCopyRefusesAMountPointInside(tree: HostileTree, resolution: PackageResolution) throws {
        try copyRefuses(tree, resolution)
    }

    private func copyRefuses(_ tree: HostileTree, _ resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox)
        try tree.build(sandbox)
        try sandbox.directory("Inbox")
        let outside = try sandbox.ageFiles(under: "outside")
        defer { for file in outside { #expect(!sandbox.wasRead(file), "\(file) was read") } }
        let root = try sandbox.openPackage("P.rtfd")
        defer { root.close() }
        let copied = PackageTree.copy(root, into: try Directory(path: sandbox.at("Inbox")), as: Array(".stage".utf8),
                                      limits: PackageLimits(), resolution: resolution)
        guard case .failure(.refused(let refusal)) = copied else {
            Issue.record("copied: \(copied)")
            return
        }
        #expect(refusal == tree.refusal)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.at("Inbox")) == [])
    }

    /// Replaced between the check and the copy (the hook): each is refused when the copy reaches it, and nothing it
    /// leads to is read.
    struct Replacement: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let replace: @Sendable (PackageSandbox) throws -> Void
        let path: String
    }

    static let replacements: [Replacement] = [
        Replacement(testDescription: "a file replaced by a symlink to a secret", replace: {
            try succeeded(unlink($0.at("P.rtfd/image.png")), "unlink")
            try $0.symlink("P.rtfd/image.png", to: $0.at("outside/secret"))
        }, path: "image.png"),
        Replacement(testDescription: "a file replaced by a FIFO", replace: {
            try succeeded(unlink($0.at("P.rtfd/image.png")), "unlink")
            try succeeded(mkfifo($0.at("P.rtfd/image.png"), 0o644), "mkfifo")
        }, path: "image.png"),
        Replacement(testDescription: "a directory replaced by a symlink", replace: {
            try FileManager.default.removeItem(atPath: $0.at("P.rtfd/Data"))
            try $0.symlink("P.rtfd/Data", to: $0.at("outside"))
        }, path: "Data"),
        Replacement(testDescription: "an entry added to a directory", replace: {
            try $0.file("P.rtfd/Data/new")
        }, path: "Data"),
        Replacement(testDescription: "an entry added to the package's own directory", replace: {
            try $0.file("P.rtfd/new")
        }, path: "."),
        Replacement(testDescription: "a file written to", replace: {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: $0.at("P.rtfd/image.png")))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("more".utf8))
            try handle.close()
        }, path: "image.png"),
    ]

    @Test(arguments: replacements, resolutions)
    func aCopyVerifiesEachEntryAsItOpensIt(replacement: Replacement, resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox)
        try sandbox.file("P.rtfd/Data/secret", "data")
        try sandbox.file("outside/secret", "TOPSECRET", mode: 0o600)
        try sandbox.directory("Inbox")
        let root = try sandbox.openPackage("P.rtfd")
        defer { root.close() }
        var failure: (any Error)?
        var outside: [String] = []
        let copied = PackageTree.copy(root, into: try Directory(path: sandbox.at("Inbox")), as: Array(".stage".utf8),
                                      limits: PackageLimits(), resolution: resolution) {
            do {
                try replacement.replace(sandbox)
                outside = try sandbox.ageFiles(under: "outside")
            } catch { failure = error }
        }
        #expect(!outside.isEmpty)
        for file in outside { #expect(!sandbox.wasRead(file), "\(file) was read") }
        #expect(failure == nil)
        guard case .failure(.refused(let refusal)) = copied else {
            Issue.record("copied: \(copied)")
            return
        }
        #expect(refusal == .changing(path: replacement.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.at("Inbox")) == [])
    }

    @Test(arguments: resolutions)
    func aRemovalTakesEverythingAndFollowsNoLink(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeIWork(sandbox)
        try sandbox.file("outside/keep.txt", "keep")
        try sandbox.symlink("Doc.pages/Data/file-link", to: "../../outside/keep.txt")
        try sandbox.symlink("Doc.pages/Data/dir-link", to: sandbox.at("outside"))
        try succeeded(mkfifo(sandbox.at("Doc.pages/Index/pipe"), 0o644), "mkfifo")
        try bindSocket(sandbox.at("Doc.pages/sock"))
        try sandbox.directory("Doc.pages/" + Array(repeating: "d", count: 40).joined(separator: "/"))
        let parent = try Directory(path: sandbox.path)
        #expect(PackageTree.remove(Array("Doc.pages".utf8), in: parent, resolution: resolution) == nil)
        #expect(!sandbox.exists("Doc.pages"))
        #expect(sandbox.contents("outside/keep.txt") == "keep")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.at("outside")) == ["keep.txt"])
        // Gone already: nothing to do.
        #expect(PackageTree.remove(Array("Doc.pages".utf8), in: parent, resolution: resolution) == nil)
    }

    @Test func aRemovalEntersNoMoreThanItsBoundOfLevels() throws {
        let sandbox = try PackageSandbox()
        try sandbox.file("P.rtfd/d/d/d/d/leaf")
        try sandbox.file("P.rtfd/d/d/d/x")
        try sandbox.file("P.rtfd/TXT.rtf")
        let parent = try Directory(path: sandbox.path)
        #expect(PackageTree.remove(Array("P.rtfd".utf8), in: parent, resolution: .detected, levels: 3) == .tooManyLinks)
        #expect(sandbox.exists("P.rtfd/d/d/d/d/leaf") && !sandbox.exists("P.rtfd/d/d/d/x"))
        #expect(!sandbox.exists("P.rtfd/TXT.rtf"))
        #expect(PackageTree.remove(Array("P.rtfd".utf8), in: parent, resolution: .detected, levels: 4) == nil)
        #expect(!sandbox.exists("P.rtfd"))
    }

    @Test(arguments: resolutions)
    func aRemovalOfALinkRemovesTheLinkOnly(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox)
        try sandbox.symlink("Link.rtfd", to: "P.rtfd")
        let parent = try Directory(path: sandbox.path)
        #expect(PackageTree.remove(Array("Link.rtfd".utf8), in: parent, resolution: resolution) == nil)
        #expect(!sandbox.exists("Link.rtfd"))
        #expect(sandbox.contents("P.rtfd/TXT.rtf") == "{\\rtf1 hello}")
    }

    @Test(.enabled(if: Mounts.available, "this process cannot mount (needs root with CAP_SYS_ADMIN)"),
          arguments: resolutions)
    func aRemovalLeavesAMountPointAndSaysSo(resolution: PackageResolution) throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox)
        try sandbox.directory("P.rtfd/Data/mnt")
        try sandbox.mountTemporaryFileSystem(at: "P.rtfd/Data/mnt")
        try sandbox.file("P.rtfd/Data/mnt/inside.png", "inside")
        try sandbox.file("P.rtfd/Data/z.png")
        try sandbox.file("outside/secret", "TOPSECRET")
        try sandbox.file("P.rtfd/bound")
        try sandbox.bind("outside/secret", at: "P.rtfd/bound")
        // Directories read after either mount point are removed all the same.
        for index in 0..<8 { try sandbox.file("P.rtfd/e\(index)/f\(index)/x") }
        let parent = try Directory(path: sandbox.path)
        #expect(PackageTree.remove(Array("P.rtfd".utf8), in: parent, resolution: resolution) == .mountPointBusy)
        #expect(sandbox.contents("P.rtfd/Data/mnt/inside.png") == "inside")
        #expect(sandbox.contents("outside/secret") == "TOPSECRET")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.at("P.rtfd")).sorted() == ["Data", "bound"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.at("P.rtfd/Data")) == ["mnt"])
    }

    @Test func openingAPackageOpensADirectoryOnly() throws {
        let sandbox = try PackageSandbox()
        try makeRTFD(sandbox)
        try sandbox.symlink("Link.rtfd", to: "P.rtfd")
        try sandbox.file("File.rtfd", "not a directory")
        try succeeded(mkfifo(sandbox.at("Pipe.rtfd"), 0o644), "mkfifo")
        let parent = try Directory(path: sandbox.path)
        guard case .opened(let opened) = parent.openPackage(Array("P.rtfd".utf8)) else {
            Issue.record("P.rtfd was not opened")
            return
        }
        defer { opened.descriptor.close() }
        #expect(opened.status.st_ino == sandbox.status("P.rtfd")?.st_ino)
        #expect(fcntl(opened.descriptor.rawValue, F_GETFL) & O_ACCMODE == O_RDONLY)
        #expect(fcntl(opened.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        func refusal(_ name: String) -> EntryKind? {
            if case .refused(let kind) = parent.openPackage(Array(name.utf8)) { kind } else { nil }
        }
        #expect(refusal("Link.rtfd") == .symlink)
        #expect(refusal("File.rtfd") == .regular)
        #expect(refusal("Pipe.rtfd") == .fifo)
        guard case .gone = parent.openPackage(Array("Missing.rtfd".utf8)) else {
            Issue.record("a missing package was not gone")
            return
        }
    }
}

@Suite("Package trees: the manifest's sums")
struct PackageManifestSumTests {
    /// Sparse files where no size bound is set may together pass Int64.max: the sum stops there, it does not trap.
    @Test func totalBytesStopsAtInt64Max() {
        var directory = stat(), file = stat()
        directory.st_mode = S_IFDIR | 0o755
        file.st_mode = S_IFREG | 0o644
        file.st_size = off_t(1) << 62
        let entries = [PackageEntry(path: [], kind: .directory, depth: 0, status: directory)]
            + (0..<3).map { PackageEntry(path: Array("f\($0)".utf8), kind: .regular, depth: 1, status: file) }
        #expect(PackageManifest(entries: entries).totalBytes == .max)
        #expect(PackageManifest(entries: Array(entries.prefix(2))).totalBytes == Int64(1) << 62)
    }
}
