import CNats
import InboxSystem

/// How to reach a NATS cluster: the servers' URLs, the name the connection shows on the servers, the time a connect
/// and a request may take, and the credentials and TLS files to use.
public struct NatsSettings: Sendable {
    /// `nats://host:port` or `tls://host:port` URLs, tried in the order given; a `tls://` URL (or any TLS setting)
    /// makes the connection TLS.
    public var servers: [String]
    /// The connection's name, as the servers list it (`inboxd on host-a`).
    public var name: String
    /// How long one connect attempt to one server may take.
    public var connectTimeout: Duration
    /// How long a request (a JetStream API call, a publish's acknowledgement, a key-value read) may wait for its answer.
    public var requestTimeout: Duration
    /// Who the connection says it is; nil for a server that asks for nothing.
    public var credentials: NatsCredentials?
    /// The TLS files; nil for the system's defaults (`tls://` URLs still use TLS).
    public var tls: NatsTLS?
    /// Reconnect attempts after a connection once made is lost (libnats's default, 60); each waits `reconnectWait`.
    public var maximumReconnects: Int
    /// The pause between reconnect attempts to one server.
    public var reconnectWait: Duration

    /// Settings with libnats's defaults for what is not given: a 2 s connect, 5 s requests, 60 reconnects 2 s apart.
    public init(servers: [String], name: String, connectTimeout: Duration = .seconds(2),
                requestTimeout: Duration = .seconds(5), credentials: NatsCredentials? = nil, tls: NatsTLS? = nil,
                maximumReconnects: Int = 60, reconnectWait: Duration = .seconds(2)) {
        self.servers = servers
        self.name = name
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.credentials = credentials
        self.tls = tls
        self.maximumReconnects = maximumReconnects
        self.reconnectWait = reconnectWait
    }

    /// Why these settings cannot connect before anything is tried: no server, or a URL that is neither `nats://`
    /// nor `tls://`. Nil when they can be tried.
    public var problem: String? {
        if servers.isEmpty { return "no server URL is given" }
        for url in servers where !(url.hasPrefix("nats://") || url.hasPrefix("tls://")) || url.contains(",") {
            return "\(url) is not a nats:// or tls:// URL"
        }
        return nil
    }

    /// Whether the connection must be TLS: a `tls://` URL or TLS files.
    public var usesTLS: Bool { tls != nil || servers.contains { $0.hasPrefix("tls://") } }
}

/// Who a connection says it is.
public enum NatsCredentials: Sendable {
    /// A user and password (a server's `authorization { user, password }` or `--user`/`--pass`).
    case userPassword(user: String, password: String)
    /// A token (`authorization { token }`).
    case token(String)
    /// A `.creds` file as `nsc` writes it: the user's JWT and NKey seed (decentralised JWT authentication).
    case credentialsFile(String)
    /// An NKey: the user's public key (`U…`) and the file holding its seed (`SU…`), which signs the server's nonce.
    /// libnats needs both: it cannot derive the public key from the seed; `nkey(seedFile:)` derives it.
    case nkey(publicKey: String, seedFile: String)
}

/// The files of a TLS connection.
public struct NatsTLS: Sendable {
    /// PEM certificates of the authorities the server's certificate must chain to; nil for the system's (OpenSSL's
    /// default paths, /etc/ssl/certs).
    public var caFile: String?
    /// The client's certificate chain and key (PEM), for servers that verify clients; both or neither.
    public var certificateFile: String?
    /// The client's private key (PEM).
    public var keyFile: String?
    /// The name the server's certificate must carry (a DNS or IP subject alternative name); nil for the host of the
    /// URL being connected to.
    public var serverName: String?

    /// TLS files; any left nil is not used.
    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, serverName: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.serverName = serverName
    }
}

/// One connection to a NATS cluster through libnats, made with `connect` and closed with `close` (or when it goes).
///
/// Synchronous and for one thread: every call blocks until it is answered or its timeout passes. libnats runs
/// threads of its own behind it (reading the socket, reconnecting), which is why the agent keeps it in a child
/// process of its own (docs/design.md, Cluster: the NATS layer).
public final class NatsConnection {
    /// libnats's connection.
    let handle: OpaquePointer
    /// What it was made with.
    public let settings: NatsSettings

    /// Wraps a connection libnats made with `settings`.
    private init(handle: OpaquePointer, settings: NatsSettings) {
        self.handle = handle
        self.settings = settings
    }

    /// Closes the connection if it is open and frees it.
    deinit { sys_natsConnection_Destroy(handle) }

    /// Connects to the first server of `settings.servers` that answers and accepts the credentials. A server that
    /// refuses them, a TLS failure or no server at all is an error with libnats's and the server's words.
    public static func connect(_ settings: NatsSettings) throws(NatsError) -> NatsConnection {
        let what = "connect to \(settings.servers.joined(separator: ", "))"
        if let problem = settings.problem {
            throw NatsError(operation: what, status: NATS_INVALID_ARG, detail: problem)
        }
        var created: OpaquePointer?
        var status = sys_natsOptions_Create(&created)
        guard status == NATS_OK, let options = created else { throw NatsError.last("create connection options", status) }
        defer { sys_natsOptions_Destroy(options) }
        try configure(options, settings, what)
        var connection: OpaquePointer?
        status = sys_natsConnection_Connect(&connection, options)
        guard status == NATS_OK, let connection else { throw NatsError.last(what, status) }
        return NatsConnection(handle: connection, settings: settings)
    }

    /// Puts `settings` into libnats's options, each refusal an error naming the setting.
    private static func configure(_ options: OpaquePointer, _ settings: NatsSettings, _ what: String) throws(NatsError) {
        func check(_ status: natsStatus, _ setting: String) throws(NatsError) {
            if status != NATS_OK { throw NatsError.last("\(what): \(setting)", status) }
        }
        let pool = CStringPool()
        try check(sys_natsOptions_SetServers(options, pool.array(settings.servers), settings.servers.count), "servers")
        try check(sys_natsOptions_SetNoRandomize(options, true), "server order")
        try check(sys_natsOptions_SetName(options, settings.name), "name")
        try check(sys_natsOptions_SetTimeout(options, settings.connectTimeout.natsMilliseconds), "connect timeout")
        try check(sys_natsOptions_SetMaxReconnect(options, CInt(clamping: settings.maximumReconnects)), "reconnects")
        try check(sys_natsOptions_SetReconnectWait(options, settings.reconnectWait.natsMilliseconds), "reconnect wait")
        switch settings.credentials {
        case nil: break
        case .userPassword(let user, let password):
            try check(sys_natsOptions_SetUserInfo(options, user, password), "user and password")
        case .token(let token):
            try check(sys_natsOptions_SetToken(options, token), "token")
        case .credentialsFile(let path):
            try check(sys_natsOptions_SetUserCredentialsFromFiles(options, path, nil), "credentials file \(path)")
        case .nkey(let publicKey, let seedFile):
            try check(sys_natsOptions_SetNKeyFromSeed(options, publicKey, seedFile), "NKey seed file \(seedFile)")
        }
        if settings.usesTLS {
            try check(sys_natsOptions_SetSecure(options, true), "TLS")
        }
        if let tls = settings.tls {
            if let ca = tls.caFile {
                try check(sys_natsOptions_LoadCATrustedCertificates(options, ca), "TLS CA file \(ca)")
            }
            switch (tls.certificateFile, tls.keyFile) {
            case (let certificate?, let key?):
                try check(sys_natsOptions_LoadCertificatesChain(options, certificate, key), "TLS certificate \(certificate)")
            case (nil, nil): break
            default:
                throw NatsError(operation: what, status: NATS_INVALID_ARG,
                                detail: "a TLS client certificate needs both its certificate and its key file")
            }
            if let name = tls.serverName {
                try check(sys_natsOptions_SetExpectedHostname(options, name), "TLS server name")
            }
        }
    }

    /// The URL of the server the connection is on; nil while it is reconnecting.
    public var connectedURL: String? { sys_natsConnection_GetConnectedUrl(handle) }

    /// Whether the connection is closed: by `close`, or because every reconnect failed.
    public var isClosed: Bool { sys_natsConnection_Status(handle) == NATS_CONN_STATUS_CLOSED }

    /// Sends what is buffered and waits until the server has seen it (a PING answered), up to `timeout`.
    public func flush(timeout: Duration) throws(NatsError) {
        let status = sys_natsConnection_FlushTimeout(handle, timeout.natsMilliseconds)
        if status != NATS_OK { throw NatsError.last("flush", status) }
    }

    /// Closes the connection: libnats's threads for it end, and every later call fails as `.connectionClosed`.
    public func close() { sys_natsConnection_Close(handle) }

    /// Publishes `payload` on `subject` in plain NATS (no stream acknowledges it; whoever listens then hears it) and
    /// flushes, so that the server has it when this returns.
    public func publish(_ subject: String, payload: [UInt8]) throws(NatsError) {
        let status = payload.withUnsafeBytes { sys_natsConnection_Publish(handle, subject, $0) }
        if status != NATS_OK { throw NatsError.last("publish to \(subject)", status) }
        do { try flush(timeout: settings.requestTimeout) } catch { throw error.named("publish to \(subject)") }
    }

    /// A subscription to `subject` in plain NATS, read with `NatsSubscription.next(timeout:)`.
    public func subscribe(_ subject: String) throws(NatsError) -> NatsSubscription {
        var created: OpaquePointer?
        let status = sys_natsConnection_SubscribeSync(&created, handle, subject)
        guard status == NATS_OK, let created else { throw NatsError.last("subscribe to \(subject)", status) }
        do { try flush(timeout: settings.requestTimeout) } catch { throw error.named("subscribe to \(subject)") }
        return NatsSubscription(connection: self, handle: created)
    }

    /// The JetStream context of this connection, whose requests wait up to `settings.requestTimeout`.
    public func jetStream() throws(NatsError) -> JetStream { try JetStream(connection: self) }

    /// The version of libnats in use (`3.4.1`).
    public static var libraryVersion: String { sys_nats_GetVersion() }
}

/// A plain NATS subscription, read one message at a time.
public final class NatsSubscription {
    /// The connection, kept open while it lives.
    public let connection: NatsConnection
    private let handle: OpaquePointer

    init(connection: NatsConnection, handle: OpaquePointer) {
        self.connection = connection
        self.handle = handle
    }

    deinit { sys_natsSubscription_Destroy(handle) }

    /// The next message's payload; nil when none came within `timeout`.
    public func next(timeout: Duration) throws(NatsError) -> [UInt8]? {
        var message: OpaquePointer?
        let status = sys_natsSubscription_NextMsg(&message, handle, timeout.natsMilliseconds)
        if status == NATS_TIMEOUT { return nil }
        guard status == NATS_OK, let message else { throw NatsError.last("read a subscription", status) }
        defer { sys_natsMsg_Destroy(message) }
        return sys_natsMsg_GetData(message)
    }
}
