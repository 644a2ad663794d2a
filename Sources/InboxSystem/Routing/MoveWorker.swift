import Glibc
import InboxCore
import Synchronization

/// What a move's filesystem work needs, as values (docs/design.md, One thread, and what a file costs it): the
/// directories (immutable, `Sendable`), the names, the checked file (its descriptor and the device and inode it was
/// checked as), and what the file is stamped with once it is the agent's. It is what crosses to the worker thread.
struct MoveRequest: Sendable {
    let source: Directory
    let name: [UInt8]
    let file: OpenedFile
    let target: Directory
    let preferred: String
    let staging: Directory
    let failed: Directory?
    /// The agent's sidecar to write beside the file; a move with one runs on the loop (the sidecar is opened for
    /// writing, which only the loop does).
    let sidecar: [UInt8]?
    let preparation: MovePreparation
    /// Whether the file's read lease is to be checked once it is in `target`.
    let checksLease: Bool
}

/// What a file is given once it is the agent's, in intake/ (`Directory.relocate`'s `prepare`): the delivery stamp,
/// the drop Inbox where it matters, and for a handler the owner and mode.
struct MovePreparation: Sendable {
    enum HandOver: Sendable {
        /// root: owned by root and the handler's group, read-only for both.
        case group(gid_t)
        /// Read-only for its owner (the agent's user).
        case ownerOnly
    }

    /// The `user.inboxd.delivery` value (`Arrival.deliveryStamp`); nil for a file the agent holds.
    let delivery: String?
    /// The `user.inboxd.inbox` value; nil when it is not recorded.
    let inbox: String?
    let handOver: HandOver?

    func apply(to file: FileDescriptor) {
        if let delivery { Arrival.stamp(file, delivery: delivery) }
        if let inbox { ExtendedAttributes(file).write(AgentAttribute.inbox, inbox) }
        switch handOver {
        case .group(let gid)?:
            try? file.chown(uid: 0, gid: gid)
            try? file.chmod(0o440)
        case .ownerOnly?:
            // Without Landlock, a write needs a chmod first, which the after-exit check sees in the change time.
            try? file.chmod(0o400)
        case nil:
            break
        }
    }
}

/// How a move ended, with what the loop needs of the file afterwards and would otherwise ask the kernel itself.
struct MoveOutcome: Sendable {
    let relocation: Relocation
    /// The read lease is unbroken (only asked for a `checksLease` move that did not copy; true otherwise).
    let leaseIntact: Bool
    /// The file as it lies in its target, for a move that did not copy.
    let identity: FileIdentity?

    /// The move itself: the same calls in the same order wherever it runs. Without `copying`, a move across
    /// filesystems fails with EXDEV having changed nothing, and is done again on the loop.
    static func perform(_ request: MoveRequest, copying: Bool) -> MoveOutcome {
        let relocation = request.source.relocate(request.name, file: request.file, to: request.target,
                                                 preferred: request.preferred, via: request.staging,
                                                 rejectsTo: request.failed, sidecar: request.sidecar,
                                                 copying: copying) { file in request.preparation.apply(to: file) }
        guard case .moved(_, nil) = relocation else {
            return MoveOutcome(relocation: relocation, leaseIntact: true, identity: nil)
        }
        let descriptor = request.file.descriptor
        return MoveOutcome(relocation: relocation, leaseIntact: !request.checksLease || descriptor.readLeaseIntact,
                           identity: FileIdentity(descriptor))
    }

    var isCrossDevice: Bool {
        if case .failed(let error) = relocation { return error.errno == .crossDevice }
        return false
    }
}

/// Runs intake's per-file filesystem work, the move by inode, on one worker thread, pipelined with the event loop:
/// while the worker moves a batch, the loop types the next. Only `MoveRequest` and `MoveOutcome` cross; each move's
/// continuation stays on the loop, in a FIFO, and runs there in the order the moves were asked for, so the loop stays
/// the only owner of the router's, the dispatcher's and the quotas' state and arrival order per handler holds (one
/// worker, first in first out). A move with a sidecar to write, and one across filesystems (a copy), runs on the loop,
/// when every move asked for before it is done. Without a worker (`threaded: false`, or no thread could be started)
/// every move runs on the loop at once, as before.
final class MoveWorker {
    private struct Entry {
        let request: MoveRequest
        let onWorker: Bool
        let done: (MoveOutcome) -> Void
    }

    /// nil: every move runs on the loop.
    private var channel: Channel?
    private var source: EventSource?
    /// Requests asked for in this loop iteration, handed to the worker together at its end (`flush`): one wake-up
    /// and one lock per intake batch, not per file.
    private var unsent: [MoveRequest] = []
    private var flush: EventSource?
    /// Moves asked for and not yet done, oldest first (from `head`); the first is always one on the worker.
    private var entries: [Entry] = []
    private var head = 0
    /// Outcomes were handled (the continuations ran): the router starts what was queued and intake takes more.
    var settled: () -> Void = {}

    init(loop: EventLoop, logger: Logger, threaded: Bool) {
        guard threaded else { return }
        do throws(SystemError) {
            let channel = try Channel()
            source = try loop.addIO(channel.ready) { [unowned self] _ in self.takeOutcomes() }
            source?.setPriority(EventPriority.intake)
            flush = try loop.addDefer { [unowned self] in self.send() }
            flush?.setEnabled(.off)
            try channel.startThread()
            self.channel = channel
        } catch {
            logger.log(.warning, "Cannot start the move worker thread: \(error); intake moves files on the loop")
            source = nil
        }
    }

    /// Moves asked for and not yet done; counted in intake's backpressure and waited for by the stop.
    var inFlight: Int { entries.count - head }

    /// Moves the file as `request` says, on the worker or on the loop (see the type); `done` runs on the loop, in the
    /// order the moves were asked for, at once when the move runs on the loop with nothing before it.
    func move(_ request: MoveRequest, done: @escaping (MoveOutcome) -> Void) {
        let onWorker = channel != nil && request.sidecar == nil
        guard onWorker || inFlight > 0 else {
            done(MoveOutcome.perform(request, copying: true))
            return
        }
        entries.append(Entry(request: request, onWorker: onWorker, done: done))
        guard onWorker else { return }
        if unsent.isEmpty { flush?.setEnabled(.oneShot) }
        unsent.append(request)
    }

    /// The end of the loop iteration: what was asked for goes to the worker.
    private func send() {
        guard !unsent.isEmpty else { return }
        channel?.submit(unsent)
        unsent.removeAll(keepingCapacity: true)
    }

    /// The eventfd said the worker finished some: their continuations, in order, with the loop's moves between.
    private func takeOutcomes() {
        guard let channel else { return }
        for outcome in channel.takeOutcomes() {
            let entry = entries[head]
            entries[head] = Entry(request: entry.request, onWorker: false, done: { _ in })
            head += 1
            // Across filesystems: copied here, where files may be opened for writing.
            entry.done(outcome.isCrossDevice ? MoveOutcome.perform(entry.request, copying: true) : outcome)
            runLoopMovesAtHead()
        }
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096 {
            entries.removeFirst(head)
            head = 0
        }
        settled()
    }

    /// The moves that run on the loop and whose turn has come (every move before them is done).
    private func runLoopMovesAtHead() {
        while head < entries.count, !entries[head].onWorker {
            let entry = entries[head]
            head += 1
            entry.done(MoveOutcome.perform(entry.request, copying: true))
        }
    }
}

/// The hand-off between the loop and the worker thread: requests one way, outcomes the other, under one lock; the
/// worker sleeps in read(2) on `wake` when it has nothing, the loop is told through `ready` (an eventfd in the event
/// loop) when outcomes wait, once until it takes them. `Sendable` through its members: the descriptors are values
/// and everything mutable is inside the `Mutex`.
private final class Channel: Sendable {
    struct State: Sendable {
        var requests: [MoveRequest] = []
        var outcomes: [MoveOutcome] = []
        /// The worker found nothing and sleeps (or is about to) in read(2) on `wake`.
        var idle = false
        /// `ready` was written and the loop has not taken the outcomes since.
        var told = false
    }

    /// The most the worker takes at once: its outcomes go back a batch at a time.
    static let batch = 32

    let wake: FileDescriptor
    let ready: FileDescriptor
    let state = Mutex(State())

    init() throws(SystemError) {
        let wake = sys_eventfd(blocking: true)
        guard wake >= 0 else { throw SystemError("eventfd", errno: .current) }
        let ready = sys_eventfd(blocking: false)
        guard ready >= 0 else {
            let error = Errno.current
            FileDescriptor(rawValue: wake).close()
            throw SystemError("eventfd", errno: error)
        }
        self.wake = FileDescriptor(rawValue: wake)
        self.ready = FileDescriptor(rawValue: ready)
    }

    /// Only when no thread was started (a started one holds the channel for the life of the process).
    deinit {
        wake.close()
        ready.close()
    }

    func startThread() throws(SystemError) {
        let result = sys_pthread_start_detached { [self] in self.work() }
        guard result == 0 else { throw SystemError("pthread_create", errno: Errno(rawValue: result)) }
    }

    /// On the loop: more requests, in order; the worker is woken only if it sleeps.
    func submit(_ requests: [MoveRequest]) {
        let wakes = state.withLock { state -> Bool in
            state.requests.append(contentsOf: requests)
            guard state.idle else { return false }
            state.idle = false
            return true
        }
        if wakes { Self.signal(wake) }
    }

    /// On the loop: every outcome the worker has, in order.
    func takeOutcomes() -> [MoveOutcome] {
        Self.drain(ready)
        return state.withLock { state in
            state.told = false
            defer { state.outcomes.removeAll(keepingCapacity: true) }
            return state.outcomes
        }
    }

    /// The worker thread: a batch of requests at a time, in order, forever (the process's exit ends it).
    private func work() {
        while true {
            let batch = state.withLock { state -> [MoveRequest] in
                guard !state.requests.isEmpty else {
                    state.idle = true
                    return []
                }
                let count = min(Self.batch, state.requests.count)
                defer { state.requests.removeFirst(count) }
                return Array(state.requests.prefix(count))
            }
            guard !batch.isEmpty else {
                Self.drain(wake)
                continue
            }
            let outcomes = batch.map { MoveOutcome.perform($0, copying: false) }
            let tells = state.withLock { state -> Bool in
                state.outcomes.append(contentsOf: outcomes)
                guard !state.told else { return false }
                state.told = true
                return true
            }
            if tells { Self.signal(ready) }
        }
    }

    private static func signal(_ eventfd: FileDescriptor) {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { eventfd.write(all: $0) }
    }

    /// Reads the counter (resetting it); on `wake`, sleeps until it is non-zero.
    private static func drain(_ eventfd: FileDescriptor) {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { try? eventfd.read(into: $0) }
    }
}
