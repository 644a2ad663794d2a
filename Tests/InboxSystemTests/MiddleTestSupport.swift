import Glibc
import InboxCore
@testable import InboxSystem
import Testing

/// The dispatcher's side of the handoff, recorded: what the router queued, in order.
final class RecordingHandoff: DeliveryHandoff {
    private(set) var deliveries: [Delivery] = []
    private(set) var launches = 0
    /// Called after each delivery is recorded (a test ends its event loop here).
    var enqueued: (Delivery) -> Void = { _ in }

    func enqueue(_ delivery: Delivery, placed: FileIdentity?) {
        deliveries.append(delivery)
        enqueued(delivery)
    }

    func launchReady() { launches += 1 }
}

/// A content sniffer that answers one way for every file: a crash, say, which no real file here makes libmagic do.
final class AnsweringSniffer: ContentSniffing {
    let answer: Result<Sniffed, SnifferProcess.Failure>
    init(_ answer: Result<Sniffed, SnifferProcess.Failure>) { self.answer = answer }
    func sniffContent(_ file: FileDescriptor, text: ContentNeeds.Text, namingBinary: Bool,
                      refiningText: Bool) -> Result<Sniffed, SnifferProcess.Failure> { answer }
}

/// A drop Inbox, a state directory and a handlers.d in a fresh temp directory, with registrations written there;
/// `middle` builds the agent's middle over them as the agent does (the router and recovery, one quarantine, the
/// arrival reader), with a recorder in place of the dispatcher. Building it again is the agent started again.
final class MiddleWorld {
    let root: String
    let inbox: String
    let statePath: String
    let handlers: String
    let state: StateDirectories
    var settings: AgentSettings

    init(registrations: [String: String], boundTo handler: String? = nil) throws {
        var template = Array("/tmp/inbox-middle-test-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw SystemError("mkdtemp", errno: .current) }
        root = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        inbox = root + "/Inbox"
        statePath = root + "/state"
        handlers = root + "/handlers.d"
        for path in [inbox, handlers] { mkdir(path, 0o755) }
        // The registrations must be trusted: nobody but root could have written them (the temp dir is 0700).
        chmod(root, 0o755)
        for (identifier, sections) in registrations {
            try Self.write(handlers + "/\(identifier).handler",
                           Array("[Handler]\nIdentifier=\(identifier)\nExec=/bin/true %f\n\(sections)".utf8))
        }
        state = try StateDirectories(creating: statePath)
        settings = AgentSettings(inboxes: [inbox], handlerDirectories: [handlers], stateDirectory: statePath,
                                 runtimeDirectory: root + "/run", defaultsFile: nil, maxConcurrent: 4,
                                 retryPolicy: RetryPolicy(), defaultTimeout: nil, stopTimeout: .seconds(1),
                                 logTarget: .stderr, logLevel: .warning)
        if let handler {
            settings.inboxSections = [InboxSection(path: inbox, handler: handler,
                                                   location: SourceLocation(file: "inboxd.conf", line: 1))]
        }
    }

    /// Removes the temp directory. Without a child process: tests run side by side in one process, and a child holds
    /// a copy of every descriptor until its exec, close-on-exec or not, so a spawn here would make another test's
    /// file look open for writing to its read lease.
    func remove() { Self.removeTree(Array(root.utf8CString)) }

    /// Removes a tree without following links; `path` is NUL-terminated bytes (names need not be UTF-8).
    private static func removeTree(_ path: [CChar]) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            unlink(path)
            return
        }
        var children: [[CChar]] = []
        if let stream = opendir(path) {
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    Array(raw.bindMemory(to: CChar.self).prefix { $0 != 0 })
                }
                if name != [0x2E] && name != [0x2E, 0x2E] { children.append(path.dropLast() + [0x2F] + name + [0]) }
            }
            closedir(stream)
        }
        for child in children { removeTree(child) }
        rmdir(path)
    }

    func catalog() -> HandlerCatalog { HandlerCatalog.load(settings) }

    /// The agent's middle over these directories.
    func middle(sniffer: ContentSniffing? = nil) throws -> Middle {
        try Middle(world: self, sniffer: sniffer)
    }

    /// Writes a file (mode 0644), with `attributes` set on it, and closes it.
    static func write(_ path: String, _ bytes: [UInt8], attributes: [String: String] = [:]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open", path: path, errno: .current) }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        for (key, value) in attributes {
            if let error = ExtendedAttributes(FileDescriptor(rawValue: fd)).write(key, value) {
                throw SystemError("fsetxattr", path: path, errno: error)
            }
        }
    }

    /// Drops a file as `inboxctl send` does: written under a hidden name, then renamed in.
    func drop(_ name: String, _ contents: String, attributes: [String: String] = [:]) throws {
        try drop(Array(name.utf8), Array(contents.utf8), attributes: attributes)
    }

    func drop(_ name: [UInt8], _ contents: [UInt8], attributes: [String: String] = [:]) throws {
        let hidden = inbox + "/.partial"
        try Self.write(hidden, contents, attributes: attributes)
        let target = Array(inbox.utf8) + [UInt8(ascii: "/")] + name
        let status = (target + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { rename(hidden, $0.baseAddress!) }
        }
        guard status == 0 else { throw SystemError("rename", path: hidden, errno: .current) }
    }

    /// The names in a directory under the root (hidden ones too), sorted.
    func names(in relative: String) -> [String] {
        guard let directory = try? Directory(path: root + "/" + relative), let names = try? directory.entries() else {
            return []
        }
        return names.map { displayName($0) }.sorted()
    }
}

/// The router, recovery and what they share, wired as `Agent` wires them.
final class Middle {
    let loop: EventLoop
    let logger: Logger
    let reader: ArrivalReader
    let quarantine: Quarantine
    let handoff = RecordingHandoff()
    let router: Router
    let recovery: Recovery
    private let world: MiddleWorld

    init(world: MiddleWorld, sniffer: ContentSniffing?) throws {
        self.world = world
        loop = try EventLoop()
        logger = Logger(target: .stderr, threshold: .warning, standardError: .other)
        reader = ArrivalReader(logger: logger)
        quarantine = Quarantine(state: world.state, logger: logger)
        router = Router(loop: loop, logger: logger, state: world.state, quarantine: quarantine,
                        inspector: TypeInspector(sniffer: sniffer), reader: reader, dispatcher: handoff,
                        catalog: world.catalog())
        recovery = Recovery(state: world.state, reader: reader, router: router, quarantine: quarantine)
    }

    /// Takes a name from the drop Inbox as intake does (opened and checked) and routes it; with `settling`, runs the
    /// event loop until no file waits for a retry. (Tests run side by side: another's child process, until its exec,
    /// holds a copy of every descriptor, and can make a file look open for writing to a read lease for a moment.)
    func take(_ name: String, settling: Bool = true) throws {
        try take(Array(name.utf8))
        if settling { try settle() }
    }

    /// Runs the event loop until no file waits for a retry of its move.
    func settle() throws {
        try take(inTurn: [])
    }

    /// Takes each name once no file waits for a retry any more (a dropped package waits for its settle check), in
    /// one run of the event loop (a loop that ended cannot run again), until none waits.
    func take(inTurn names: [String]) throws {
        var names = names[...]
        while router.waitingCount == 0, let name = names.popFirst() { try take(name, settling: false) }
        guard router.waitingCount > 0 else { return }
        var poll: EventSource?
        func check() {
            poll = try? loop.addTimer(after: .milliseconds(10)) { [unowned self] in
                while router.waitingCount == 0, let name = names.popFirst() { try? take(name, settling: false) }
                if router.waitingCount == 0 { loop.exit(code: 0) } else { check() }
            }
        }
        check()
        #expect(try run(), "a retry still waits")
        _ = poll
    }

    private func take(_ name: [UInt8]) throws {
        let directory = try Directory(path: world.inbox)
        guard case .arrival(let arrival) = reader.take(name, in: directory, origin: .dropped) else {
            Issue.record("\(displayName(name)) could not be taken")
            return
        }
        defer { arrival.file.descriptor.close() }
        router.route(arrival)
    }

    /// Runs the event loop until `done` says so (checked after each callback that `check` is called from), or fails
    /// after `timeout`.
    func run(timeout: Duration = .seconds(10)) throws -> Bool {
        let deadline = try loop.addTimer(after: timeout) { [loop] in loop.exit(code: 1) }
        defer { deadline.setEnabled(.off) }
        return try loop.run() == 0
    }

    func stop() { loop.exit(code: 0) }
}
