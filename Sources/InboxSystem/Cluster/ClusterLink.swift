import Glibc
import InboxCore

/// What the server said of a published delivery.
public struct PublishReceipt: Sendable, Hashable {
    /// The message's sequence in the stream (the first copy's, for a duplicate).
    public var sequence: UInt64
    /// The server had a message of this delivery id within its duplicate window and stored nothing new.
    public var duplicate: Bool
    /// The content's digest and size, as the object store computed them.
    public var digest: ObjectDigest
    public var size: Int64
}

/// Why a delivery was not published.
public struct PublishFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The child's sentence.
    public var reason: String
    /// No connection, a timeout, no responders: keep the file and publish it again later. Otherwise refused for good.
    public var transient: Bool
    public var description: String { reason }
}

/// A delivery the cluster gave this host.
public struct ClusterWork: Sendable {
    /// The child's reference, for `ClusterLink.answer`.
    public var ref: UInt64
    /// The handler it is for.
    public var handler: String
    /// Its stream sequence.
    public var sequence: UInt64
    /// How many times the server handed it out, this time included (1 the first time).
    public var delivered: UInt64
    /// The delivery message.
    public var delivery: ClusterDelivery
    /// The content: an unnamed file in the spool directory, at offset 0. The caller owns it and closes it.
    public var content: FileDescriptor
}

/// The agent's side of its cluster child (`inboxd-cluster`, ClusterProtocol): the child is spawned with its socket,
/// and everything is a message on the event loop, never a wait. Requests made before the child said it is ready,
/// or while its socket is full, are queued and sent in order.
public final class ClusterLink {
    /// What the child does.
    public enum Role: String, Sendable { case ingest, work }

    /// How the child is started.
    public struct Options: Sendable {
        /// The child's executable (`defaultExecutable()`).
        public var executable: String
        public var role: Role
        public var settings: ClusterSettings
        /// This host's name, as presence and failed events carry it.
        public var hostName: String
        /// The agent's version.
        public var version: String
        /// The AckWait of a handler served without one.
        public var ackWait: Duration
        /// work: the directory the child creates content files in (unnamed, O_TMPFILE); it may write nowhere else.
        public var spool: String?
        /// The Landlock ABI to sandbox the child with (0: none).
        public var landlockABI: Int

        /// Creates options.
        public init(executable: String = ClusterLink.defaultExecutable(), role: Role, settings: ClusterSettings,
                    hostName: String, version: String, ackWait: Duration = .seconds(30), spool: String? = nil,
                    landlockABI: Int = LandlockRuleset.abi()) {
            self.executable = executable
            self.role = role
            self.settings = settings
            self.hostName = hostName
            self.version = version
            self.ackWait = ackWait
            self.spool = spool
            self.landlockABI = landlockABI
        }
    }

    private let loop: EventLoop
    private let logger: Logger
    private let channel: ClusterChannel
    private let process: SpawnedProcess
    private var readSource: EventSource?
    private var writeSource: EventSource?
    private var deferred: [EventSource] = []
    /// Messages ready to be written, in order, each with the descriptor it carries (ours, closed once sent).
    private var outgoing: [(bytes: [UInt8], descriptor: FileDescriptor?)] = []
    /// Requests made before `ready`.
    private var waiting: [(bytes: [UInt8], descriptor: FileDescriptor?)] = []
    private var buffer = ClusterChannel.makeBuffer()
    private var nextRef: UInt64 = 1
    private var dead = false

    /// The child's pid; nil once it is stopped or lost.
    public var pid: pid_t? { dead ? nil : process.pid }
    /// The last state the child reported.
    public private(set) var state: ClusterState?
    /// Whether the child said it is ready.
    public private(set) var isReady = false

    /// ingest: the outcome of a `publish`, by its ref.
    public var published: (UInt64, Result<PublishReceipt, PublishFailure>) -> Void = { _, _ in }
    /// work: a delivery; its content is the callee's to close.
    public var received: (ClusterWork) -> Void = { $0.content.close() }
    /// work: a message the child refused (handler, sequence, reason); it is termed already.
    public var poisoned: (String, UInt64, String) -> Void = { _, _, _ in }
    /// Every state report.
    public var stateChanged: (ClusterState) -> Void = { _ in }
    /// The child died or broke the protocol (why). The link is dead; outstanding refs will not be answered.
    public var lost: (String) -> Void = { _ in }

    /// Spawns the child (its socket watched on `loop`, its exit too) and sends it its configuration.
    public init(loop: EventLoop, logger: Logger, options: Options) throws(SystemError) {
        self.loop = loop
        self.logger = logger
        let (agent, child) = try ClusterChannel.pair()
        defer { child.close() }
        var spool: Directory?
        if let path = options.spool {
            do { spool = try Directory(path: path) } catch {
                agent.close()
                throw error
            }
        }
        defer { spool?.descriptor.close() }
        var request = SpawnRequest(executablePath: options.executable,
                                   arguments: [options.executable, "--role", options.role.rawValue],
                                   standardInput: child, standardOutput: .standardError, standardError: .standardError)
        request.workingDirectory = "/"
        request.parentDeathSignal = SIGKILL
        request.descriptor3 = spool?.descriptor
        request.resourceLimits = [ResourceLimit(.openFiles, 256), ResourceLimit(.coreSize, 0)]
        var ruleset: LandlockRuleset?
        if options.landlockABI > 0 {
            do {
                let made = try LandlockRuleset(abi: options.landlockABI)
                try made.allow(.readExecute, beneath: "/")
                if let path = options.spool {
                    try made.allow([.readFile, .readDir, .writeFile, .makeReg, .removeFile, .truncate], beneath: path)
                }
                ruleset = made
            } catch {
                agent.close()
                throw error
            }
        }
        request.landlockRuleset = ruleset?.descriptor
        do {
            process = try spawn(request)
        } catch {
            agent.close()
            throw SystemError("spawn (\(error.step))", path: options.executable, errno: error.errno)
        }
        channel = agent
        process.pidfd.close()
        let watch = ChildWatch()
        watch.exited = { [weak self] status in self?.die("the cluster child exited (\(status))") }
        do {
            watch.source = try loop.addChild(pid: process.pid) { status in
                watch.exited?(status)
                watch.source = nil
            }
            readSource = try loop.addIO(agent.descriptor) { [unowned self] _ in self.readReports() }
        } catch {
            _ = Signals.send(.kill, to: process.pid)
            agent.close()
            throw error
        }
        let configuration = ClusterConfiguration(
            settings: options.settings, ackWait: options.ackWait, host: options.hostName,
            role: options.role == .ingest ? .ingest : .work, version: options.version)
        outgoing.append((ClusterRequest.configure(configuration).encode(), nil))
        flush()
    }

    deinit { stop() }

    /// Keeps the child's exit watched after the link is gone, so that sd-event reaps it; freed when it exits.
    private final class ChildWatch {
        var source: EventSource?
        var exited: ((ExitStatus) -> Void)?
    }

    /// Publishes `delivery` with the content of `content` (read from offset 0; the link sends a duplicate of its own,
    /// the caller keeps `content`). The outcome comes to `published` with the returned ref.
    @discardableResult
    public func publish(_ delivery: ClusterDelivery, content: FileDescriptor) -> UInt64 {
        let ref = nextRef
        nextRef += 1
        let copy: FileDescriptor
        do { copy = try content.duplicate() } catch {
            later { [weak self] in
                self?.published(ref, .failure(PublishFailure(reason: "cannot pass the file on: \(error)",
                                                             transient: false)))
            }
            return ref
        }
        send(.publish(ref: ref, delivery: delivery), attaching: copy)
        return ref
    }

    /// The whole set of handlers this host works for, replacing the previous one.
    public func serve(_ handlers: [ServedHandler]) { send(.serve(handlers: handlers)) }

    /// The agent takes `count` more deliveries for `handler`.
    public func grant(_ handler: String, count: Int) {
        guard count > 0 else { return }
        send(.grant(handler: handler, count: count))
    }

    /// Answers the delivery `ref` (`ClusterWork.ref`).
    public func answer(_ ref: UInt64, _ action: ClusterAnswer) { send(.answer(ref: ref, action: action)) }

    /// Ends the child: its socket closed (it deletes its presence and exits), SIGTERM; sd-event reaps it.
    public func stop() {
        guard !dead else { return }
        dead = true
        release()
        _ = Signals.send(.terminate, to: process.pid)
    }

    /// The child of `inboxd-cluster`'s name next to the running executable, else the package's.
    public static func defaultExecutable() -> String {
        if let running = CurrentProcess.executablePath, let slash = running.lastIndex(of: "/") {
            let beside = String(running[..<slash]) + "/inboxd-cluster"
            if (try? Directory.exists(beside)) == true { return beside }
        }
        return "/usr/lib/inboxd/inboxd-cluster"
    }

    // MARK: Writing

    private func send(_ request: ClusterRequest, attaching descriptor: FileDescriptor? = nil) {
        guard !dead else {
            descriptor?.close()
            return
        }
        if isReady {
            outgoing.append((request.encode(), descriptor))
            flush()
        } else {
            waiting.append((request.encode(), descriptor))
        }
    }

    /// Writes what is queued until the socket is full; then waits for it to be writable.
    private func flush() {
        while !dead, let first = outgoing.first {
            switch channel.send(first.bytes, attaching: first.descriptor) {
            case .sent:
                first.descriptor?.close()
                outgoing.removeFirst()
            case .wouldBlock:
                if writeSource == nil {
                    writeSource = try? loop.addIO(channel.descriptor, events: EventLoop.writable) { [unowned self] _ in
                        self.writeSource = nil
                        self.flush()
                    }
                }
                return
            case .failed(let error):
                die("cannot write to the cluster child: \(error)")
                return
            }
        }
    }

    // MARK: Reading

    private func readReports() {
        while !dead {
            switch channel.receive(into: &buffer) {
            case .wouldBlock: return
            case .endOfFile: die("the cluster child closed its socket"); return
            case .truncated: die("the cluster child sent a message over \(ClusterProtocol.maximumMessageBytes) bytes")
            case .failed(let error): die("cannot read from the cluster child: \(error)")
            case .message(let bytes, let descriptor):
                switch ClusterReport.parse(bytes) {
                case .failure(let error):
                    descriptor?.close()
                    die("the cluster child broke the protocol: \(error)")
                case .success(let report):
                    guard report.carriesDescriptor == (descriptor != nil) else {
                        descriptor?.close()
                        die("the cluster child broke the protocol: a \(report.carriesDescriptor ? "delivery without" : "report with") a descriptor")
                        return
                    }
                    handle(report, descriptor)
                }
            }
        }
    }

    private func handle(_ report: ClusterReport, _ descriptor: FileDescriptor?) {
        switch report {
        case .ready(let version):
            guard !isReady else { return }
            isReady = true
            logger.log(.debug, "cluster child ready", fields: ["INBOX_CLUSTER_VERSION": version])
            outgoing += waiting
            waiting = []
            flush()
        case .published(let ref, let sequence, let duplicate, let digest, let size):
            published(ref, .success(PublishReceipt(sequence: sequence, duplicate: duplicate, digest: digest,
                                                   size: size)))
        case .publishFailed(let ref, let reason, let transient):
            published(ref, .failure(PublishFailure(reason: reason, transient: transient)))
        case .delivery(let ref, let handler, let sequence, let delivered, let delivery):
            guard let descriptor else { return }
            received(ClusterWork(ref: ref, handler: handler, sequence: sequence, delivered: delivered,
                                 delivery: delivery, content: descriptor))
        case .poison(let handler, let sequence, let reason):
            poisoned(handler, sequence, reason)
        case .state(let state):
            self.state = state
            stateChanged(state)
        }
    }

    // MARK: The end

    /// The link is dead: sources dropped, the socket closed, the child killed, `lost` told why (once).
    private func die(_ reason: String) {
        guard !dead else { return }
        dead = true
        release()
        _ = Signals.send(.kill, to: process.pid)
        lost(reason)
    }

    private func release() {
        readSource = nil
        writeSource = nil
        deferred = []
        for message in outgoing + waiting { message.descriptor?.close() }
        outgoing = []
        waiting = []
        channel.close()
    }

    /// Runs `body` from the event loop, after the current call returns.
    private func later(_ body: @escaping () -> Void) {
        if let source = try? loop.addDefer(body) { deferred.append(source) }
    }
}
