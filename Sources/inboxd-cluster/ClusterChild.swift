import InboxCluster
import InboxCore
import InboxSystem

/// The child's one thread: the agent's requests, the connection, fetching within the agent's credit, `inProgress`
/// for what the agent holds, presence and state. Every libnats call is bounded by its timeout, and nothing the
/// network sends can end it: a message that breaks a bound is poison, termed and reported.
final class ClusterChild {
    /// A handler this host works for.
    final class Served {
        var ackWait: Duration
        /// Deliveries the agent may still be given.
        var credit = 0
        var subscription: PullSubscription?
        init(ackWait: Duration) { self.ackWait = ackWait }
    }

    /// A delivery the agent holds, not answered yet.
    struct Held {
        let message: JetStreamMessage
        let handler: String
        let delivery: ClusterDelivery
        let ackWait: Duration
        var renewed: Duration
    }

    private let channel: ClusterChannel
    private let configuration: ClusterConfiguration
    private let names: ClusterNames
    private let spool: FileDescriptor?
    private var buffer = ClusterChannel.makeBuffer()
    private var session: ClusterSession?
    private var lastError: String?
    private var lastAttempt: Duration?
    private var wasConnected = false
    private var served: [String: Served] = [:]
    private var order: [String] = []
    private var turn = 0
    private var held: [UInt64: Held] = [:]
    private var nextRef: UInt64 = 1
    private var nextRound: Duration = .zero
    private var lastState = ClusterState(connected: false)

    init(channel: ClusterChannel, configuration: ClusterConfiguration, spool: FileDescriptor?) {
        self.channel = channel
        self.configuration = configuration
        // awaitConfiguration checked the name.
        self.names = configuration.names!
        self.spool = spool
    }

    /// The agent's first message, which must configure; nil (said on stderr) when it does not come within 30 s.
    static func awaitConfiguration(_ channel: ClusterChannel) -> ClusterConfiguration? {
        var buffer = ClusterChannel.makeBuffer()
        guard channel.wait(.readable, timeout: .seconds(30)) else {
            complain("no configuration from the agent within 30 s")
            return nil
        }
        guard case .message(let bytes, let descriptor) = channel.receive(into: &buffer) else {
            complain("the agent closed the socket before configuring")
            return nil
        }
        descriptor?.close()
        switch ClusterRequest.parse(bytes) {
        case .success(.configure(let configuration)): return configuration
        case .success: complain("the agent's first request is not configure")
        case .failure(let error): complain("the agent's first request is refused: \(error)")
        }
        return nil
    }

    static func complain(_ text: String) {
        _ = FileDescriptor.standardError.write(all: "inboxd-cluster: \(text)\n")
    }

    /// Runs until the agent closes the socket; then exits.
    func run() -> Never {
        connect()
        report(.ready(version: configuration.version))
        sendState()
        while true {
            let fetching = session?.isConnected == true && order.contains { served[$0]?.credit ?? 0 > 0 }
            if channel.wait(.readable, timeout: fetching ? .zero : .milliseconds(100)) { readRequests() }
            tick()
        }
    }

    // MARK: Requests

    private func readRequests() {
        while true {
            switch channel.receive(into: &buffer) {
            case .wouldBlock: return
            case .endOfFile: finish()
            case .failed(let error):
                Self.complain("cannot read from the agent: \(error)")
                finish()
            case .truncated:
                Self.complain("a request over \(ClusterProtocol.maximumMessageBytes) bytes, dropped")
            case .message(let bytes, let descriptor):
                switch ClusterRequest.parse(bytes) {
                case .failure(let error):
                    descriptor?.close()
                    Self.complain("a request refused: \(error)")
                case .success(let request):
                    handle(request, descriptor)
                }
            }
        }
    }

    private func handle(_ request: ClusterRequest, _ descriptor: FileDescriptor?) {
        switch request {
        case .configure:
            descriptor?.close()
            Self.complain("configure again, ignored")
        case .publish(let ref, let delivery):
            guard let descriptor else {
                report(.publishFailed(ref: ref, reason: "no file came with the request", transient: false))
                return
            }
            defer { descriptor.close() }
            report(publish(ref, delivery, descriptor))
        case .serve(let handlers):
            descriptor?.close()
            serve(handlers)
        case .grant(let handler, let count):
            descriptor?.close()
            served[handler]?.credit += count
        case .answer(let ref, let action):
            descriptor?.close()
            answer(ref, action)
        }
    }

    // MARK: Publishing

    private func publish(_ ref: UInt64, _ delivery: ClusterDelivery, _ file: FileDescriptor) -> ClusterReport {
        guard let session, session.isConnected else {
            return .publishFailed(ref: ref, reason: "not connected to NATS" + (lastError.map { ": \($0)" } ?? ""),
                                  transient: true)
        }
        guard let subject = names.deliverySubject(for: delivery.handler) else {
            return .publishFailed(ref: ref, reason: names.problem(forHandler: delivery.handler) ?? "no subject",
                                  transient: false)
        }
        guard let store = session.store else {
            return .publishFailed(ref: ref, reason: "no object store: \(session.problem ?? "")", transient: true)
        }
        var message = delivery
        do {
            let info = try store.put(delivery.id, from: file)
            guard let text = info.digest, case .success(let digest) = ObjectDigest.parse(text) else {
                return .publishFailed(ref: ref, reason: "the object store gave no digest", transient: false)
            }
            (message.object, message.digest, message.size) = (delivery.id, digest, Int64(info.size))
            let ack = try session.jetStream.publish(subject, payload: message.encode(), messageID: delivery.id)
            return .published(ref: ref, sequence: ack.sequence, duplicate: ack.duplicate, digest: digest,
                              size: message.size)
        } catch let error as ObjectStoreError {
            if case .nats(let nats) = error { return .publishFailed(ref: ref, reason: "\(error)", transient: nats.isTransient) }
            return .publishFailed(ref: ref, reason: "\(error)", transient: false)
        } catch let error as NatsError {
            return .publishFailed(ref: ref, reason: "\(error)", transient: error.isTransient)
        } catch {
            return .publishFailed(ref: ref, reason: "\(error)", transient: false)
        }
    }

    // MARK: Working

    private func serve(_ handlers: [ServedHandler]) {
        let wanted = Dictionary(handlers.map { ($0.handler, $0.ackWait) }, uniquingKeysWith: { first, _ in first })
        for handler in order where wanted[handler] == nil { served[handler] = nil }
        order = handlers.map(\.handler)
        for (handler, ackWait) in wanted {
            if let existing = served[handler] {
                if existing.ackWait != ackWait { (existing.ackWait, existing.subscription) = (ackWait, nil) }
            } else {
                served[handler] = Served(ackWait: ackWait)
            }
        }
        bindConsumers()
    }

    /// Makes (or updates) and binds to the consumer of every served handler that has none yet.
    private func bindConsumers() {
        guard let session, session.isConnected else { return }
        for handler in order {
            guard let entry = served[handler], entry.subscription == nil,
                  let consumer = names.consumer(for: handler), let subject = names.deliverySubject(for: handler) else {
                continue
            }
            do {
                try session.jetStream.ensurePullConsumer(PullConsumerSettings(
                    stream: names.stream, durable: consumer, filterSubject: subject, ackWait: entry.ackWait,
                    maxDeliver: -1, maxAckPending: 10_000))
                entry.subscription = try session.jetStream.pullSubscription(stream: names.stream, consumer: consumer)
            } catch {
                lastError = "\(error)"
            }
        }
    }

    /// One fetch, for the next handler in turn that has credit.
    private func fetch() {
        guard let session, session.isConnected, !order.isEmpty else { return }
        for step in 0..<order.count {
            let handler = order[(turn + step) % order.count]
            guard let entry = served[handler], entry.credit > 0, let subscription = entry.subscription else { continue }
            turn = (turn + step + 1) % order.count
            let messages: [JetStreamMessage]
            do { messages = try subscription.fetch(max: min(entry.credit, 64), timeout: .milliseconds(100)) } catch {
                lastError = "\(error)"
                return
            }
            for message in messages {
                entry.credit -= 1
                take(message, handler, entry, session)
            }
            return
        }
    }

    /// A fetched message: checked, its content fetched into a file of the spool, handed to the agent; or poison.
    private func take(_ message: JetStreamMessage, _ handler: String, _ entry: Served, _ session: ClusterSession) {
        let metadata = try? message.metadata()
        let sequence = metadata?.streamSequence ?? 0
        let delivery: ClusterDelivery
        switch ClusterDelivery.parse(message.payload) {
        case .failure(let error): return poison(message, handler, sequence, "\(error)", nil, entry)
        case .success(let parsed): delivery = parsed
        }
        guard delivery.handler == handler else {
            return poison(message, handler, sequence, "the message is for \(delivery.handler), not \(handler)",
                          delivery, entry)
        }
        guard let store = session.store, let spool else {
            return giveBack(message, entry, "no object store or spool directory")
        }
        let info: ObjectInfo?
        do { info = try store.info(delivery.object) } catch {
            return giveBack(message, entry, "\(error)")
        }
        guard let info else {
            return poison(message, handler, sequence, "its object \(delivery.object) is missing", delivery, entry)
        }
        guard info.digest == delivery.digest.description, info.size == UInt64(delivery.size) else {
            return poison(message, handler, sequence, "its object \(delivery.object) is \(info.size) bytes of "
                          + "\(info.digest ?? "no digest"), not \(delivery.size) of \(delivery.digest)", delivery, entry)
        }
        let file: FileDescriptor
        do { file = try FileDescriptor.openTemporaryFile(in: spool) } catch {
            return giveBack(message, entry, "cannot make a file in the spool directory: \(error)")
        }
        var written: FileDescriptor? = file
        defer { written?.close() }
        do {
            try store.get(delivery.object, into: file)
            try file.seek(to: 0)
        } catch let error as ObjectStoreError {
            switch error {
            case .corrupt, .notFound, .badInfo: return poison(message, handler, sequence, "\(error)", delivery, entry)
            default: return giveBack(message, entry, "\(error)")
            }
        } catch {
            return giveBack(message, entry, "\(error)")
        }
        // Handed over read-only, and no descriptor open for writing left here: the agent's check that nobody but the
        // handler holds a delivery open for writing sees the file as it will be delivered.
        let readOnly: FileDescriptor
        do { readOnly = try file.reopenedReadOnly() } catch {
            return giveBack(message, entry, "cannot reopen its file read-only: \(error)")
        }
        defer { readOnly.close() }
        file.close()
        written = nil
        let ref = nextRef
        nextRef += 1
        held[ref] = Held(message: message, handler: handler, delivery: delivery, ackWait: entry.ackWait,
                         renewed: MonotonicClock.now)
        report(.delivery(ref: ref, handler: handler, sequence: sequence, delivered: max(1, metadata?.delivered ?? 1),
                         delivery: delivery), attaching: readOnly)
    }

    /// A message that could not be handed over for a reason of this host's: given back for later, its credit kept.
    private func giveBack(_ message: JetStreamMessage, _ entry: Served, _ reason: String) {
        Self.complain("a delivery given back: \(reason)")
        try? message.nak(delay: .seconds(5))
        entry.credit += 1
    }

    /// A message refused: termed, its failed event published, reported. Its object is left alone: a refused message
    /// may name an object that is not its own.
    private func poison(_ message: JetStreamMessage, _ handler: String, _ sequence: UInt64, _ reason: String,
                        _ delivery: ClusterDelivery?, _ entry: Served) {
        try? message.term()
        publishFailed(delivery, handler: handler, reason: reason)
        entry.credit += 1
        report(.poison(handler: handler, sequence: sequence, reason: reason))
    }

    private func answer(_ ref: UInt64, _ action: ClusterAnswer) {
        guard let answered = held.removeValue(forKey: ref) else {
            Self.complain("an answer to \(ref), which is not held")
            return
        }
        do {
            switch action {
            case .ack:
                try answered.message.ack()
                try? session?.store?.remove(answered.delivery.object)
            case .nak(let delay):
                try answered.message.nak(delay: delay)
            case .term(let reason):
                try answered.message.term()
                publishFailed(answered.delivery, handler: answered.handler, reason: reason)
                try? session?.store?.remove(answered.delivery.object)
            }
        } catch {
            // Unanswered, the server hands it out again after AckWait.
            Self.complain("an answer was not taken: \(error)")
        }
    }

    /// The failed event on `inboxd.<name>.event.failed`: plain NATS, for whoever listens.
    private func publishFailed(_ delivery: ClusterDelivery?, handler: String, reason: String) {
        guard let session, let subject = names.eventSubject("failed") else { return }
        let quote = { (text: String?) in text.map(JSON.quote) ?? "null" }
        let event = "{\"id\":\(quote(delivery?.id)),\"handler\":\(quote(handler)),\"host\":\(quote(configuration.host)),"
            + "\"reason\":\(quote(reason)),\"name\":\(quote(delivery?.name)),\"time\":\(WallClock.now)}"
        do { try session.connection.publish(subject, payload: Array(event.utf8)) } catch {
            Self.complain("the failed event was not published: \(error)")
        }
    }

    // MARK: Time

    private func tick() {
        let now = MonotonicClock.now
        if session == nil, lastAttempt.map({ now - $0 >= .seconds(2) }) ?? true {
            connect()
            if session != nil { sendState() }
        } else if let made = session, made.problem != nil, lastAttempt.map({ now - $0 >= .seconds(5) }) ?? true {
            // Connected, but what the cluster needs could not be made or found (no JetStream, no permission):
            // tried again, on a new connection, until it can.
            made.connection.close()
            session = nil
            connect()
            sendState()
        }
        let connected = usable
        if connected != wasConnected {
            if connected { bindConsumers() }
            sendState()
        }
        fetch()
        for (ref, entry) in held where now - entry.renewed >= entry.ackWait / 3 {
            try? entry.message.inProgress()
            held[ref]?.renewed = now
        }
        if now >= nextRound {
            nextRound = now + .seconds(5)
            bindConsumers()
            putPresence()
            sendState()
        }
    }

    private func connect() {
        lastAttempt = MonotonicClock.now
        do {
            let made = try ClusterSession(configuration, names: names)
            session = made
            lastError = made.problem
            bindConsumers()
        } catch {
            lastError = "\(error)"
        }
    }

    // MARK: Presence and state

    private var presenceKey: String { HostPresence.key(host: configuration.host, role: configuration.role) }

    private func putPresence() {
        guard let session, session.isConnected, let bucket = session.bucket else { return }
        let presence = HostPresence(host: configuration.host, version: configuration.version,
                                    roles: [configuration.role], handlers: order, inFlight: held.count,
                                    lastSeenUSec: WallClock.now)
        _ = try? bucket.put(presenceKey, presence.encode())
    }

    /// Connected, with the stream, the object store and the bucket there: what the agent is told as `connected`.
    private var usable: Bool { session?.isConnected == true && session?.problem == nil }

    private func sendState() {
        let connected = usable
        wasConnected = connected
        var state = ClusterState(connected: connected, server: session?.connection.connectedURL,
                                 error: connected ? nil : lastError,
                                 handlers: lastState.handlers, hosts: lastState.hosts)
        if connected, let session {
            if let stream = try? session.jetStream.stream(names.stream, subjects: names.streamSubjects) {
                var counts: [String: UInt64] = [:]
                for (subject, count) in stream.subjectCounts {
                    if let handler = names.handler(forSubject: subject) { counts[handler] = count }
                }
                for handler in order where counts[handler] == nil { counts[handler] = 0 }
                state.handlers = counts.keys.sorted().map { handler in
                    let consumer = names.consumer(for: handler).flatMap {
                        try? session.jetStream.consumer(stream: names.stream, name: $0)
                    }
                    return HandlerState(handler: handler, pending: counts[handler] ?? 0, inFlight: consumer?.ackPending,
                                        redelivered: consumer?.redelivered ?? 0, hasConsumer: consumer != nil)
                }
            }
            if let bucket = session.bucket, let keys = try? bucket.keys() {
                state.hosts = keys.filter { $0.hasPrefix("host.") }.sorted().compactMap { key in
                    (try? bucket.get(key)).flatMap { $0 }.flatMap { try? HostPresence.parse($0.value).get() }
                }
            }
        }
        lastState = state
        report(.state(state))
    }

    // MARK: The agent

    private func report(_ report: ClusterReport, attaching file: FileDescriptor? = nil) {
        if let error = channel.sendWaiting(report.encode(), attaching: file) {
            Self.complain("cannot write to the agent: \(error)")
            finish()
        }
    }

    /// The agent is gone: presence deleted, the connection closed. Unanswered deliveries are handed out again after
    /// their AckWait.
    private func finish() -> Never {
        if let session {
            if session.isConnected { try? session.bucket?.delete(presenceKey) }
            held = [:]
            served = [:]
            session.connection.close()
        }
        CurrentProcess.exit(0)
    }
}
