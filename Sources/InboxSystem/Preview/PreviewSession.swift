import Glibc
import InboxCore

/// One run of a viewer on one file for `inboxctl preview` (Quick Look's job): read-only, nothing consumed.
///
/// The viewer runs as the caller, on the file where it lies; as root, as the identity the agent would give the
/// handler (its `User=`, or its own uid), on a read-only copy only that identity's group can read. Either way
/// Landlock leaves it reading and executing everywhere and writing only in a scratch directory of its own
/// (TMPDIR, INBOX_DOCUMENTS), which is removed afterwards: it cannot delete, rename, write or truncate the file.
/// What Landlock does not cover (mode, owner, attributes) is checked after it exits, as the agent does.
public struct PreviewSession {
    public struct Item: Sendable {
        public var path: String
        public var contentType: String
        public var contentTypes: [String]
        public var preview: Delivery.Preview

        public init(path: String, contentType: String, contentTypes: [String], preview: Delivery.Preview) {
            self.path = path
            self.contentType = contentType
            self.contentTypes = contentTypes
            self.preview = preview
        }
    }

    public enum Outcome: Sendable, Equatable {
        case exited(ExitStatus)
        /// A resident viewer answered its one delivery (`done` is success).
        case answered(HandlerAnswer.Result, reason: String)
        /// A resident viewer ended without answering: how it ended, why its delivery could not be sent, and the
        /// first message it sent that was not its answer.
        case unanswered(ExitStatus, sendFailed: Errno?, ignored: String?)
        /// Stopped at the registration's TimeoutSec= (or the default).
        case timedOut(Duration)
        /// Stopped because inboxctl was interrupted.
        case interrupted
    }

    public struct Result: Sendable {
        public var outcome: Outcome
        /// How the viewer changed the file it was shown, if it did (with Landlock, only mode, owner or attributes can).
        public var change: String?
    }

    public let registration: HandlerRegistration
    /// Who the viewer runs as; nil is the caller. As root, what `HandlerIdentities` gives the agent for the handler.
    public let identity: Identity?
    public let settings: AgentSettings
    public let landlockABI: Int

    public init(registration: HandlerRegistration, identity: Identity?, settings: AgentSettings,
                landlockABI: Int = LandlockRuleset.abi()) {
        self.registration = registration
        self.identity = identity
        self.settings = settings
        self.landlockABI = landlockABI
    }

    /// Runs the viewer on `item` with `output` as its stdout and stderr, waiting for it to end; `interrupted` is polled
    /// while it runs. Errors are what kept it from starting.
    public func run(_ item: Item, output: FileDescriptor, interrupted: () -> Bool) throws(SystemError) -> Result {
        // A Unit= handler is an instance of a template that systemd starts for a delivery; a preview has none to give.
        if let unit = registration.unit {
            throw SystemError("preview (Unit=\(unit) runs as a systemd unit, not as a viewer)", errno: .notSupported)
        }
        let source = try openSource(item.path)
        defer { source.descriptor.close() }
        let scratch = try Scratch(identity: identity)
        defer { scratch.remove() }

        let name = lastPathComponent(item.path)
        var shownPath = item.path
        var shownCopy: FileDescriptor?
        if let identity, identity.uid != CurrentProcess.userID {
            // Another identity: a copy the viewer's group may read and nobody but root may change or remove.
            let view = try scratch.root.subdirectory("view", mode: 0o750)
            try? view.descriptor.chown(uid: 0, gid: identity.gid)
            let copyName = FileNames.sanitized(Array(name.utf8))
            switch scratch.root.copyIn(source, to: view, preferred: copyName.isEmpty ? "file" : copyName) {
            case .success(let (placed, copy)):
                try? copy.chown(uid: 0, gid: identity.gid)
                try? copy.chmod(0o440)
                shownPath = view.child(placed)
                shownCopy = copy
            case .failure(let error):
                throw error
            }
        }
        defer { shownCopy?.close() }
        let before = FileIdentity(shownCopy ?? source.descriptor)

        var delivery = Delivery(
            id: ArrivalReader.newDeliveryID(), handler: registration.identifier, name: name, path: shownPath,
            documents: scratch.tmp, contentType: item.contentType, contentTypes: item.contentTypes, sourceUID: CurrentProcess.userID,
            attempt: 1)
        delivery.preview = item.preview
        var ruleset: LandlockRuleset?
        if landlockABI > 0 {
            let sandbox = try LandlockRuleset(abi: landlockABI)
            try sandbox.allow(.readExecute, beneath: "/")
            try sandbox.allow([.readFile, .writeFile], beneath: "/dev/null")
            try sandbox.allow(LandlockAccess.all(abi: landlockABI), beneath: scratch.tmp)
            ruleset = sandbox
        } else if settings.landlock == .require || registration.requiresLandlock {
            throw SystemError("landlock (required by \(registration.requiresLandlock ? "RequireLandlock=yes" : "Landlock=require"))",
                              errno: .notSupported)
        }

        let form = Form(registration)
        let stdin = try makeMemoryFile(name: "inboxctl-preview", contents: form.standardInput(for: delivery))
        defer { stdin.close() }
        let passing = Self.passedEnvironment(switchingUser: identity != nil)
        var socket: (agent: MessageSocket, instance: FileDescriptor)?
        var request: SpawnRequest
        switch form {
        case .file:
            request = SpawnRequest(handler: registration, delivery: delivery, tmp: scratch.tmp, identity: identity,
                                   passing: passing, standardInput: stdin, output: output)
        case .batch:
            request = SpawnRequest(handler: registration, batch: [delivery], documents: scratch.tmp, tmp: scratch.tmp,
                                   identity: identity, passing: passing, extra: ["INBOX_PREVIEW=1"],
                                   standardInput: stdin, output: output)
        case .resident:
            let ends = try MessageSocket.pair()
            socket = ends
            request = SpawnRequest(resident: registration, documents: scratch.tmp, tmp: scratch.tmp, identity: identity,
                                   passing: passing, extra: ["INBOX_PREVIEW=1"], socket: ends.instance,
                                   standardInput: stdin, output: output)
        }
        defer { socket?.agent.close() }
        request.workingDirectory = scratch.tmp
        request.landlockRuleset = ruleset?.descriptor
        request.parentDeathSignal = SIGKILL
        let process: SpawnedProcess
        do {
            process = try spawn(request)
            socket?.instance.close()
        } catch {
            socket?.instance.close()
            throw SystemError(error.step, path: error.path, errno: error.errno)
        }
        defer { process.pidfd.close() }

        var instance: Instance?
        if let agent = socket?.agent {
            // Its own read-only descriptor of the file shown, attached to the one delivery: it cannot write through it.
            let shown: FileDescriptor
            do { shown = try (shownCopy ?? source.descriptor).reopenedReadOnly() } catch {
                Signals.send(.kill, toGroup: process.pid)
                _ = reap(process)
                throw SystemError("open", path: shownPath, errno: error)
            }
            defer { shown.close() }
            instance = Instance(socket: agent, deliveryID: delivery.id)
            switch agent.send(delivery.stdinDocument(), attaching: shown) {
            case .sent:
                break
            case .wouldBlock:
                // The first message on an empty socket: only one larger than the socket's buffer cannot go.
                instance?.sendFailed = .wouldBlock
                agent.shutdownSending()
            case .failed(let error):
                instance?.sendFailed = error
                agent.shutdownSending()
            }
        }
        let outcome = wait(for: process, instance: &instance, interrupted: interrupted)
        var change: String?
        let after: stat?
        if let shownCopy { after = try? shownCopy.status() } else { after = try? FileSystem.status(item.path, followingLinks: false) }
        if let after {
            if let before, FileIdentity(after) != before { change = before.differences(from: FileIdentity(after)) }
        } else {
            change = "it is gone"
        }
        return Result(outcome: outcome, change: change)
    }

    /// The viewer's time bound: TimeoutSec=, else the agent's default; nil when there is none.
    var timeout: Duration? {
        registration.timeoutDisabled ? nil : registration.timeout ?? settings.defaultTimeout
    }

    /// How the viewer is run, as the agent would run it for one file: a process for the file; a batch of one
    /// (`%F`/`%U`: the file as the list, a JSON array on stdin, INBOX_BATCH_SIZE=1); or a resident instance started
    /// for this one delivery (fd 3, one message with the file's descriptor, its answer, then end of file).
    enum Form {
        case file, batch, resident

        init(_ registration: HandlerRegistration) {
            switch registration.activation {
            case .launch: self = registration.exec.takesFileList ? .batch : .file
            case .resident: self = .resident
            }
        }

        func standardInput(for delivery: Delivery) -> [UInt8] {
            switch self {
            case .file: delivery.stdinDocument()
            case .batch: Delivery.batchDocument([delivery])
            case .resident: []
            }
        }
    }

    /// A resident viewer's one delivery: its socket and what came back.
    private struct Instance {
        let socket: MessageSocket
        let deliveryID: String
        var answer: HandlerAnswer?
        /// Messages that were not the answer (malformed, another id), ignored; the first is kept to report.
        var ignored: String?
        var sendFailed: Errno?
        /// It closed its end, or end of file was sent to it after its answer.
        var closed = false
        var buffer = [UInt8](repeating: 0, count: HandlerAnswer.maximumSize + 1)

        /// Reads what it sent; true once its answer is in.
        mutating func read() -> Bool {
            while !closed {
                switch socket.receive(into: &buffer) {
                case .message(let bytes):
                    switch HandlerAnswer.parse(bytes) {
                    case .success(let answer) where answer.deliveryID == deliveryID:
                        self.answer = answer
                        // Its one delivery is answered: end of file tells it to exit.
                        socket.shutdownSending()
                        closed = true
                    case .success(let other):
                        ignored = ignored ?? "an answer for another delivery (\(other.deliveryID.prefix(40)))"
                    case .failure(let error):
                        ignored = ignored ?? "a malformed answer (\(error))"
                    }
                case .truncated:
                    ignored = ignored ?? "a malformed answer (longer than \(HandlerAnswer.maximumSize) bytes)"
                case .wouldBlock:
                    return answer != nil
                case .endOfFile, .failed:
                    closed = true
                }
            }
            return answer != nil
        }
    }

    /// Waits for the viewer, stopping its process group at the time bound or an interruption: SIGTERM, then SIGKILL
    /// two seconds later. Whatever is left in its group once it has ended is killed too. A resident viewer is waited
    /// for its answer, then (after end of file) for its exit, which has the same two seconds and the same stop.
    private func wait(for process: SpawnedProcess, instance: inout Instance?, interrupted: () -> Bool) -> Outcome {
        let started = ContinuousClock.now
        var stopping: (reason: Outcome?, since: ContinuousClock.Instant)?
        var answered: (answer: HandlerAnswer, at: ContinuousClock.Instant)?
        while true {
            let reading = instance.map { !$0.closed } ?? false
            if reading, let socket = instance?.socket {
                _ = try? socket.descriptor.poll(CShort(POLLIN), timeout: .milliseconds(100))
                if instance?.read() == true, answered == nil, let answer = instance?.answer {
                    answered = (answer, ContinuousClock.now)
                }
            }
            if let ready = try? process.pidfd.poll(CShort(POLLIN), timeout: reading ? .zero : .milliseconds(100)),
               ready != 0 {
                // Ended, not yet reaped: its pid, and so its process group's id, cannot be anyone else's yet.
                Signals.send(.kill, toGroup: process.pid)
                if let status = reap(process) {
                    if let reason = stopping?.reason { return reason }
                    if let answered { return .answered(answered.answer.result, reason: answered.answer.reason) }
                    if let instance {
                        return .unanswered(status, sendFailed: instance.sendFailed, ignored: instance.ignored)
                    }
                    return .exited(status)
                }
            }
            let now = ContinuousClock.now
            if let current = stopping {
                if now - current.since > .seconds(2) { Signals.send(.kill, toGroup: process.pid) }
                continue
            }
            if interrupted() {
                stopping = (.interrupted, now)
            } else if let answered {
                // Answered: the time bound no longer applies, only the two seconds it has to exit after end of file.
                if now - answered.at > .seconds(2) { stopping = (nil, now) }
            } else if let timeout, now - started > timeout {
                stopping = (.timedOut(timeout), now)
            }
            if stopping != nil { Signals.send(.terminate, toGroup: process.pid) }
        }
    }

    /// Opens the file as `inboxctl info` does: never through a final symlink, never blocking, a regular file.
    private func openSource(_ path: String) throws(SystemError) -> OpenedFile {
        let file: FileDescriptor
        do { file = try .open(path, .readOnly, options: [.noFollow, .nonBlocking, .noControllingTerminal]) } catch {
            throw SystemError("open", path: path, errno: error)
        }
        guard let st = try? file.status(), (st.st_mode & S_IFMT) == S_IFREG else {
            file.close()
            throw SystemError("open (not a regular file)", path: path, errno: .invalidArgument)
        }
        return OpenedFile(descriptor: file, status: st)
    }

    /// What a viewer shown to the caller needs from the caller's environment: the terminal and display, and, when it
    /// runs as the caller, who and where that is.
    static func passedEnvironment(switchingUser: Bool) -> [String] {
        let always = ["TERM", "COLORTERM", "LANG", "LC_ALL", "LC_CTYPE"]
        let ownUser = ["HOME", "USER", "LOGNAME", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "XAUTHORITY"]
        var passed: [String] = []
        for key in always + (switchingUser ? [] : ownUser) {
            if let value = CurrentProcess.environment(key) { passed.append(key + "=" + value) }
        }
        return passed
    }
}

/// The viewer's private directory: `inboxctl-preview-XXXXXX` in the caller's TMPDIR (or /tmp), with `tmp/`, the only
/// place the viewer may write, owned by the viewer's identity. Removed, whatever the viewer left in it, afterwards.
private struct Scratch {
    let root: Directory
    let tmp: String

    init(identity: Identity?) throws(SystemError) {
        root = try PreviewScratch.makeRoot(identity: identity)
        let tmpDirectory: Directory
        do { tmpDirectory = try root.subdirectory("tmp", mode: 0o700) } catch {
            PreviewScratch.remove(root.path)
            throw error
        }
        tmp = tmpDirectory.path
        if let identity { try? tmpDirectory.descriptor.chown(uid: identity.uid, gid: identity.gid) }
    }

    func remove() { PreviewScratch.remove(root.path) }
}
