/// The protocol between the agent and its cluster child (`inboxd-cluster`, docs/design.md, Cluster: the agent and
/// its child): a `SOCK_SEQPACKET` socket on which every message is one JSON object of at most `maximumMessageBytes`,
/// with at most one descriptor attached. The agent sends `ClusterRequest`s, the child `ClusterReport`s; each side
/// reads the other's as untrusted (the child parses what the network sent it), and refuses a message with a sentence.
///
///     agent                                  child
///     configure ─────────────────────────▶   connects (retries every 2 s)
///               ◀───────────────────────── ready, state (on every change, every 5 s)
///     publish + fd ──────────────────────▶   object store put, JetStream publish
///               ◀───────────────────────── published | publishFailed
///     serve, grant ──────────────────────▶   consumers, fetch within the credit
///               ◀───────────────────────── delivery + fd | poison
///     answer ────────────────────────────▶   ack (object deleted) | nak | term (failed event)
public enum ClusterProtocol {
    /// The largest message either side sends or reads.
    public static let maximumMessageBytes = 256 * 1024
    /// The largest whole number a message carries: what a JSON number carries exactly everywhere (2^53 - 1).
    public static let maximumInteger: Int64 = (1 << 53) - 1
    /// The longest sentence (a reason, an error) a message carries; longer ones are cut when written.
    public static let maximumReasonBytes = 4096
    /// The most handlers one message names (`serve`, a state's handlers, a host's handlers).
    public static let maximumHandlers = 4096
    /// The most hosts a state lists.
    public static let maximumHosts = 1024
    /// The longest handler identifier (`ClusterNames.maximumAssetNameLength`).
    static let handlerBytes = ClusterNames.maximumAssetNameLength
    /// The longest path (`PATH_MAX`).
    static let pathBytes = 4096

    /// `text` cut to `maximumReasonBytes` on a character boundary, for a sentence about to be written.
    static func clipped(_ text: String) -> String {
        guard text.utf8.count > maximumReasonBytes else { return text }
        var cut = ""
        for character in text {
            if cut.utf8.count + character.utf8.count > maximumReasonBytes - 3 { break }
            cut.append(character)
        }
        return cut + "..."
    }
}

/// Why a message of the protocol was refused: one sentence.
public struct ClusterProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sentence.
    public let message: String
    /// The sentence.
    public var description: String { message }

    init(_ message: String) { self.message = message }
}

/// What a host does in a cluster: publish what its Inboxes receive, or work for its handlers.
public enum ClusterRole: String, Sendable, Hashable, CaseIterable {
    /// Publishes arrivals of its cluster Inboxes.
    case ingest
    /// Pulls deliveries for its handlers.
    case work
}

/// A handler a host works for, and how long the server waits for an answer before handing a delivery out again.
public struct ServedHandler: Sendable, Hashable {
    /// The handler's identifier.
    public var handler: String
    /// The consumer's AckWait; the child renews it (`inProgress`) every third of it while the agent holds a delivery.
    public var ackWait: Duration

    /// Creates one.
    public init(handler: String, ackWait: Duration) {
        self.handler = handler
        self.ackWait = ackWait
    }
}

/// How the agent answers a delivery it was given.
public enum ClusterAnswer: Sendable, Hashable {
    /// Handled: the message is acknowledged and its content deleted from the object store.
    case ack
    /// To be tried again: handed out again after `delay`.
    case nak(delay: Duration)
    /// Failed for good: never handed out again; a failed event is published and the content deleted.
    case term(reason: String)
}

/// What the child is told first: where to connect, as whom, and for what role.
public struct ClusterConfiguration: Sendable, Hashable {
    /// The servers' URLs, in order (`ClusterSettings.Server.description`).
    public var servers: [String]
    /// The cluster's name (`ClusterNames`).
    public var name: String
    /// A `.creds` file; nil for none.
    public var credentials: String?
    /// A file holding an NKey seed; nil for none.
    public var nkeySeedFile: String?
    /// TLS: the CA file, the client certificate and its key; nil for none.
    public var tlsCAFile: String?
    public var tlsCertFile: String?
    public var tlsKeyFile: String?
    /// `nats://` may go in clear to a server that is not this host.
    public var insecure: Bool
    /// The AckWait of a handler the agent names without one.
    public var ackWait: Duration
    /// This host's name, as presence and failed events carry it.
    public var host: String
    /// What the child does.
    public var role: ClusterRole
    /// The agent's version.
    public var version: String
    /// How many servers keep each of the cluster's streams (Replicas=).
    public var replicas: Int

    /// Creates one.
    public init(servers: [String], name: String, credentials: String? = nil, nkeySeedFile: String? = nil,
                tlsCAFile: String? = nil, tlsCertFile: String? = nil, tlsKeyFile: String? = nil, insecure: Bool = false,
                ackWait: Duration, host: String, role: ClusterRole, version: String, replicas: Int = 1) {
        self.servers = servers
        self.replicas = replicas
        self.name = name
        self.credentials = credentials
        self.nkeySeedFile = nkeySeedFile
        self.tlsCAFile = tlsCAFile
        self.tlsCertFile = tlsCertFile
        self.tlsKeyFile = tlsKeyFile
        self.insecure = insecure
        self.ackWait = ackWait
        self.host = host
        self.role = role
        self.version = version
    }

    /// The configuration of a `[Cluster]` section.
    public init(settings: ClusterSettings, ackWait: Duration, host: String, role: ClusterRole, version: String) {
        self.init(servers: settings.servers.map(\.description), name: settings.names.name,
                  credentials: settings.credentials, nkeySeedFile: settings.nkeySeedFile, tlsCAFile: settings.tlsCAFile,
                  tlsCertFile: settings.tlsCertFile, tlsKeyFile: settings.tlsKeyFile, insecure: settings.insecure,
                  ackWait: ackWait, host: host, role: role, version: version, replicas: settings.replicas)
    }

    /// The cluster's names.
    public var names: ClusterNames? { ClusterNames(name: name) }

    func write(to out: inout JSONBytes) {
        out.raw("{\"servers\":"); out.strings(servers)
        out.raw(",\"name\":"); out.string(name)
        out.raw(",\"credentials\":"); out.string(credentials)
        out.raw(",\"nkeySeedFile\":"); out.string(nkeySeedFile)
        out.raw(",\"tlsCAFile\":"); out.string(tlsCAFile)
        out.raw(",\"tlsCertFile\":"); out.string(tlsCertFile)
        out.raw(",\"tlsKeyFile\":"); out.string(tlsKeyFile)
        out.raw(",\"insecure\":"); out.boolean(insecure)
        out.raw(",\"ackWaitMS\":"); out.integer(ackWait.milliseconds)
        out.raw(",\"host\":"); out.string(host)
        out.raw(",\"role\":"); out.string(role.rawValue)
        out.raw(",\"version\":"); out.string(version)
        out.raw(",\"replicas\":"); out.integer(replicas)
        out.raw("}")
    }

    static func read(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> ClusterConfiguration {
        let servers = try fields.strings("servers", limit: 64, bytes: 1024)
        guard !servers.isEmpty else { throw ClusterProtocolError("\"servers\" of \(fields.context) is empty") }
        let name = try fields.string("name", limit: ClusterNames.maximumNameLength, printable: true)
        guard ClusterNames.isValidName(name) else {
            throw ClusterProtocolError("\"name\" of \(fields.context) is not a cluster name")
        }
        let path = { (key: String) throws(ClusterProtocolError) -> String? in
            try fields.string(key, limit: ClusterProtocol.pathBytes, optional: true)
        }
        let roleText = try fields.string("role", limit: 16, printable: true)
        guard let role = ClusterRole(rawValue: roleText) else {
            throw ClusterProtocolError("\"role\" of \(fields.context) is neither ingest nor work")
        }
        return ClusterConfiguration(
            servers: servers, name: name, credentials: try path("credentials"), nkeySeedFile: try path("nkeySeedFile"),
            tlsCAFile: try path("tlsCAFile"), tlsCertFile: try path("tlsCertFile"), tlsKeyFile: try path("tlsKeyFile"),
            insecure: try fields.bool("insecure"),
            ackWait: .milliseconds(try fields.integer("ackWaitMS", minimum: 1)),
            host: try fields.string("host", limit: ClusterDelivery.maximumSourceHostBytes, printable: true),
            role: role, version: try fields.string("version", limit: 256, printable: true),
            replicas: Int(try fields.integer("replicas", minimum: 1, maximum: Int64(ClusterSettings.maximumReplicas))))
    }
}

/// A message from the agent to its cluster child.
public enum ClusterRequest: Sendable, Hashable {
    /// The first request: the settings to connect with.
    case configure(ClusterConfiguration)
    /// Publish the attached file (read-only, at offset 0) for `delivery`: the content goes to the object store under
    /// `delivery.id`, then the message (its object, digest and size set from the put) on the handler's subject.
    case publish(ref: UInt64, delivery: ClusterDelivery)
    /// The whole set of handlers this host works for, replacing the previous one.
    case serve(handlers: [ServedHandler])
    /// The agent takes `count` more deliveries for `handler`.
    case grant(handler: String, count: Int)
    /// The answer to the delivery `ref`.
    case answer(ref: UInt64, action: ClusterAnswer)

    /// Whether a descriptor travels with it.
    public var carriesDescriptor: Bool {
        if case .publish = self { true } else { false }
    }

    /// The message: one compact JSON object with a `type`.
    public func encode() -> [UInt8] {
        var out = JSONBytes(capacity: 256)
        switch self {
        case .configure(let configuration):
            out.raw("{\"type\":\"configure\",\"configuration\":")
            configuration.write(to: &out)
        case .publish(let ref, let delivery):
            out.raw("{\"type\":\"publish\",\"ref\":"); out.integer(ref)
            out.raw(",\"delivery\":"); out.raw(delivery.encode())
        case .serve(let handlers):
            out.raw("{\"type\":\"serve\",\"handlers\":[")
            for (index, served) in handlers.enumerated() {
                if index > 0 { out.raw(",") }
                out.raw("{\"handler\":"); out.string(served.handler)
                out.raw(",\"ackWaitMS\":"); out.integer(served.ackWait.milliseconds)
                out.raw("}")
            }
            out.raw("]")
        case .grant(let handler, let count):
            out.raw("{\"type\":\"grant\",\"handler\":"); out.string(handler)
            out.raw(",\"count\":"); out.integer(count)
        case .answer(let ref, let action):
            out.raw("{\"type\":\"answer\",\"ref\":"); out.integer(ref)
            switch action {
            case .ack: out.raw(",\"action\":\"ack\"")
            case .nak(let delay): out.raw(",\"action\":\"nak\",\"delayMS\":"); out.integer(delay.milliseconds)
            case .term(let reason): out.raw(",\"action\":\"term\",\"reason\":"); out.string(ClusterProtocol.clipped(reason))
            }
        }
        out.raw("}")
        return out.bytes
    }

    /// Reads a request as untrusted input.
    public static func parse(_ bytes: [UInt8]) -> Result<ClusterRequest, ClusterProtocolError> {
        do throws(ClusterProtocolError) {
            return .success(try read(try ClusterMessageFields(message: bytes)))
        } catch {
            return .failure(error)
        }
    }

    private static func read(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> ClusterRequest {
        switch try fields.string("type", limit: 32, printable: true) {
        case "configure":
            return .configure(try ClusterConfiguration.read(try fields.object("configuration")))
        case "publish":
            return .publish(ref: try ref(fields), delivery: try delivery(fields))
        case "serve":
            let handlers = try fields.objects("handlers", limit: ClusterProtocol.maximumHandlers) {
                (entry) throws(ClusterProtocolError) in
                ServedHandler(handler: try handler(entry),
                              ackWait: .milliseconds(try entry.integer("ackWaitMS", minimum: 1)))
            }
            guard Set(handlers.map(\.handler)).count == handlers.count else {
                throw ClusterProtocolError("\"handlers\" of serve names a handler twice")
            }
            return .serve(handlers: handlers)
        case "grant":
            return .grant(handler: try handler(fields),
                          count: Int(try fields.integer("count", minimum: 1, maximum: 1_000_000)))
        case "answer":
            let ref = try ref(fields)
            switch try fields.string("action", limit: 16, printable: true) {
            case "ack": return .answer(ref: ref, action: .ack)
            case "nak": return .answer(ref: ref, action: .nak(delay: .milliseconds(try fields.integer("delayMS"))))
            case "term":
                return .answer(ref: ref, action: .term(reason: try fields.string(
                    "reason", limit: ClusterProtocol.maximumReasonBytes)))
            case let other:
                throw ClusterProtocolError("\"action\" of answer is '\(other.abbreviated)', not ack, nak or term")
            }
        case let other:
            throw ClusterProtocolError("the request type '\(other.abbreviated)' is unknown")
        }
    }

    /// A `ref`: a whole number from 1.
    static func ref(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> UInt64 {
        UInt64(try fields.integer("ref", minimum: 1))
    }

    /// A `handler`: an identifier a subject can carry.
    static func handler(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> String {
        let handler = try fields.string("handler", limit: ClusterProtocol.handlerBytes, printable: true)
        guard IdentifierSyntax.isValid(handler), NATSNameSyntax.isSubject(handler) else {
            throw ClusterProtocolError("\"handler\" of \(fields.context) is not a handler identifier a subject can "
                                       + "carry")
        }
        return handler
    }

    /// A `delivery`: a delivery message, read as `ClusterDelivery.parse` reads one.
    static func delivery(_ fields: ClusterMessageFields) throws(ClusterProtocolError) -> ClusterDelivery {
        switch ClusterDelivery.parse(try fields.rawText("delivery")) {
        case .success(let delivery): return delivery
        case .failure(let error): throw ClusterProtocolError("\"delivery\" of \(fields.context) is refused: \(error)")
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded down; never negative.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
