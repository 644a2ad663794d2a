import Glibc
import InboxCore
@testable import InboxSystem
import Testing

/// Package documents through the agent's middle, in process: real directories renamed into a drop Inbox, the real
/// check, typing, moves by inode and hand-over; a recorder in place of the dispatcher.
@Suite("Package documents through intake and routing, in process")
struct PackageRoutingTests {
    static let registrations = [
        "test.rtfd": "[DocumentType]\nContentTypes=com.apple.rtfd\nRank=Owner\n",
        "test.text": "[DocumentType]\nContentTypes=public.plain-text\nRank=Default\n",
    ]

    enum Entry {
        case file(String)
        case directory
        case symlink(String)
    }

    /// An RTFD as TextEdit writes one: its text and an attachment in a folder.
    static let report: [(String, Entry)] = [
        ("TXT.rtf", .file("{\\rtf1 hello}\n")), ("Pictures", .directory), ("Pictures/a.txt", .file("attached\n")),
    ]

    /// Makes `name` with `entries` under the world's root (outside the Inbox) and renames it into the drop Inbox whole.
    static func dropPackage(_ world: MiddleWorld, _ name: String, _ entries: [(String, Entry)],
                            into place: String? = nil) throws {
        let staged = world.root + "/.stage-" + name
        try #require(mkdir(staged, 0o755) == 0)
        for (path, entry) in entries {
            let full = staged + "/" + path
            switch entry {
            case .file(let text): try MiddleWorld.write(full, Array(text.utf8))
            case .directory: try #require(mkdir(full, 0o755) == 0)
            case .symlink(let target): try #require(symlink(target, full) == 0)
            }
        }
        try #require(rename(staged, (place ?? world.inbox) + "/" + name) == 0)
    }

    static func status(_ path: String) -> stat? {
        var st = stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    /// Records a delivery on a package the agent holds, as `Arrival.stamp` does.
    static func stamp(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return ExtendedAttributes(FileDescriptor(rawValue: fd)).write(AgentAttribute.delivery, "\(id) 0 Report.rtfd") == nil
    }

    /// An attribute of a directory, read through its descriptor.
    static func attribute(_ key: String, of path: String) -> String? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return ExtendedAttributes(FileDescriptor(rawValue: fd)).readString(key, limit: 4096)
    }

    /// Every entry below `path` with its inode, relative paths sorted.
    static func inodes(_ path: String, _ prefix: String = "") -> [String: UInt64] {
        var result: [String: UInt64] = [:]
        guard let directory = try? Directory(path: path), let names = try? directory.entries() else { return result }
        for name in names.map({ displayName($0) }) {
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            guard let st = status(path + "/" + name) else { continue }
            result[relative] = UInt64(st.st_ino)
            if (st.st_mode & S_IFMT) == S_IFDIR { result.merge(inodes(path + "/" + name, relative)) { a, _ in a } }
        }
        return result
    }

    /// A package renamed in reaches its handler's container Inbox whole, by rename: every entry keeps its inode, the
    /// directories get the container Inbox's mode and the files a single copy's, and the delivery says it is a
    /// package of its type.
    @Test func aPackageRenamedInReachesTheContainerWholeByInode() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle()
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        let dropped = Self.inodes(world.inbox + "/Report.rtfd")
        let root = try #require(Self.status(world.inbox + "/Report.rtfd"))
        try middle.take("Report.rtfd")

        try #require(middle.handoff.deliveries.count == 1)
        let delivery = middle.handoff.deliveries[0]
        #expect(delivery.isPackage)
        #expect(delivery.handler == "test.rtfd")
        #expect(delivery.contentType == "com.apple.rtfd")
        #expect(delivery.name == "Report.rtfd")
        let placed = try world.state.container(for: "test.rtfd", identity: nil).inbox.path + "/Report.rtfd"
        #expect(delivery.path == placed)
        #expect(Self.status(placed)?.st_ino == root.st_ino)
        #expect(Self.inodes(placed) == dropped)
        #expect(dropped.count == 3)
        #expect(world.names(in: "Inbox").isEmpty)
        #expect(world.names(in: "state/intake").isEmpty)
        #expect(Self.attribute(AgentAttribute.delivery, of: placed)?.hasSuffix(" Report.rtfd") == true)

        let identity = world.catalog().identity(for: "test.rtfd")
        for relative in ["", "/Pictures", "/TXT.rtf", "/Pictures/a.txt"] {
            let st = try #require(Self.status(placed + relative))
            let isDirectory = (st.st_mode & S_IFMT) == S_IFDIR
            let mode = st.st_mode & 0o7777
            if let identity {
                #expect(mode == (isDirectory ? 0o770 : 0o440), "\(relative)")
                #expect(st.st_uid == 0 && st.st_gid == identity.gid, "\(relative)")
            } else {
                #expect(mode == (isDirectory ? 0o700 : 0o400), "\(relative)")
            }
        }
    }

    /// A package whose tree changes between its last check in the drop Inbox and its check in intake/ (its sender
    /// writing after it had been still for a wait, or through a directory it kept open) is refused whole to failed/
    /// at once, the change named in its failure attribute; nothing is delivered.
    @Test func aPackageChangedAfterItsCheckIsRefusedWhole() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle()
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        var checks = 0
        middle.reader.checkPackage = { root, limits in
            checks += 1
            let result = PackageTree.check(root, limits: limits)
            // The check that found it still (the second) is the last before its move.
            if checks == 2 {
                try? MiddleWorld.write(world.inbox + "/Report.rtfd/Pictures/late.txt", Array("late\n".utf8))
            }
            return result
        }
        try middle.take("Report.rtfd")

        #expect(checks == 2)
        #expect(middle.handoff.deliveries.isEmpty)
        #expect(world.names(in: "state/failed") == ["Report.rtfd"])
        #expect(world.names(in: "state/failed/Report.rtfd/Pictures") == ["a.txt", "late.txt"])
        let reason = Self.attribute(AgentAttribute.failure, of: world.root + "/state/failed/Report.rtfd")
        #expect(reason?.contains("was still writing it") == true, "\(reason ?? "none")")
        #expect(reason?.contains("Pictures/late.txt") == true, "\(reason ?? "none")")
        #expect(world.names(in: "state/intake").isEmpty)
        #expect(world.names(in: "Inbox").isEmpty)
    }

    struct SettleCase: Sendable, CustomTestStringConvertible {
        let testDescription: String
        /// How many checks after the first find one more entry than the check before (its sender adding one between
        /// them, never while one is under way).
        let changingChecks: Int

        static let retries = Backoff.writer.maxRetries ?? 0
        /// Whether a check finds the tree still before the writer back-off has no wait left.
        var settles: Bool { changingChecks < Self.retries }
        /// The checks made: the first, one per change, and the one that finds the tree still; or the first and one
        /// per wait of the writer back-off when it never is.
        var checks: Int { settles ? changingChecks + 2 : 1 + Self.retries }
    }

    static let settleCases = [
        SettleCase(testDescription: "a quiet package: checked once more, a wait later", changingChecks: 0),
        SettleCase(testDescription: "changed between the first and second check, then still", changingChecks: 1),
        SettleCase(testDescription: "changed until the last wait, then still", changingChecks: SettleCase.retries - 1),
        SettleCase(testDescription: "changed at every check", changingChecks: .max),
    ]

    /// The settle rule: a dropped package is taken only once two checks at least a wait of the writer back-off apart
    /// find the same tree. Each check passes by itself (nothing changes while it walks); a change between two checks
    /// waits the next, doubled, wait; a package still changing when no wait is left is refused whole, its reason
    /// naming the last entry that changed.
    @Test(arguments: settleCases)
    func aDroppedPackageIsTakenOnlyOnceTwoChecksAWaitApartFindItStill(_ testCase: SettleCase) throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle()
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        var starts: [ContinuousClock.Instant] = []
        var added: [String] = []
        middle.reader.checkPackage = { root, limits in
            starts.append(.now)
            if starts.count >= 2 && added.count < testCase.changingChecks {
                added.append("more-\(starts.count).txt")
                try? MiddleWorld.write(world.inbox + "/Report.rtfd/" + added.last!, Array("more\n".utf8))
            }
            return PackageTree.check(root, limits: limits)
        }
        try middle.take("Report.rtfd")

        #expect(starts.count == testCase.checks)
        for (index, pair) in zip(starts, starts.dropFirst()).enumerated() {
            let wait = try #require(Backoff.writer.delay(before: index + 1))
            #expect(pair.1 - pair.0 >= wait, "check \(index + 2) came \(pair.1 - pair.0) after the one before")
        }
        if testCase.settles {
            #expect(middle.handoff.deliveries.map(\.name) == ["Report.rtfd"])
            let placed = try world.state.container(for: "test.rtfd", identity: nil).inbox.path + "/Report.rtfd"
            #expect(Set(Self.inodes(placed).keys) == Set(["TXT.rtf", "Pictures", "Pictures/a.txt"] + added))
            #expect(world.names(in: "state/failed").isEmpty)
        } else {
            #expect(middle.handoff.deliveries.isEmpty)
            #expect(world.names(in: "state/failed") == ["Report.rtfd"])
            let reason = Self.attribute(AgentAttribute.failure, of: world.root + "/state/failed/Report.rtfd")
            #expect(reason == PackageRefusal.changing(path: try #require(added.last)).reason)
        }
        #expect(middle.router.waitingCount == 0)
        #expect(world.names(in: "Inbox").isEmpty)
    }

    /// A package whose tree changes while it is checked is checked again after the writer back-off: delivered once two
    /// checks find it settled, refused whole with the check's reason when none does.
    @Test(arguments: [1, Int.max])
    func aPackageStillBeingWrittenIsCheckedAgainThenRefused(_ changingChecks: Int) throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle()
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        var checks = 0
        let package = world.inbox + "/Report.rtfd"
        middle.reader.checkPackage = { root, limits in
            checks += 1
            var changed = checks > changingChecks
            // Its sender adds an entry while the walk is under way.
            return PackageTree.check(root, limits: limits, resolution: .detected, visited: { _ in
                guard !changed else { return }
                changed = true
                try? MiddleWorld.write(package + "/more-\(checks).txt", Array("more\n".utf8))
            })
        }
        try middle.take("Report.rtfd")

        if changingChecks == 1 {
            // The one that saw it change, one more (the tree's first sight), and one a wait later finding it still.
            #expect(checks == 3)
            #expect(middle.handoff.deliveries.map(\.name) == ["Report.rtfd"])
            #expect(world.names(in: "state/failed").isEmpty)
        } else {
            #expect(checks == 1 + (Backoff.writer.maxRetries ?? 0))
            #expect(middle.handoff.deliveries.isEmpty)
            #expect(world.names(in: "state/failed") == ["Report.rtfd"])
            let reason = Self.attribute(AgentAttribute.failure, of: world.root + "/state/failed/Report.rtfd")
            #expect(reason?.hasPrefix("was still being written") == true, "\(reason ?? "none")")
        }
        #expect(middle.router.waitingCount == 0)
        #expect(world.names(in: "Inbox").isEmpty)
    }

    /// A package with a symbolic link inside is refused whole to failed/, the link never followed, the reason in its
    /// failure attribute.
    @Test func aPackageWithASymlinkInsideIsRefusedWholeAndTheLinkIsNotFollowed() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        try MiddleWorld.write(world.root + "/secret", Array("secret\n".utf8))
        let middle = try world.middle()
        try Self.dropPackage(world, "Report.rtfd", Self.report + [("Pictures/b.txt", .symlink(world.root + "/secret"))])
        try middle.take("Report.rtfd")

        #expect(middle.handoff.deliveries.isEmpty)
        let kept = world.root + "/state/failed/Report.rtfd"
        #expect(world.names(in: "state/failed") == ["Report.rtfd"])
        #expect(world.names(in: "state/failed/Report.rtfd/Pictures") == ["a.txt", "b.txt"])
        #expect(Self.status(kept + "/Pictures/b.txt").map { ($0.st_mode & S_IFMT) == S_IFLNK } == true)
        #expect(Self.attribute(AgentAttribute.failure, of: kept) == "contains a symbolic link: Pictures/b.txt")
        #expect(Self.status(world.root + "/secret").map { $0.st_mode & 0o7777 } == 0o644, "the link's target untouched")
    }

    /// The Inbox bounds count a package as one file of all its files' bytes: charged so while it is held, and a
    /// package past a bound is refused whole.
    @Test func theInboxBoundsCountAPackageAsOneFileOfAllItsBytes() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle()
        var bounds = InboxBounds()
        bounds.maxBytes = 40
        let quotas = InboxQuotas(bounds: bounds, inboxes: [world.inbox])
        middle.router.quotas = quotas
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        // 24 bytes: alone it would fit, beside the first (23) it does not.
        try Self.dropPackage(world, "Second.rtfd", [("TXT.rtf", .file("{}\n\n")), ("b", .file(String(repeating: "b", count: 20)))])
        // The second is taken once the first is delivered (both wait for their settle check).
        try middle.take(inTurn: ["Report.rtfd", "Second.rtfd"])
        let bytes = Int64(Self.report.reduce(0) { total, entry in
            if case .file(let text) = entry.1 { total + text.utf8.count } else { total }
        })
        #expect(quotas.usage(of: world.inbox).files == 1)
        #expect(quotas.usage(of: world.inbox).bytes == bytes)
        #expect(middle.handoff.deliveries.map(\.name) == ["Report.rtfd"])
        #expect(world.names(in: "state/failed") == ["Second.rtfd"])
        #expect(Self.attribute(AgentAttribute.failure, of: world.statePath + "/failed/Second.rtfd") != nil)
    }

    static let id = "0123456789abcdef0123456789abcdef"

    struct HeldCase: Sendable, CustomTestStringConvertible {
        let testDescription: String
        /// Where the package is left, relative to the state directory, and under which name.
        let place: String
        let name: String
        /// Whether its handler is registered only after the first look (a reload).
        var registeredLater = false
    }

    static let heldCases = [
        HeldCase(testDescription: "in intake/, under the name recorded on it", place: "intake", name: "2049-77"),
        HeldCase(testDescription: "in its container Inbox", place: "containers/test.rtfd/Inbox", name: "Report.rtfd"),
        HeldCase(testDescription: "in unhandled/, once a reload adds its handler", place: "unhandled",
                 name: "Report.rtfd", registeredLater: true),
    ]

    /// A package the agent held when it stopped is checked again and delivered as the recorded delivery, whatever
    /// directory of the agent's it was in.
    @Test(arguments: heldCases)
    func aHeldPackageIsTakenAgain(_ testCase: HeldCase) throws {
        let world = try MiddleWorld(registrations: testCase.registeredLater
                                    ? ["test.text": Self.registrations["test.text"]!] : Self.registrations)
        defer { world.remove() }
        if testCase.place.hasPrefix("containers/") { _ = try world.state.container(for: "test.rtfd", identity: nil) }
        let place = world.statePath + "/" + testCase.place
        try Self.dropPackage(world, testCase.name, Self.report, into: place)
        #expect(Self.stamp(place + "/" + testCase.name))
        let middle = try world.middle()
        middle.recovery.recoverContainers()
        middle.recovery.redispatchUnhandled()
        if testCase.registeredLater {
            #expect(middle.handoff.deliveries.isEmpty)
            #expect(world.names(in: "state/unhandled") == ["Report.rtfd"])
            try MiddleWorld.write(world.handlers + "/test.rtfd.handler", Array(
                "[Handler]\nIdentifier=test.rtfd\nExec=/bin/true %f\n\(Self.registrations["test.rtfd"]!)".utf8))
            middle.router.use(world.catalog())
            middle.recovery.redispatchUnhandled()
        }
        try #require(middle.handoff.deliveries.count == 1)
        let delivery = middle.handoff.deliveries[0]
        #expect(delivery.id == Self.id)
        #expect(delivery.isPackage)
        #expect(delivery.handler == "test.rtfd")
        #expect(delivery.name == "Report.rtfd")
        #expect(world.names(in: "state/containers/test.rtfd/Inbox") == ["Report.rtfd"])
        #expect(world.names(in: "state/containers/test.rtfd/Inbox/Report.rtfd") == ["Pictures", "TXT.rtf"])
        #expect(world.names(in: "state/intake").isEmpty)
        #expect(world.names(in: "state/unhandled").isEmpty)
    }

    /// A held package whose tree is no longer one the agent takes (a link appeared in it between runs) is refused to
    /// failed/ whole, not delivered.
    @Test func aHeldPackageIsCheckedAgain() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let inbox = try world.state.container(for: "test.rtfd", identity: nil).inbox.path
        try Self.dropPackage(world, "Report.rtfd", Self.report + [("link", .symlink("/etc/hostname"))], into: inbox)
        #expect(Self.stamp(inbox + "/Report.rtfd"))
        let middle = try world.middle()
        middle.recovery.recoverContainers()
        #expect(middle.handoff.deliveries.isEmpty)
        #expect(world.names(in: "state/failed") == ["Report.rtfd"])
        #expect(Self.attribute(AgentAttribute.failure, of: world.statePath + "/failed/Report.rtfd")
                == "contains a symbolic link: link")
    }

    /// A directory in intake/ without the delivery recorded on it (a crash between its rename there and its stamp)
    /// has no name to be typed by: moved aside to failed/ at start-up, not left there.
    @Test func anUnrecordedDirectoryInIntakeIsMovedAside() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        try Self.dropPackage(world, "2049-5", Self.report, into: world.statePath + "/intake")
        let middle = try world.middle()
        middle.recovery.recoverContainers()
        #expect(middle.handoff.deliveries.isEmpty)
        #expect(world.names(in: "state/intake").isEmpty)
        #expect(world.names(in: "state/failed") == ["rejected-2049-5"])
    }

    /// A plain directory, and a directory made in place whatever its name, are not documents: the reader says why,
    /// and nothing is opened for them.
    @Test func directoriesThatAreNotPackagesAreNotTaken() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle()
        try Self.dropPackage(world, "Photos", Self.report)
        try Self.dropPackage(world, "Report.rtfd", Self.report)
        let inbox = try Directory(path: world.inbox)
        func why(_ name: String, madeInPlace: Bool = false) -> String? {
            switch middle.reader.take(Array(name.utf8), in: inbox, origin: .dropped, madeInPlace: madeInPlace) {
            case .notADocument(.directory, let why): return why
            case .arrival(let arrival):
                arrival.file.descriptor.close()
                return arrival.package == nil ? "not checked" : "a package"
            default: return "something else"
            }
        }
        #expect(why("Photos") == ArrivalReader.notAPackage)
        #expect(why("Report.rtfd", madeInPlace: true) == ArrivalReader.madeInPlace)
        #expect(why("Report.rtfd") == "a package")
    }
}
