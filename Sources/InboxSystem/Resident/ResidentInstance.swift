import Glibc
import InboxCore

/// One running process of a resident handler and its end of the socket: it owns the messages in both directions
/// (deliveries out, answers in, through event-loop io sources), the deliveries it holds unanswered, and its timers.
/// What the launcher decides (which instance gets a delivery, when one starts, what an exit means) is not here.
final class ResidentInstance {
    let handler: String
    let registration: HandlerRegistration
    let pid: pid_t
    let started: Duration
    private let socket: MessageSocket
    private let loop: EventLoop
    private let logger: Logger
    /// Sent (or waiting for room in the socket) and not answered, by delivery id.
    private(set) var inFlight: [String: ResidentAttempt] = [:]
    /// Messages the socket had no room for yet, oldest first; each attempt's descriptor is closed once sent.
    private var outgoing: [(attempt: ResidentAttempt, message: [UInt8])] = []
    /// Answered deliveries.
    private(set) var served = 0
    /// Takes no more deliveries: it is being stopped, or its registration changed.
    private(set) var retired = false
    /// Why it is being stopped, once it is; nil for an instance that ends on its own (a crash).
    private(set) var stopReason: String?
    /// The agent asked it to stop (idle, reload, timeout, shutdown), rather than seeing its socket close or fail: an
    /// instance that broke its end stopped on its own, whatever the agent did about it.
    private(set) var stoppedByAgent = false
    var childSource: EventSource?
    /// Its stdout and stderr; its lines name the delivery it holds while it holds exactly one (`attributeOutput`).
    var output: OutputRelay?
    private var readSource: EventSource?
    private var writeSource: EventSource?
    private var timer: EventSource?
    private var malformedAnswers = 0
    /// Where answers are read: one byte past the longest, so that a longer one is seen as cut short.
    private var answerBuffer = [UInt8](repeating: 0, count: HandlerAnswer.maximumSize + 1)

    /// An answer arrived for one of its deliveries.
    var answered: (ResidentInstance, ResidentAttempt, HandlerAnswer) -> Void = { _, _, _ in }
    /// It holds nothing now (after an answer, or a send that failed).
    var becameIdle: (ResidentInstance) -> Void = { _ in }

    init(handler: String, registration: HandlerRegistration, pid: pid_t, socket: MessageSocket, loop: EventLoop,
         logger: Logger) throws(SystemError) {
        self.handler = handler
        self.registration = registration
        self.pid = pid
        self.socket = socket
        self.loop = loop
        self.logger = logger
        started = EventLoop.now()
        readSource = try loop.addIO(socket.descriptor) { [unowned self] _ in self.readAnswers() }
    }

    deinit {
        readSource = nil
        writeSource = nil
        socket.close()
    }

    var load: Int { inFlight.count }
    var hasRoom: Bool { !retired && inFlight.count < registration.maxInFlight }

    /// Sends one delivery: its stdin JSON object with the attempt's descriptor (the Inbox copy, read-only) attached,
    /// closed once sent: at once, or later when the socket had no room. False when the socket is broken (the
    /// instance is then stopped, and the delivery is not its own; it keeps its descriptor for another instance).
    func send(_ attempt: ResidentAttempt) -> Bool {
        let message = attempt.delivery.stdinDocument()
        // Before it can see the delivery: what it wrote until now is not about this one.
        attributeOutput(adding: attempt.delivery.id)
        if outgoing.isEmpty {
            switch socket.send(message, attaching: attempt.file) {
            case .sent:
                attempt.sent()
                hold(attempt)
                return true
            case .wouldBlock:
                break
            case .failed(let error):
                stop(reason: "its socket failed (\(error))", byAgent: false)
                return false
            }
        }
        outgoing.append((attempt, message))
        hold(attempt)
        if writeSource == nil {
            writeSource = try? loop.addIO(socket.descriptor, events: EventLoop.writable) { [unowned self] _ in
                self.flushOutgoing()
            }
        }
        return true
    }

    private func hold(_ attempt: ResidentAttempt) {
        inFlight[attempt.delivery.id] = attempt
        attempt.held(by: self)
        timer = nil
    }

    private func flushOutgoing() {
        while let first = outgoing.first {
            switch socket.send(first.message, attaching: first.attempt.file) {
            case .sent:
                first.attempt.sent()
                outgoing.removeFirst()
            case .wouldBlock:
                return
            case .failed(let error):
                writeSource = nil
                stop(reason: "its socket failed (\(error))", byAgent: false)
                return
            }
        }
        writeSource = nil
    }

    /// Reads every answer there is. Each is one message; what is not an answer to a delivery it holds is logged
    /// (the first few per instance) and ignored.
    private func readAnswers() {
        while true {
            switch socket.receive(into: &answerBuffer) {
            case .message(let bytes):
                switch HandlerAnswer.parse(bytes) {
                case .success(let answer):
                    guard let attempt = inFlight.removeValue(forKey: answer.deliveryID) else {
                        ignored("an answer for \(answer.deliveryID.abbreviatedID), which it does not hold "
                                + "(unknown, or answered already)")
                        continue
                    }
                    served += 1
                    attributeOutput()
                    if let index = outgoing.firstIndex(where: { $0.attempt === attempt }) {
                        // Answered before it was even sent: the id was guessed, but the answer stands.
                        outgoing.remove(at: index).attempt.sent()
                    }
                    answered(self, attempt, answer)
                case .failure(let error):
                    ignored("a malformed answer (\(error))")
                }
            case .truncated:
                ignored("a malformed answer (longer than \(HandlerAnswer.maximumSize) bytes)")
            case .wouldBlock:
                if inFlight.isEmpty { becameIdle(self) }
                return
            case .endOfFile:
                readSource = nil
                if stopReason == nil { stop(reason: "it closed its socket", byAgent: false) }
                return
            case .failed(let error):
                readSource = nil
                if stopReason == nil { stop(reason: "its socket failed (\(error))", byAgent: false) }
                return
            }
        }
    }

    /// Its output names the one delivery it holds (with `adding`), or none when it holds several or none: which of them
    /// a line is about cannot be told then.
    private func attributeOutput(adding id: String? = nil) {
        guard let output else { return }
        let count = inFlight.count + (id == nil ? 0 : 1)
        if count == 1, let only = id ?? inFlight.keys.first {
            output.attribute(to: [only])
        } else {
            output.attribute(to: [])
        }
    }

    private func ignored(_ what: String) {
        malformedAnswers += 1
        guard malformedAnswers <= 10 else { return }
        let more = malformedAnswers == 10 ? "; further ones are not logged" : ""
        logger.log(.warning, "\(handler) (pid \(pid)) sent \(what), ignored\(more)",
                   fields: ["INBOX_HANDLER": handler, "INBOX_PID": String(pid)])
    }

    /// Takes no more deliveries; what it holds it may still answer.
    func retire() {
        retired = true
    }

    /// Waits `after` for an instance with nothing in flight, then `stop`s it with `reason`.
    func stopWhenIdle(after delay: Duration, reason: String) {
        timer = try? loop.addTimer(after: delay, accuracy: .milliseconds(100)) { [unowned self] in
            self.timer = nil
            if self.inFlight.isEmpty { self.stop(reason: reason) }
        }
    }

    /// Stops it: no more deliveries, end of file on its socket ("exit now"), SIGTERM after `grace`, SIGKILL after
    /// as long again. Answers it still sends are read and count.
    func stop(reason: String, grace: Duration = .seconds(5), byAgent: Bool = true) {
        retired = true
        guard stopReason == nil else { return }
        stopReason = reason
        stoppedByAgent = byAgent
        socket.shutdownSending()
        timer = try? loop.addTimer(after: grace) { [unowned self] in
            self.signal(.terminate)
            self.timer = try? self.loop.addTimer(after: grace) { [unowned self] in self.signal(.kill) }
        }
    }

    /// Stops it now with `signal` (a delivery timed out, or the agent's stop timeout passed); after `.terminate`,
    /// SIGKILL follows 5 s later.
    func terminate(reason: String, signal stop: DeliveryLifecycle.StopSignal) {
        retired = true
        if stopReason == nil {
            stopReason = reason
            stoppedByAgent = true
            socket.shutdownSending()
        }
        signal(Signal(stop))
        if stop == .terminate && timer == nil {
            timer = try? loop.addTimer(after: .seconds(5)) { [unowned self] in self.signal(.kill) }
        }
    }

    /// Signals its process group (it leads a session of its own), or the process alone; never once it has exited.
    private func signal(_ signal: Signal) {
        guard childSource != nil else { return }
        Signals.send(signal, toGroupOf: pid)
    }

    /// It exited: everything it held unanswered, for the launcher to end; its sources and descriptors go.
    func exited() -> [ResidentAttempt] {
        readSource = nil
        writeSource = nil
        timer = nil
        childSource = nil
        outgoing.removeAll()
        let unanswered = inFlight.values.sorted { $0.sequence < $1.sequence }
        inFlight.removeAll()
        for attempt in unanswered { attempt.instance = nil }
        return unanswered
    }

    /// For the status file.
    func status(now: Duration) -> AgentStatus.Instance {
        AgentStatus.Instance(handler: handler, pid: pid, inFlight: inFlight.count, served: served,
                             ageUSec: Int64((now - started).microseconds), stopping: stopReason != nil || retired)
    }
}

/// A delivery given to a resident handler, as the dispatcher knows it (`LaunchedAttempt`): waiting for an instance,
/// or held by one until it answers or ends.
final class ResidentAttempt: LaunchedAttempt {
    let delivery: Delivery
    /// Where it waits for an instance: a stop takes it out.
    private unowned let launcher: ResidentLauncher
    let container: Container
    /// The Inbox copy reopened read-only for the handler (`Launcher.start`), attached to its message; closed once
    /// sent, or when the attempt ends unsent.
    private(set) var file: FileDescriptor?
    /// Order of acceptance: pending deliveries go out, and unanswered ones come back, oldest first.
    let sequence: UInt64
    private let ended: (DeliveryOutcome) -> Void
    /// The instance that holds it; nil while it waits for one.
    weak var instance: ResidentInstance?
    private(set) var isFinished = false

    init(delivery: Delivery, launcher: ResidentLauncher, container: Container, file: FileDescriptor, sequence: UInt64,
         sandboxed: Bool, ended: @escaping (DeliveryOutcome) -> Void) {
        self.delivery = delivery
        self.launcher = launcher
        self.container = container
        self.file = file
        self.sequence = sequence
        self.sandboxed = sandboxed
        self.ended = ended
    }

    var pid: Int32 { instance?.pid ?? 0 }
    /// Whichever instance takes it runs under Landlock: known from the start, before one does.
    let sandboxed: Bool

    fileprivate func held(by instance: ResidentInstance) {
        self.instance = instance
    }

    /// A delivery's TimeoutSec= passed (or the agent's stop timeout): its instance is stopped, and what it held
    /// unanswered ends with it. One still waiting for an instance just ends, from the loop.
    func stop(_ signal: DeliveryLifecycle.StopSignal) {
        guard !isFinished else { return }
        guard let instance else {
            launcher.withdraw(self, signal)
            return
        }
        instance.terminate(reason: "delivery \(delivery.id) of \(delivery.name) got no answer in time", signal: signal)
    }

    deinit { file?.close() }

    /// Its message went out (or it was answered before): the handler has its own descriptor now.
    func sent() {
        file?.close()
        file = nil
    }

    /// Reports how it ended, once.
    func finish(_ outcome: DeliveryOutcome) {
        guard !isFinished else { return }
        isFinished = true
        instance = nil
        sent()
        ended(outcome)
    }
}

extension String {
    /// A delivery id as a handler sent it, short enough for a log line.
    fileprivate var abbreviatedID: String {
        let printable = unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        let text = printable ? self : "(unprintable)"
        return text.count > 40 ? String(text.prefix(37)) + "..." : text
    }
}
