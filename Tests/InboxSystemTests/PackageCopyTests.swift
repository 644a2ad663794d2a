import Foundation
import Glibc
@testable import InboxCore
@testable import InboxSystem
import Synchronization
import Testing

/// A package's custody for an attempt (`InboxCopies`), on a real state directory: the package is placed by hand in a
/// container Inbox as Placement leaves one (directories 0770, files 0440), opened for the attempt by its directory,
/// its manifest taken; real `sh` handlers change it (without Landlock, which would refuse them: see
/// PackageSandboxTests for what the kernel refuses), and the after-exit check says what changed, naming the entry;
/// what a handler may do, remove entries or the whole package, passes. Then each outcome's file work: removed by
/// descriptor (nothing beside it, behind a link or on a mount inside), an attempt recorded on the directory, kept in
/// failed/ whole.
@Suite(.serialized, .enabled(if: getuid() == 0, "the package's modes are root's"))
struct PackageCopyTests {
    @Test func aPackageIsHeldByItsDirectoryWithTheAttemptRecordedOnIt() throws {
        let rig = try CopyRig()
        rig.placePackage("Report.rtfd")
        let held = try rig.open(rig.delivery("Report.rtfd"), attempt: 2)
        let st = try held.descriptor.status()
        #expect(st.st_mode & S_IFMT == S_IFDIR)
        #expect(st.st_ino == (try rig.status(rig.inbox("Report.rtfd"))).st_ino)
        #expect(ExtendedAttributes(held.descriptor).readString(AgentAttribute.started, limit: 64) == "2")
        guard case .package(let manifest, _) = held.given else {
            Issue.record("held as a file")
            return
        }
        #expect(manifest.entryCount == 5)
        #expect(!held.leased, "a directory takes no lease")
        // Nothing happened: nothing to report.
        let end = held.release(of: rig.delivery("Report.rtfd"))
        #expect(end.violation == nil && end.interference == nil)
    }

    /// What a handler did to its package (run without Landlock), and what the after-exit check says: nil for what a
    /// handler may do (remove entries, or all of it), else a violation naming the entry.
    @Test(arguments: [
        ("rm \"$P/Pictures/pic.png\"", nil),
        ("rm -rf \"$P/Pictures\"", nil),
        ("rm -rf \"$P\"", nil),
        ("echo x > \"$P/new.txt\"", "new.txt was added"),
        ("mkdir \"$P/Pictures/Deep/More\"", "Pictures/Deep/More was added"),
        ("echo more >> \"$P/Pictures/Deep/notes.txt\"", "Pictures/Deep/notes.txt was changed"),
        ("chmod 0666 \"$P/TXT.rtf\"", "TXT.rtf was changed"),
        ("cp \"$P/TXT.rtf\" \"$P/.swap\" && rm \"$P/TXT.rtf\" && mv \"$P/.swap\" \"$P/TXT.rtf\"",
         "TXT.rtf was replaced by another file"),
        ("ln -s /etc/passwd \"$P/Pictures/passwd\"", "symbolic link: Pictures/passwd"),
        ("mkfifo \"$P/fifo\"", "FIFO: fifo"),
        ("ln \"$P/TXT.rtf\" \"$INBOX_DOCUMENTS/linked.rtf\"", "more than one link: TXT.rtf"),
    ] as [(String, String?)])
    func theAfterExitCheckSaysWhatChanged(script: String, violation expected: String?) throws {
        let rig = try CopyRig()
        rig.placePackage("Report.rtfd")
        let delivery = rig.delivery("Report.rtfd")
        let held = try rig.open(delivery, attempt: 1)
        #expect(try rig.launch(delivery, copy: held.descriptor, script: "P=\"$1\"\n" + script) == .exited(0))
        let end = held.release(of: delivery)
        #expect(end.interference == nil)
        if let expected {
            #expect(end.violation?.contains(expected) == true, "violation: \(end.violation ?? "none")")
            // Kept in failed/ whole, as evidence, the reason on its directory.
            rig.copies.settle(.reportViolation(change: end.violation ?? "", .exited(0)), of: delivery, duration: .zero)
            #expect(!rig.exists(rig.inbox("Report.rtfd")))
            let kept = rig.failed("Report.rtfd")
            #expect(rig.exists(kept + "/Pictures/Deep"))
            #expect(rig.attribute(AgentAttribute.failure, of: kept)?.hasPrefix("violation: ") == true)
        } else {
            #expect(end.violation == nil, "violation: \(end.violation ?? "none")")
            rig.copies.settle(.complete(.exited(0)), of: delivery, duration: .zero)
            #expect(!rig.exists(rig.inbox("Report.rtfd")))
            #expect(try rig.inboxNames() == ["beside.txt"])
        }
    }

    /// Exit 0 removes the package and nothing else: not what a link inside it names, not a link beside it, not what
    /// is mounted inside it.
    @Test func completeRemovesThePackageAndNothingOutsideIt() throws {
        let rig = try CopyRig()
        rig.placePackage("Report.rtfd")
        let outside = rig.path("outside")
        mkdir(outside, 0o755)
        try "keep\n".write(toFile: outside + "/keep.txt", atomically: false, encoding: .utf8)
        let package = rig.inbox("Report.rtfd")
        symlink(outside, package + "/Pictures/outside")
        symlink(outside + "/keep.txt", package + "/keep.txt")
        symlink(outside, rig.inbox("beside-link"))
        // A mount inside, as root could make one: never crossed.
        let mountPoint = package + "/Pictures/Deep/Mounted"
        mkdir(mountPoint, 0o755)
        let mounted = try run(["/bin/mount", "-t", "tmpfs", "-o", "size=1m", "inboxd-package-test", mountPoint])
        defer { if mounted.status == .exited(0) { _ = try? run(["/bin/umount", "-l", mountPoint]) } }
        if mounted.status == .exited(0) {
            try "mounted\n".write(toFile: mountPoint + "/on-mount.txt", atomically: false, encoding: .utf8)
        } else {
            print("PackageCopyTests: cannot mount a tmpfs here (\(mounted.errorOutput)); the mount case is not tested")
            rmdir(mountPoint)
        }

        rig.copies.settle(.complete(.exited(0)), of: rig.delivery("Report.rtfd"), duration: .zero)

        #expect(try String(contentsOfFile: outside + "/keep.txt", encoding: .utf8) == "keep\n")
        #expect(try rig.inboxNames().contains("beside-link"))
        #expect(try rig.inboxNames().contains("beside.txt"))
        #expect(!rig.exists(package + "/TXT.rtf") && !rig.exists(package + "/Pictures/pic.png"))
        if mounted.status == .exited(0) {
            #expect(try String(contentsOfFile: mountPoint + "/on-mount.txt", encoding: .utf8) == "mounted\n")
        } else {
            #expect(!rig.exists(package))
        }
    }

    /// A retry records the failed attempt on the directory; a failure keeps the package whole in failed/ with its
    /// reason.
    @Test func aRetryIsRecordedOnTheDirectoryAndAFailureKeepsItWhole() throws {
        let rig = try CopyRig()
        rig.placePackage("Report.rtfd")
        var delivery = rig.delivery("Report.rtfd")
        delivery.attempt = 2
        rig.copies.settle(.retry(after: .seconds(10), .exited(75)), of: delivery, duration: .zero)
        #expect(rig.attribute(AgentAttribute.attempts, of: rig.inbox("Report.rtfd")) == "2")
        rig.copies.settle(.fail(reason: "it exited with status 3", .exited(3)), of: delivery, duration: .zero)
        #expect(!rig.exists(rig.inbox("Report.rtfd")))
        let kept = rig.failed("Report.rtfd")
        #expect(rig.attribute(AgentAttribute.failure, of: kept) == "it exited with status 3")
        #expect(rig.exists(kept + "/TXT.rtf") && rig.exists(kept + "/Pictures/Deep/notes.txt"))
    }

    /// What is not the package intake placed is not delivered: a file where the package was (moved aside), a
    /// package whose tree no longer passes its check (tampered), a package that is gone.
    @Test func whatIsNoLongerThePackageIsNotDelivered() throws {
        let rig = try CopyRig()
        try "not a package\n".write(toFile: rig.inbox("Plain.rtfd"), atomically: false, encoding: .utf8)
        switch rig.copies.open(rig.delivery("Plain.rtfd"), attempt: 1, placed: nil, in: rig.container) {
        case .gone: #expect(rig.exists(rig.failed("rejected-Plain.rtfd")))
        default: Issue.record("a file was opened as a package")
        }

        rig.placePackage("Linked.rtfd")
        symlink("/etc/passwd", rig.inbox("Linked.rtfd") + "/Pictures/passwd")
        switch rig.copies.open(rig.delivery("Linked.rtfd"), attempt: 1, placed: nil, in: rig.container) {
        case .tampered(let reason): #expect(reason.contains("symbolic link: Pictures/passwd"), "\(reason)")
        default: Issue.record("a package with a symbolic link was opened")
        }

        switch rig.copies.open(rig.delivery("Gone.rtfd"), attempt: 1, placed: nil, in: rig.container) {
        case .gone: break
        default: Issue.record("a missing package was opened")
        }

        // A directory where a file was expected is moved aside as before.
        rig.placePackage("Folder.txt")
        var file = rig.delivery("Folder.txt")
        file.isPackage = false
        switch rig.copies.open(file, attempt: 1, placed: nil, in: rig.container) {
        case .gone: #expect(rig.exists(rig.failed("rejected-Folder.txt")))
        default: Issue.record("a directory was opened as a file")
        }
    }

    /// Both checks walk within the agent's bounds (MaxPackageEntries= here): a package over them when its attempt
    /// starts is not delivered, and a handler that grows one past them is reported.
    @Test func theChecksWalkWithinTheAgentsBounds() throws {
        let rig = try CopyRig(limits: PackageLimits(maxEntries: 3))
        rig.placePackage("Report.rtfd")
        switch rig.copies.open(rig.delivery("Report.rtfd"), attempt: 1, placed: nil, in: rig.container) {
        case .tampered(let reason): #expect(reason.contains("more than 3 entries (MaxPackageEntries=)"), "\(reason)")
        default: Issue.record("a package over the bounds was opened")
        }

        let exact = try CopyRig(limits: PackageLimits(maxEntries: 5))
        exact.placePackage("Report.rtfd")
        let delivery = exact.delivery("Report.rtfd")
        let held = try exact.open(delivery, attempt: 1)
        #expect(try exact.launch(delivery, copy: held.descriptor, script: #"touch "$1/Pictures/one-more""#) == .exited(0))
        #expect(held.release(of: delivery).violation?.contains("more than 5 entries") == true)
    }

    /// A `Unit=` handler's delivery files say it is a package, as a launched handler's environment and stdin do.
    @Test func aUnitsDeliveryFilesSayItIsAPackage() throws {
        let directory = try TemporaryDirectory()
        let loop = try EventLoop()
        let manager = try FakeManager(socket: directory.path + "/private", script: UnitLauncherTests.Script(after: [
            .unit(state: "active", job: 0), .service(code: 1, status: 0, result: "success"),
            .unit(state: "inactive", job: 0)]))
        let launcher = UnitLauncher(loop: loop, logger: Logger(target: .stderr, threshold: .error),
                                    runtimeDirectory: directory.path, address: "unix:path=\(manager.path)", refusal: nil)
        let container = try Container(handler: "test.unit", in: try Directory(path: directory.path).subdirectory("containers"),
                                      identity: nil)
        var registration = HandlerRegistration(identifier: "test.unit", exec: .none, path: "/h/test.unit.handler")
        registration.unit = try UnitTemplate(parsing: "inboxd-test@.service")
        var delivery = Delivery(id: "0123456789abcdef0123456789abcdef", handler: "test.unit", name: "Report.rtfd",
                                path: container.inbox.child("Report.rtfd"), documents: container.documents,
                                contentType: "com.apple.rtfd", contentTypes: ["com.apple.rtfd"], attempt: 1)
        delivery.isPackage = true
        delivery.unit = registration.unit?.instance(delivery.id)
        let copy = try FileDescriptor.open("/dev/null", .readOnly)
        defer { copy.close() }
        var outcome: DeliveryOutcome?
        manager.onCall = { if outcome != nil { loop.exit(code: 0) } }
        guard case .started = launcher.start(delivery, copy: copy, registration: registration, container: container,
                                             ended: { outcome = $0; loop.exit(code: 0) }) else {
            Issue.record("not started")
            return
        }
        try manager.accept(on: loop)
        let deadline = try loop.addTimer(after: .seconds(10)) { loop.exit(code: 1) }
        #expect(try loop.run() == 0, "no end within 10 s")
        _ = deadline
        #expect(outcome == .exited(0))
        let environment = manager.environmentAtStart ?? ""
        #expect(environment.contains("INBOX_FILE=\"\(container.inbox.path)/Report.rtfd\"\nINBOX_URL="), "\(environment)")
        #expect(environment.contains("\nINBOX_PACKAGE=\"1\"\n"), "\(environment)")
        #expect(manager.documentAtStart?.contains(#""name":"Report.rtfd","package":true,"#) == true)
    }
}

/// One test's state directory with a container whose Inbox holds packages, its `InboxCopies`, and a launcher that
/// runs handlers without Landlock.
final class CopyRig {
    let directory: String
    let marker: String
    let logger = Logger(target: .stderr, threshold: .error)
    let state: StateDirectories
    let container: Container
    let copies: InboxCopies
    let loop: EventLoop
    let spawner: HandlerSpawner
    private static let sequence = Mutex(0)

    static let placedTree: [(String, String?)] = [
        ("Pictures", nil), ("Pictures/Deep", nil), ("Pictures/Deep/notes.txt", "notes\n"), ("Pictures/pic.png", "PNG"),
        ("TXT.rtf", #"{\rtf1\ansi Hello}"#),
    ]

    init(limits: PackageLimits = PackageLimits()) throws {
        let number = Self.sequence.withLock { value in
            value += 1
            return value
        }
        marker = "86400.\(getpid())\(number)\(UInt32.random(in: 1000...9999))"
        directory = "/tmp/inboxd-package-copies-\(marker)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        state = try StateDirectories(creating: directory + "/state")
        container = try state.container(for: "test.package", identity: nil)
        chmod(container.inbox.path, 0o770)
        copies = InboxCopies(logger: logger, state: state, quarantine: Quarantine(state: state, logger: logger),
                             packageLimits: limits)
        loop = try EventLoop()
        let reaper = Reaper(loop: loop, logger: logger, ownChildren: { [] }, children: { [marker] in
            Leftovers.children().filter { pid in
                ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains(marker)
            }
        })
        let catalog = HandlerCatalog(loaded: LoadedRegistrations(), preferences: HandlerPreferences(), identities: [:],
                                     problems: [], loadedAt: .zero)
        spawner = HandlerSpawner(loop: loop, logger: logger, catalog: catalog, landlockABI: 0, landlockMode: .auto,
                                 reaper: reaper)
        try "beside\n".write(toFile: inbox("beside.txt"), atomically: false, encoding: .utf8)
    }

    deinit {
        // What a failed test left mounted inside is let go before the tree is removed.
        for line in ((try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count > 1, fields[1].hasPrefix(directory) { _ = try? run(["/bin/umount", "-l", String(fields[1])]) }
        }
        _ = try? run(["/bin/rm", "-rf", "--one-file-system", directory])
    }

    func path(_ name: String) -> String { directory + "/" + name }
    func inbox(_ name: String) -> String { container.inbox.child(name) }
    func failed(_ name: String) -> String { state.failed!.child(name) }
    func exists(_ path: String) -> Bool { (try? status(path)) != nil }
    func inboxNames() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: container.inbox.path).sorted() }

    func status(_ path: String) throws -> stat {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw SystemError("lstat", path: path, errno: .current) }
        return st
    }

    func attribute(_ name: String, of path: String) -> String? {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return ExtendedAttributes(FileDescriptor(rawValue: fd)).readString(name, limit: 4096)
    }

    /// A package as Placement leaves one in a container Inbox: directories 0770, files 0440, root's.
    func placePackage(_ name: String) {
        let root = inbox(name)
        mkdir(root, 0o770)
        chmod(root, 0o770)
        for (relative, contents) in Self.placedTree {
            let path = root + "/" + relative
            if let contents {
                _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
                chmod(path, 0o440)
            } else {
                mkdir(path, 0o770)
                chmod(path, 0o770)
            }
        }
    }

    func delivery(_ name: String) -> Delivery {
        var delivery = Delivery(id: "0000000000000000000000000000000a", handler: "test.package", name: name,
                                path: inbox(name), documents: container.documents, contentType: "com.apple.rtfd",
                                contentTypes: ["com.apple.rtfd", "com.apple.package"], attempt: 1)
        delivery.isPackage = true
        return delivery
    }

    func open(_ delivery: Delivery, attempt: Int) throws -> InboxCopies.Held {
        switch copies.open(delivery, attempt: attempt, placed: nil, in: container) {
        case .opened(let held): return held
        case .gone: throw SystemError("open", path: delivery.path, errno: .noSuchFile)
        case .tampered(let reason): throw SystemError("open \(reason)", path: delivery.path, errno: .invalidArgument)
        }
    }

    /// Runs `script` as the delivery's handler (`%f`), without Landlock, until it ends; once per rig. By its interpreter:
    /// a child another test spawns while the script is written would make an exec of the script itself ETXTBSY.
    func launch(_ delivery: Delivery, copy: FileDescriptor, script: String) throws -> DeliveryOutcome? {
        let handler = path("handler-\(marker).sh")
        try ("#!/bin/sh\n" + script + "\n").write(toFile: handler, atomically: true, encoding: .utf8)
        chmod(handler, 0o755)
        let registration = HandlerRegistration(identifier: "test.package", exec: try ExecCommand(parsing: "/bin/sh " + handler + " %f"),
                                               path: "/h/test.package")
        var outcome: DeliveryOutcome?
        let launcher = ProcessLauncher(spawner: spawner)
        guard case .started = launcher.start(delivery, copy: copy, registration: registration, container: container,
                                             ended: { outcome = $0 }) else { return nil }
        _ = loop.run(until: { outcome != nil })
        return outcome
    }
}
