import Foundation
import Glibc
@testable import InboxCore
@testable import InboxSystem
import Synchronization
import Testing

/// A package document (a directory delivered whole) in a container Inbox as a handler sees it: placed by hand the way
/// Placement leaves one (directories 0770 and files 0440, root's, in the handler's group), handed to real `sh` and
/// Python handlers by the real launchers and spawner, under the real Landlock ruleset the spawner builds. What is
/// checked is the kernel's: every entry can be read and the whole package removed, nothing inside can be written,
/// created, renamed, truncated or linked out; a resident handler's descriptor lists and reads and writes nothing; and
/// the handler is told it got a package (INBOX_PACKAGE=1, "package":true) named by its directory.
@Suite(.serialized, .enabled(if: getuid() == 0, "the package's modes are root's and its group's"))
struct PackageSandboxTests {
    /// Every way into the package a handler may try, each run in a subshell, in this order: `<name> allowed|denied`
    /// into Documents/results. The copy out and the removal come last, so the copy shows what the others left.
    static let attempts = """
        P="$1" D="$INBOX_DOCUMENTS" I="$(dirname "$1")"
        exec > "$D/results" 2>/dev/null
        try() { if (eval "$2"); then echo "$1 allowed"; else echo "$1 denied"; fi; }
        try read 'for f in TXT.rtf Pictures/pic.png Pictures/Deep/notes.txt; do cat "$P/$f" >/dev/null || exit 1; done'
        try list 'ls "$P" "$P/Pictures" "$P/Pictures/Deep" >/dev/null'
        try write 'echo x >> "$P/TXT.rtf"'
        try writeDeep 'echo x >> "$P/Pictures/Deep/notes.txt"'
        try truncate 'perl -e "truncate(q($P/TXT.rtf), 0) or exit 1"'
        try truncateOpen ': > "$P/Pictures/pic.png"'
        try create 'echo x > "$P/new.txt"'
        try createDeep 'echo x > "$P/Pictures/Deep/new.txt"'
        try mkdir 'mkdir "$P/Attachments"'
        try mkfifo 'mkfifo "$P/fifo"'
        try symlink 'ln -s /etc/passwd "$P/passwd"'
        try rename 'perl -e "rename(q($P/TXT.rtf), q($P/TXT2.rtf)) or exit 1"'
        try renameDeep 'perl -e "rename(q($P/Pictures/pic.png), q($P/pic.png)) or exit 1"'
        try renameDirectory 'perl -e "rename(q($P/Pictures), q($P/Pics)) or exit 1"'
        try renameInInbox 'perl -e "rename(q($P), q($I/Other.rtfd)) or exit 1"'
        try renameOut 'perl -e "rename(q($P), q($D/Moved.rtfd)) or exit 1"'
        try linkOut 'ln "$P/TXT.rtf" "$D/linked.rtf"'
        try linkIn 'ln "$P/TXT.rtf" "$P/TXT-link.rtf"'
        try copyOut 'cp -R "$P" "$D/Kept.rtfd"'
        try remove 'rm -rf "$P"'
        """

    static let expected: [String: String] = [
        "read": "allowed", "list": "allowed", "copyOut": "allowed", "remove": "allowed",
        "write": "denied", "writeDeep": "denied", "truncate": "denied", "truncateOpen": "denied", "create": "denied",
        "createDeep": "denied", "mkdir": "denied", "mkfifo": "denied", "symlink": "denied", "rename": "denied",
        "renameDeep": "denied", "renameDirectory": "denied", "renameInInbox": "denied", "renameOut": "denied",
        "linkOut": "denied", "linkIn": "denied",
    ]

    @Test(.enabled(if: LandlockRuleset.abi() >= 3, "the kernel offers no Landlock ABI 3 (TRUNCATE) or later"))
    func theKernelLetsAHandlerReadAndRemoveAPackageAndNothingElse() throws {
        let rig = try PackageRig(landlock: true)
        rig.placePackage("Report.rtfd")
        let registration = try rig.registration(script: Self.attempts, exec: "%f")
        let outcome = try rig.launch(rig.delivery(1, "Report.rtfd"), registration: registration)
        #expect(outcome == .exited(0))
        let results = try rig.results("results")
        #expect(results == Self.expected, "differs: \(results.filter { Self.expected[$0.key] != $0.value })")
        // Nothing was written: the copy taken after every other attempt holds what was placed, and no more.
        #expect(try rig.tree(of: rig.documents("Kept.rtfd")) == PackageRig.placedTree)
        // The handler's own removal took the whole package, and nothing beside it.
        #expect(!FileManager.default.fileExists(atPath: rig.inbox("Report.rtfd")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.container.inbox.path) == ["beside.txt"])
    }

    /// The modes alone (a `Unit=` handler runs under its unit's sandbox, not the agent's Landlock rules): the
    /// handler's user, in the container's group, reads every entry and removes the package; it writes none of its
    /// files.
    @Test func theModesLetTheHandlersGroupReadAndRemoveButNotWrite() throws {
        let rig = try PackageRig(landlock: false, group: 65534)
        rig.placePackage("Report.rtfd")
        let script = """
            P="$1"
            try() { if (eval "$2") 2>/dev/null; then echo "$1 allowed"; else echo "$1 denied"; fi; }
            try read 'cat "$P/TXT.rtf" "$P/Pictures/pic.png" "$P/Pictures/Deep/notes.txt" >/dev/null'
            try write 'echo x >> "$P/TXT.rtf"'
            try writeDeep 'echo x >> "$P/Pictures/Deep/notes.txt"'
            try chmod 'chmod 0666 "$P/TXT.rtf"'
            try remove 'rm -rf "$P"'
            """
        try rig.writeScript("handler.sh", script)
        let outcome = try rig.runAs(uid: 65534, gid: 65534, ["/bin/sh", rig.path("handler.sh"), rig.inbox("Report.rtfd")])
        #expect(outcome.status == 0)
        #expect(PackageRig.parse(outcome.output) == ["read": "allowed", "write": "denied", "writeDeep": "denied",
                                                      "chmod": "denied", "remove": "allowed"])
        #expect(!FileManager.default.fileExists(atPath: rig.inbox("Report.rtfd")))
    }

    /// What a launched handler is told: its argument (%f, %u) and INBOX_FILE, INBOX_URL name the directory without a
    /// trailing slash, INBOX_PACKAGE=1, and "package":true on stdin; a file's handler gets no INBOX_PACKAGE.
    @Test func aLaunchedHandlerIsToldItGotAPackage() throws {
        let rig = try PackageRig(landlock: LandlockRuleset.abi() > 0)
        rig.placePackage("My Report.rtfd")
        let script = #"""
            D="$INBOX_DOCUMENTS"
            printf '%s\n' "$1" "$2" "$INBOX_FILE" "$INBOX_URL" "$INBOX_NAME" "${INBOX_PACKAGE-unset}" > "$D/view"
            cat > "$D/stdin"
            [ -d "$1" ] && [ -f "$1/TXT.rtf" ]
            """#
        let registration = try rig.registration(script: script, exec: "%f %u")
        var delivery = rig.delivery(2, "My Report.rtfd")
        #expect(try rig.launch(delivery, registration: registration) == .exited(0))
        let path = rig.inbox("My Report.rtfd"), url = "file://" + path.replacingOccurrences(of: " ", with: "%20")
        #expect(try rig.lines("view") == [path, url, path, url, "My Report.rtfd", "1"])
        let stdin = try rig.text("stdin")
        #expect(stdin.contains(#""name":"My Report.rtfd","package":true,"#))
        #expect(stdin.hasPrefix(#"{"file":"\#(path)","url":"\#(url)","#))

        // The same handler for a file (a rig of its own: a loop runs once): no INBOX_PACKAGE, "package":false.
        let fileRig = try PackageRig(landlock: LandlockRuleset.abi() > 0)
        delivery = fileRig.delivery(3, "beside.txt")
        delivery.isPackage = false
        #expect(try fileRig.launch(delivery, registration: try fileRig.registration(script: script, exec: "%f %u"))
                == .exited(1))
        #expect(try fileRig.lines("view").last == "unset")
        #expect(try fileRig.text("stdin").contains(#""name":"beside.txt","package":false,"#))
    }

    /// A batch (%F, %U) of packages: one process, the directories as its arguments, each object of its stdin array
    /// saying "package":true.
    @Test func aBatchOfPackagesGetsTheirDirectories() throws {
        let rig = try PackageRig(landlock: LandlockRuleset.abi() > 0)
        let batches = BatchLauncher(loop: rig.loop, processes: ProcessLauncher(spawner: rig.spawner),
                                    sandboxesHandlers: rig.spawner.sandboxesHandlers, maxProcesses: 2)
        let registration = try rig.registration(script: #"""
            D="$INBOX_DOCUMENTS"
            for p in "$@"; do [ -d "$p" ] && [ -f "$p/TXT.rtf" ] && echo "$p"; done > "$D/view"
            echo "${INBOX_BATCH_SIZE}" >> "$D/view"
            cat > "$D/stdin"
            """#, exec: "%F", batchSize: 8)
        var outcomes: [Int: DeliveryOutcome] = [:]
        for number in 1...2 {
            rig.placePackage("R\(number).rtfd")
            let started = batches.start(rig.delivery(number, "R\(number).rtfd"), copy: try rig.openDirectory("R\(number).rtfd"),
                                        registration: registration, container: rig.container) { outcomes[number] = $0 }
            guard case .started = started else {
                Issue.record("not started: \(started)")
                return
            }
        }
        #expect(rig.run(until: { outcomes.count == 2 }), "the batch did not end within 10 s")
        #expect(outcomes == [1: .exited(0), 2: .exited(0)])
        #expect(try rig.lines("view") == [rig.inbox("R1.rtfd"), rig.inbox("R2.rtfd"), "2"])
        let stdin = try rig.text("stdin")
        #expect(stdin.hasPrefix("[") && stdin.components(separatedBy: #""package":true"#).count == 3)
    }

    /// A resident handler gets the package's directory as its descriptor, O_RDONLY|O_DIRECTORY: it lists it
    /// (fdopendir), reads an entry through it (openat), and can neither create nor write nor make a directory through
    /// it; the kernel's rules are the path's, whatever descriptor reaches it.
    @Test(.enabled(if: LandlockRuleset.abi() >= 1, "the kernel offers no Landlock"))
    func aResidentHandlerListsAndReadsThroughItsDescriptorAndWritesNothing() throws {
        let rig = try PackageRig(landlock: true)
        rig.placePackage("Report.rtfd")
        try rig.writeScript("resident.py", #"""
            #!/usr/bin/python3
            import errno, json, os, socket
            out = os.environ["INBOX_DOCUMENTS"] + "/log"
            sock = socket.socket(fileno=3)
            message, fds, _, _ = socket.recv_fds(sock, 1 << 18, 4)
            d = json.loads(message)
            fd = fds[0]
            lines = [f"package {d.get('package')}"]
            flags = [l for l in open(f"/proc/self/fdinfo/{fd}") if l.startswith("flags:")][0].split()[1]
            flags = int(flags, 8)
            lines.append(f"readonly {(flags & os.O_ACCMODE) == os.O_RDONLY} directory {bool(flags & os.O_DIRECTORY)}")
            lines.append("list " + " ".join(sorted(os.listdir(fd))))
            entry = os.open("TXT.rtf", os.O_RDONLY, dir_fd=fd)
            lines.append("read " + os.read(entry, 100).decode())
            os.close(entry)
            def attempt(name, call):
                try:
                    call()
                    lines.append(f"{name} allowed")
                except OSError as error:
                    lines.append(f"{name} denied {errno.errorcode[error.errno]}")
            attempt("create", lambda: os.open("new.txt", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
            attempt("write", lambda: os.open("TXT.rtf", os.O_WRONLY, dir_fd=fd))
            attempt("mkdir", lambda: os.mkdir("Attachments", dir_fd=fd))
            attempt("rename", lambda: os.rename("TXT.rtf", "TXT2.rtf", src_dir_fd=fd, dst_dir_fd=fd))
            attempt("directWrite", lambda: os.write(fd, b"x"))
            with open(out, "w") as log:
                log.write("\n".join(lines) + "\n")
            sock.send(json.dumps({"deliveryID": d["deliveryID"], "result": "done"}).encode())
            # Until the agent lets it go: end of file.
            while socket.recv_fds(sock, 1 << 18, 4)[0]:
                pass
            """#)
        var registration = HandlerRegistration(identifier: "test.package",
                                               exec: try ExecCommand(parsing: "/usr/bin/python3 " + rig.path("resident.py")),
                                               path: "/h/test.package")
        registration.activation = .resident
        let launcher = ResidentLauncher(loop: rig.loop, logger: rig.logger, spawner: rig.spawner)
        let copy = try rig.openDirectory("Report.rtfd")
        defer { copy.close() }
        var outcome: DeliveryOutcome?
        let started = launcher.start(rig.delivery(4, "Report.rtfd"), copy: copy, registration: registration,
                                     container: rig.container) { outcome = $0 }
        guard case .started = started else {
            Issue.record("not started: \(started)")
            return
        }
        // Answered, then stopped (end of file on its socket) within the one run of the loop.
        var draining = false
        #expect(rig.run(until: {
            if outcome != nil && !draining {
                draining = true
                launcher.drain()
            }
            return draining && launcher.runningCount == 0
        }), "no answer, or no end, within 10 s")
        #expect(outcome == .exited(0))
        #expect(try rig.lines("log") == [
            "package True", "readonly True directory True", "list Pictures TXT.rtf", "read " + PackageRig.rtf,
            "create denied EACCES", "write denied EACCES", "mkdir denied EACCES", "rename denied EACCES",
            "directWrite denied EBADF",
        ])
        #expect(try rig.tree(of: rig.inbox("Report.rtfd")) == PackageRig.placedTree)
    }
}

/// One test's container with a package in its Inbox, and the launchers' parts: a loop, a reaper and a spawner that
/// sandboxes its handlers with the real ruleset when `landlock` (the kernel's ABI), or not at all.
final class PackageRig {
    let directory: String
    let marker: String
    let loop: EventLoop
    let logger = Logger(target: .stderr, threshold: .error)
    let reaper: Reaper
    let spawner: HandlerSpawner
    let container: Container
    /// The group a package's entries get, as Placement gives them the handler's.
    let group: gid_t
    private var opened: [FileDescriptor] = []
    private static let sequence = Mutex(0)

    static let rtf = #"{\rtf1\ansi Hello}"#
    /// What `placePackage` makes, as `tree(of:)` reads it back: relative path and contents (nil for a directory).
    static let placedTree: [String: String?] = [
        "TXT.rtf": rtf, "Pictures": nil, "Pictures/pic.png": "\u{89}PNG", "Pictures/Deep": nil,
        "Pictures/Deep/notes.txt": "notes\n",
    ]

    init(landlock: Bool, group: gid_t = 0) throws {
        let number = Self.sequence.withLock { value in
            value += 1
            return value
        }
        marker = "86400.\(getpid())\(number)\(UInt32.random(in: 1000...9999))"
        directory = "/tmp/inboxd-package-sandbox-\(marker)"
        self.group = group
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        loop = try EventLoop()
        reaper = Reaper(loop: loop, logger: logger, ownChildren: { [] }, children: { [marker, directory] in
            Leftovers.children().filter { pid in
                let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
                return command.contains(marker) || command.contains(directory)
            }
        })
        let catalog = HandlerCatalog(loaded: LoadedRegistrations(), preferences: HandlerPreferences(), identities: [:],
                                     problems: [], loadedAt: .zero)
        spawner = HandlerSpawner(loop: loop, logger: logger, catalog: catalog,
                                 landlockABI: landlock ? LandlockRuleset.abi() : 0, landlockMode: .auto, reaper: reaper)
        container = try Container(handler: "test.package", in: try Directory(path: directory).subdirectory("containers"),
                                  identity: nil)
        // The container Inbox as the agent keeps it for a handler's group: 0770 root:<group>.
        chown(container.inbox.path, 0, group)
        chmod(container.inbox.path, 0o770)
        chmod(container.root.path, 0o755)
        // A file beside the package, which no removal of it may touch.
        try "beside\n".write(toFile: inbox("beside.txt"), atomically: false, encoding: .utf8)
        chmod(inbox("beside.txt"), 0o440)
    }

    deinit {
        for descriptor in opened { descriptor.close() }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name), pid != getpid(),
                  let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
                  command.contains(marker) || command.contains(directory) else { continue }
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    func path(_ name: String) -> String { directory + "/" + name }
    func inbox(_ name: String) -> String { container.inbox.child(name) }
    func documents(_ name: String) -> String { container.documents + "/" + name }

    /// An RTFD as Placement leaves one in a container Inbox: every directory 0770 and every file 0440, root's, in
    /// the handler's group.
    func placePackage(_ name: String) {
        let root = inbox(name)
        mkdir(root, 0o700)
        // Sorted, a directory comes before what it holds.
        for (relative, contents) in Self.placedTree.sorted(by: { $0.key < $1.key }) {
            let path = root + "/" + relative
            if let contents {
                _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
            } else {
                mkdir(path, 0o700)
            }
        }
        for relative in [""] + Self.placedTree.keys.sorted() {
            let path = relative.isEmpty ? root : root + "/" + relative
            let isDirectory = relative.isEmpty || Self.placedTree[relative]! == nil
            chown(path, 0, group)
            chmod(path, isDirectory ? 0o770 : 0o440)
        }
    }

    /// The package's directory as the dispatcher holds it for an attempt: O_RDONLY|O_DIRECTORY, not following.
    func openDirectory(_ name: String) throws -> FileDescriptor {
        let fd = open(inbox(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: inbox(name), errno: .current) }
        return FileDescriptor(rawValue: fd)
    }

    /// Every entry beneath `root` by relative path, with a file's contents (nil for a directory).
    func tree(of root: String) throws -> [String: String?] {
        var tree: [String: String?] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return tree }
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory)
            tree[relative] = isDirectory.boolValue
                ? String?.none : String(decoding: try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative)),
                                        as: UTF8.self)
        }
        return tree
    }

    /// Scripts are run by their interpreter (`/bin/sh script`), never exec'd themselves: a child another test spawns
    /// at the moment one is written holds it open for writing until it execs, and an exec of it then fails with
    /// ETXTBSY.
    func writeScript(_ name: String, _ body: String) throws {
        let text = body.hasPrefix("#!") ? body + "\n" : "#!/bin/sh\n" + body + "\n"
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        chmod(path(name), 0o755)
    }

    func registration(script: String, exec: String, batchSize: Int = 1) throws -> HandlerRegistration {
        try writeScript("handler.sh", script)
        var registration = HandlerRegistration(identifier: "test.package",
                                               exec: try ExecCommand(parsing: "/bin/sh \(path("handler.sh")) \(exec)"),
                                               path: "/h/test.package")
        registration.batchSize = batchSize
        return registration
    }

    func delivery(_ number: Int, _ name: String) -> Delivery {
        var delivery = Delivery(id: String(format: "%032d", number), handler: "test.package", name: name,
                                path: inbox(name), documents: container.documents, contentType: "com.apple.rtfd",
                                contentTypes: ["com.apple.rtfd", "com.apple.package", "public.directory", "public.item"],
                                attempt: 1)
        delivery.isPackage = true
        return delivery
    }

    /// Starts `delivery`'s handler through the per-file launcher, given its package's directory as the dispatcher
    /// gives it, and runs the loop until it ends.
    func launch(_ delivery: Delivery, registration: HandlerRegistration) throws -> DeliveryOutcome? {
        let launcher = ProcessLauncher(spawner: spawner)
        let copy = delivery.isPackage ? try openDirectory(delivery.name) : try FileDescriptor.open(inbox(delivery.name),
                                                                                                   .readOnly)
        defer { copy.close() }
        var outcome: DeliveryOutcome?
        let started = launcher.start(delivery, copy: copy, registration: registration, container: container) {
            outcome = $0
        }
        guard case .started = started else {
            Issue.record("not started: \(started)")
            return nil
        }
        _ = run(until: { outcome != nil })
        return outcome
    }

    /// Runs a program as `uid`:`gid` without a sandbox (the way a unit's `User=` runs), waiting for it.
    func runAs(uid: UInt32, gid: UInt32, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = path("output")
        let out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(out); close(null) }
        var request = SpawnRequest(executablePath: arguments[0], arguments: arguments,
                                   environment: ["PATH=/usr/bin:/bin"], standardInput: FileDescriptor(rawValue: null),
                                   standardOutput: FileDescriptor(rawValue: out), standardError: FileDescriptor(rawValue: out))
        request.uid = uid
        request.gid = gid
        request.supplementaryGroups = []
        request.workingDirectory = "/"
        let process = try spawn(request)
        defer { process.pidfd.close() }
        let status = waitForExit(process)
        guard case .exited(let code) = status else { return (-1, "") }
        return (code, try String(contentsOfFile: output, encoding: .utf8))
    }

    func text(_ name: String) throws -> String { try String(contentsOfFile: documents(name), encoding: .utf8) }
    func lines(_ name: String) throws -> [String] { try text(name).split(separator: "\n").map(String.init) }
    func results(_ name: String) throws -> [String: String] { Self.parse(try text(name)) }

    /// `name allowed|denied` lines as a table.
    static func parse(_ text: String) -> [String: String] {
        Dictionary(text.split(separator: "\n").map { line in
            let parts = line.split(separator: " ")
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }, uniquingKeysWith: { first, _ in first })
    }

    /// Runs the loop until `done` holds (looked at every 10 ms) or 10 s have passed; whether it held. sd-event does
    /// not run again once it exited: once per rig.
    func run(until done: @escaping () -> Bool) -> Bool {
        var met = false
        var poll: EventSource?
        func check() {
            if done() {
                met = true
                poll = try? loop.addDefer { [loop] in loop.exit(code: 0) }
                return
            }
            poll = try? loop.addTimer(after: .milliseconds(10), accuracy: .milliseconds(1)) { check() }
        }
        poll = try? loop.addDefer { check() }
        let deadline = try? loop.addTimer(after: .seconds(10)) { [loop] in loop.exit(code: 1) }
        _ = try? loop.run()
        _ = (poll, deadline)
        return met
    }
}
