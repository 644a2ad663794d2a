import InboxCluster
import InboxCore
import InboxSystem

/// One connection to the cluster and what the child made or bound to on it: the work-queue stream, the object store
/// and the key-value bucket. libnats reconnects the connection by itself once it was made.
final class ClusterSession {
    let connection: NatsConnection
    let jetStream: JetStream
    let store: ObjectStore?
    let bucket: KeyValueBucket?
    /// What could not be made or bound to, as a sentence; nil when all was.
    let problem: String?

    /// Connects and ensures the stream, the object store and the bucket. A worker without the right to create them
    /// binds to what exists.
    init(_ configuration: ClusterConfiguration, names: ClusterNames) throws(NatsError) {
        var credentials: NatsCredentials?
        if let file = configuration.credentials { credentials = .credentialsFile(file) }
        // A bare seed: its public key, which libnats needs as well, derived from it.
        if let seedFile = configuration.nkeySeedFile, credentials == nil {
            credentials = try NatsCredentials.nkey(seedFile: seedFile)
        }
        var tls: NatsTLS?
        if configuration.tlsCAFile != nil || configuration.tlsCertFile != nil {
            tls = NatsTLS(caFile: configuration.tlsCAFile, certificateFile: configuration.tlsCertFile,
                          keyFile: configuration.tlsKeyFile)
        }
        connection = try NatsConnection.connect(NatsSettings(
            servers: configuration.servers, name: "inboxd \(configuration.role.rawValue) \(configuration.host)",
            connectTimeout: .seconds(2), requestTimeout: .seconds(5), credentials: credentials, tls: tls,
            maximumReconnects: -1, reconnectWait: .seconds(2)))
        jetStream = try connection.jetStream()
        var problems: [String] = []
        do {
            try jetStream.ensureStream(.workQueue(name: names.stream, subjects: [names.streamSubjects],
                                                  duplicateWindow: .seconds(120),
                                                  replicas: configuration.replicas))
        } catch {
            // A worker may not create streams: it is enough that the stream is there.
            if (try? jetStream.stream(names.stream)) == nil { problems.append("\(error)") }
        }
        do { store = try ObjectStore.ensure(jetStream, bucket: names.objectStore,
                                                   replicas: configuration.replicas) } catch {
            store = nil
            problems.append("\(error)")
        }
        var bucket: KeyValueBucket?
        do { bucket = try KeyValueBucket.ensure(jetStream, bucket: names.keyValue, maxAge: .seconds(86_400),
                                             replicas: configuration.replicas) } catch {
            bucket = try? KeyValueBucket.bind(jetStream, bucket: names.keyValue)
            if bucket == nil { problems.append("\(error)") }
        }
        self.bucket = bucket
        if problems.contains(where: { $0.contains("No responders available") }) {
            // Nobody answers the JetStream API: the server runs without JetStream (Debian's nats-server.service as
            // installed, for one).
            problems = ["\(connection.connectedURL ?? "the server") has no JetStream: enable it (nats-server -js, or "
                        + "jetstream { store_dir: ... } in its configuration)"]
        }
        problem = problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// Whether a server is connected now (not while libnats reconnects).
    var isConnected: Bool { connection.connectedURL != nil }
}
