/// A message from the cluster child to the agent (ClusterProtocol).
public enum ClusterReport: Sendable, Hashable {
    /// The first report, once the first connection was tried (whether or not a server answered).
    case ready(version: String)
    /// The request `ref` was published: the message's stream sequence, whether the server already had it, and the
    /// content's digest and size as the object store computed them.
    case published(ref: UInt64, sequence: UInt64, duplicate: Bool, digest: ObjectDigest, size: Int64)
    /// The request `ref` was not published. `transient`: no connection, a timeout, no responders (send it again
    /// later); otherwise refused for good (permissions, the file unreadable).
    case publishFailed(ref: UInt64, reason: String, transient: Bool)
    /// A delivery for `handler`, its content attached (a file of the child's in the spool directory, at offset 0);
    /// `delivered` is 1 the first time the server hands it out.
    case delivery(ref: UInt64, handler: String, sequence: UInt64, delivered: UInt64, delivery: ClusterDelivery)
    /// The child refused a message of `handler`'s subject (termed, its failed event published).
    case poison(handler: String, sequence: UInt64, reason: String)
    /// The connection and the cluster as the child sees them.
    case state(ClusterState)

    /// Whether a descriptor travels with it.
    public var carriesDescriptor: Bool {
        if case .delivery = self { true } else { false }
    }

    /// The message: one compact JSON object with a `type`.
    public func encode() -> [UInt8] {
        var out = JSONBytes(capacity: 256)
        switch self {
        case .ready(let version):
            out.raw("{\"type\":\"ready\",\"version\":"); out.string(version)
        case .published(let ref, let sequence, let duplicate, let digest, let size):
            out.raw("{\"type\":\"published\",\"ref\":"); out.integer(ref)
            out.raw(",\"sequence\":"); out.integer(sequence)
            out.raw(",\"duplicate\":"); out.boolean(duplicate)
            out.raw(",\"digest\":"); out.string(digest.description)
            out.raw(",\"size\":"); out.integer(size)
        case .publishFailed(let ref, let reason, let transient):
            out.raw("{\"type\":\"publishFailed\",\"ref\":"); out.integer(ref)
            out.raw(",\"reason\":"); out.string(ClusterProtocol.clipped(reason))
            out.raw(",\"transient\":"); out.boolean(transient)
        case .delivery(let ref, let handler, let sequence, let delivered, let delivery):
            out.raw("{\"type\":\"delivery\",\"ref\":"); out.integer(ref)
            out.raw(",\"handler\":"); out.string(handler)
            out.raw(",\"sequence\":"); out.integer(sequence)
            out.raw(",\"delivered\":"); out.integer(delivered)
            out.raw(",\"delivery\":"); out.raw(delivery.encode())
        case .poison(let handler, let sequence, let reason):
            out.raw("{\"type\":\"poison\",\"handler\":"); out.string(handler)
            out.raw(",\"sequence\":"); out.integer(sequence)
            out.raw(",\"reason\":"); out.string(ClusterProtocol.clipped(reason))
        case .state(let state):
            out.raw("{\"type\":\"state\",\"state\":")
            state.write(to: &out)
        }
        out.raw("}")
        return out.bytes
    }

    /// Reads a report as untrusted input.
    public static func parse(_ bytes: [UInt8]) -> Result<ClusterReport, ClusterProtocolError> {
        do throws(ClusterProtocolError) {
            return .success(try read(try ClusterMessageFields(message: bytes)))
        } catch {
            return .failure(error)
        }
    }

    private static func read(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> ClusterReport {
        let reason = { () throws(ClusterProtocolError) -> String in
            try fields.string("reason", limit: ClusterProtocol.maximumReasonBytes)
        }
        let sequence = { (key: String) throws(ClusterProtocolError) -> UInt64 in UInt64(try fields.integer(key)) }
        switch try fields.string("type", limit: 32, printable: true) {
        case "ready":
            return .ready(version: try fields.string("version", limit: 256, printable: true))
        case "published":
            let digest: ObjectDigest
            switch ObjectDigest.parse(try fields.string("digest", limit: 64, printable: true)) {
            case .success(let parsed): digest = parsed
            case .failure(let problem): throw ClusterProtocolError("\"digest\" of published \(problem.message)")
            }
            return .published(ref: try ClusterRequest.ref(fields), sequence: try sequence("sequence"),
                              duplicate: try fields.bool("duplicate"), digest: digest, size: try fields.integer("size"))
        case "publishFailed":
            return .publishFailed(ref: try ClusterRequest.ref(fields), reason: try reason(),
                                  transient: try fields.bool("transient"))
        case "delivery":
            let handler = try ClusterRequest.handler(fields)
            let delivery = try ClusterRequest.delivery(fields)
            guard delivery.handler == handler else {
                throw ClusterProtocolError("\"delivery\" of delivery is for \(delivery.handler), not \(handler)")
            }
            return .delivery(ref: try ClusterRequest.ref(fields), handler: handler,
                             sequence: try sequence("sequence"),
                             delivered: UInt64(try fields.integer("delivered", minimum: 1)), delivery: delivery)
        case "poison":
            return .poison(handler: try fields.string("handler", limit: ClusterProtocol.handlerBytes, printable: true),
                           sequence: try sequence("sequence"), reason: try reason())
        case "state":
            return .state(try ClusterState.read(try fields.object("state")))
        case let other:
            throw ClusterProtocolError("the report type '\(other.abbreviated)' is unknown")
        }
    }
}

/// The connection and the cluster as the child sees them: sent on every change of the connection and every 5 s.
public struct ClusterState: Sendable, Hashable {
    /// Whether a server is connected now.
    public var connected: Bool
    /// The URL of the server connected to.
    public var server: String?
    /// The last failure, as a sentence ("connect to nats://127.0.0.1:4222: no server"); nil when there was none.
    public var error: String?
    /// Every handler with a subject in the stream or served here.
    public var handlers: [HandlerState]
    /// The hosts that say they are present.
    public var hosts: [HostPresence]

    /// Creates one.
    public init(connected: Bool, server: String? = nil, error: String? = nil, handlers: [HandlerState] = [],
                hosts: [HostPresence] = []) {
        self.connected = connected
        self.server = server
        self.error = error
        self.handlers = handlers
        self.hosts = hosts
    }

    func write(to out: inout JSONBytes) {
        out.raw("{\"connected\":"); out.boolean(connected)
        out.raw(",\"server\":"); out.string(server.map(ClusterProtocol.clipped))
        out.raw(",\"error\":"); out.string(error.map(ClusterProtocol.clipped))
        out.raw(",\"handlers\":[")
        for (index, handler) in handlers.prefix(ClusterProtocol.maximumHandlers).enumerated() {
            if index > 0 { out.raw(",") }
            handler.write(to: &out)
        }
        out.raw("],\"hosts\":[")
        for (index, host) in hosts.prefix(ClusterProtocol.maximumHosts).enumerated() {
            if index > 0 { out.raw(",") }
            host.write(to: &out)
        }
        out.raw("]}")
    }

    static func read(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> ClusterState {
        ClusterState(connected: try fields.bool("connected"),
                     server: try fields.string("server", limit: ClusterProtocol.maximumReasonBytes, optional: true),
                     error: try fields.string("error", limit: ClusterProtocol.maximumReasonBytes, optional: true),
                     handlers: try fields.objects("handlers", limit: ClusterProtocol.maximumHandlers, HandlerState.read),
                     hosts: try fields.objects("hosts", limit: ClusterProtocol.maximumHosts, HostPresence.read))
    }
}

/// One handler's deliveries in the cluster.
public struct HandlerState: Sendable, Hashable {
    /// The handler.
    public var handler: String
    /// Messages waiting in the stream on its subject.
    public var pending: UInt64
    /// Messages handed out and not answered yet (its consumer's ack pending); nil when it has no consumer.
    public var inFlight: Int?
    /// Messages handed out more than once (its consumer's count).
    public var redelivered: Int
    /// Whether some host made its consumer: false for a handler that no host works for.
    public var hasConsumer: Bool

    /// Creates one.
    public init(handler: String, pending: UInt64, inFlight: Int?, redelivered: Int, hasConsumer: Bool) {
        self.handler = handler
        self.pending = pending
        self.inFlight = inFlight
        self.redelivered = redelivered
        self.hasConsumer = hasConsumer
    }

    func write(to out: inout JSONBytes) {
        out.raw("{\"handler\":"); out.string(handler)
        out.raw(",\"pending\":"); out.integer(pending)
        out.raw(",\"inFlight\":"); out.integer(inFlight)
        out.raw(",\"redelivered\":"); out.integer(redelivered)
        out.raw(",\"hasConsumer\":"); out.boolean(hasConsumer)
        out.raw("}")
    }

    static func read(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> HandlerState {
        HandlerState(handler: try fields.string("handler", limit: ClusterProtocol.handlerBytes, printable: true),
                     pending: UInt64(try fields.integer("pending")),
                     inFlight: try fields.integer("inFlight", optional: true).map { Int($0) },
                     redelivered: Int(try fields.integer("redelivered")), hasConsumer: try fields.bool("hasConsumer"))
    }
}

/// A host that takes part in the cluster, as its entry in the key-value bucket says (renewed every 5 s).
public struct HostPresence: Sendable, Hashable {
    /// Its name.
    public var host: String
    /// Its agent's version.
    public var version: String
    /// What it does.
    public var roles: [ClusterRole]
    /// The handlers it works for.
    public var handlers: [String]
    /// The deliveries it holds unanswered.
    public var inFlight: Int
    /// When it last said so: wall-clock microseconds since the epoch.
    public var lastSeenUSec: Int64

    /// Creates one.
    public init(host: String, version: String, roles: [ClusterRole], handlers: [String], inFlight: Int,
                lastSeenUSec: Int64) {
        self.host = host
        self.version = version
        self.roles = roles
        self.handlers = handlers
        self.inFlight = inFlight
        self.lastSeenUSec = lastSeenUSec
    }

    /// The key of its entry in the bucket: `host.<name, characters other than letters, digits, '-' and '_' as
    /// '_'>.<role>`.
    public static func key(host: String, role: ClusterRole) -> String {
        let clean = String(decoding: host.utf8.prefix(200).map { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") ? byte : UInt8(ascii: "_")
        }, as: UTF8.self)
        return "host.\(clean.isEmpty ? "_" : clean).\(role.rawValue)"
    }

    /// Its entry's value: one JSON object.
    public func encode() -> [UInt8] {
        var out = JSONBytes(capacity: 256)
        write(to: &out)
        return out.bytes
    }

    /// Reads an entry's value as untrusted input (any host of the cluster may write one).
    public static func parse(_ bytes: [UInt8]) -> Result<HostPresence, ClusterProtocolError> {
        do throws(ClusterProtocolError) {
            return .success(try read(try ClusterMessageFields(message: bytes)))
        } catch {
            return .failure(error)
        }
    }

    func write(to out: inout JSONBytes) {
        out.raw("{\"host\":"); out.string(host)
        out.raw(",\"version\":"); out.string(version)
        out.raw(",\"roles\":"); out.strings(roles.map(\.rawValue))
        out.raw(",\"handlers\":"); out.strings(Array(handlers.prefix(ClusterProtocol.maximumHandlers)))
        out.raw(",\"inFlight\":"); out.integer(inFlight)
        out.raw(",\"lastSeenUSec\":"); out.integer(lastSeenUSec)
        out.raw("}")
    }

    static func read(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> HostPresence {
        var roles: [ClusterRole] = []
        for text in try fields.strings("roles", limit: ClusterRole.allCases.count, bytes: 16) {
            guard let role = ClusterRole(rawValue: text) else {
                throw ClusterProtocolError("\"roles\" of \(fields.context) has '\(text)', neither ingest nor work")
            }
            roles.append(role)
        }
        return HostPresence(
            host: try fields.string("host", limit: ClusterDelivery.maximumSourceHostBytes, printable: true),
            version: try fields.string("version", limit: 256, printable: true), roles: roles,
            handlers: try fields.strings("handlers", limit: ClusterProtocol.maximumHandlers,
                                         bytes: ClusterProtocol.handlerBytes),
            inFlight: Int(try fields.integer("inFlight")), lastSeenUSec: try fields.integer("lastSeenUSec"))
    }
}
