/// The `[Cluster]` section of inboxd.conf: how this host takes part in a cluster of hosts that share one Inbox
/// through NATS JetStream (docs/design.md, Cluster: the core parts). An ingest host publishes what its `inboxes`
/// receive; a host that works (`work`) pulls deliveries for its handlers.
///
/// Read from inboxd.conf by `ConfigurationParser.parseAgent` (one section at most).
public struct ClusterSettings: Sendable, Hashable {
    /// One NATS server to connect to, from `Servers=`.
    public struct Server: Sendable, Hashable, CustomStringConvertible {
        /// How the connection is made: `nats://` in clear unless TLS is configured, `tls://` always with TLS.
        public enum Scheme: String, Sendable, Hashable {
            /// `nats://`: TLS only where TLSCAFile= asks for it or the server requires it.
            case nats
            /// `tls://`: always TLS.
            case tls
        }

        /// The URL's scheme.
        public var scheme: Scheme
        /// A host name, an IPv4 address, or an IPv6 address without its brackets.
        public var host: String
        /// The port, `ClusterSettings.defaultPort` when the URL gives none.
        public var port: Int
        /// The `Servers=` line that names it.
        public var location: SourceLocation

        /// Creates a server.
        public init(scheme: Scheme, host: String, port: Int = ClusterSettings.defaultPort, location: SourceLocation) {
            self.scheme = scheme
            self.host = host
            self.port = port
            self.location = location
        }

        /// `scheme://host:port`, an IPv6 address in brackets: the URL a client is given.
        public var description: String {
            "\(scheme.rawValue)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        }

        /// True for this host's loopback: `localhost`, an address in 127.0.0.0/8, `::1` (or 127.0.0.0/8 mapped into
        /// IPv6). Only there may `nats://` go in clear without `Insecure=yes`.
        public var isLoopback: Bool { ServerURL.isLoopback(host) }
    }

    /// The port of a URL that gives none: NATS's client port.
    public static let defaultPort = 4222

    /// Servers=: the servers to connect to, in the order given.
    public var servers: [Server]
    /// Name=: the cluster's name, and the names of its stream, subjects, consumers and buckets.
    public var names: ClusterNames
    /// Credentials=: the `.creds` file (a user's JWT and NKey seed) to authenticate with; nil for none.
    public var credentials: String?
    /// NKeySeedFile=: a file holding a bare NKey seed to authenticate with; excludes `credentials`.
    public var nkeySeedFile: String?
    /// TLSCAFile=: the certificate authorities the servers' certificates are checked against; setting it asks for
    /// TLS on every connection.
    public var tlsCAFile: String?
    /// TLSCertFile=, TLSKeyFile=: this host's client certificate and its key, both or neither. They are presented
    /// where TLS is used; alone they do not ask for it.
    public var tlsCertFile: String?
    /// The key of `tlsCertFile`.
    public var tlsKeyFile: String?
    /// Inboxes=: the drop Inboxes of this host whose arrivals are published to the cluster, normalized
    /// (`ConfigurationParser.normalized`); empty for a host that only works.
    public var inboxes: [String]
    /// Where each of `inboxes` is named: its Inboxes= line.
    public var inboxLocations: [String: SourceLocation]
    /// Work=: this host pulls and delivers deliveries for its handlers (default yes).
    public var work: Bool
    /// Insecure=: `nats://` may go in clear to a server that is not this host (default no).
    public var insecure: Bool
    /// AckWaitSec=: how long the server waits for a worker's answer to a delivery before it gives the delivery to
    /// another worker (the consumers' AckWait). A worker renews it while the handler runs, so it bounds how long a
    /// host that died holds its deliveries, not how long a handler may take.
    public var ackWait: Duration
    /// Host=: this host's name in the cluster (its presence entry, `INBOX_SOURCE_HOST` of what it publishes); nil:
    /// the system's host name. Two agents on one machine each need one of their own.
    public var host: String?
    /// Replicas=: how many servers keep each of the cluster's streams, 1 to `maximumReplicas`.
    public var replicas: Int
    /// The most replicas a JetStream stream has.
    public static let maximumReplicas = 5
    /// The default AckWaitSec=.
    public static let defaultAckWait: Duration = .seconds(30)
    /// Where the section starts.
    public var location: SourceLocation

    /// Creates settings; the optional ones default to what an unset key means.
    public init(servers: [Server], names: ClusterNames, credentials: String? = nil, nkeySeedFile: String? = nil,
                tlsCAFile: String? = nil, tlsCertFile: String? = nil, tlsKeyFile: String? = nil, inboxes: [String] = [],
                inboxLocations: [String: SourceLocation] = [:], work: Bool = true, insecure: Bool = false,
                ackWait: Duration = ClusterSettings.defaultAckWait, host: String? = nil, replicas: Int = 1,
                location: SourceLocation) {
        self.servers = servers
        self.names = names
        self.credentials = credentials
        self.nkeySeedFile = nkeySeedFile
        self.tlsCAFile = tlsCAFile
        self.tlsCertFile = tlsCertFile
        self.tlsKeyFile = tlsKeyFile
        self.inboxes = inboxes
        self.inboxLocations = inboxLocations
        self.work = work
        self.insecure = insecure
        self.ackWait = ackWait
        self.host = host
        self.replicas = replicas
        self.location = location
    }

    /// True when the connections use TLS: a `tls://` server or TLSCAFile=.
    public var usesTLS: Bool { tlsCAFile != nil || servers.contains { $0.scheme == .tls } }

    /// An error at its Inboxes= line for each of `inboxes` that is not among `configured`, this host's drop Inboxes
    /// (`[Agent] Inbox=` and `[Inbox] Path=`), with the nearest one suggested.
    public func unconfiguredInboxes(configured: [String]) -> [Diagnostic] {
        let known = configured.map(ConfigurationParser.normalized)
        let set = Set(known)
        return inboxes.filter { !set.contains($0) }.map { path in
            let close = Spelling.closest(to: path, among: known.sorted())
            return Diagnostic(.error, at: inboxLocations[path] ?? location,
                              "Inboxes= names \(path), which is not a drop Inbox of this host (Inbox= or an [Inbox] "
                              + "section's Path=)" + (close.map { "; did you mean '\($0)'?" } ?? ""))
        }
    }
}

extension ClusterSettings {
    /// Every key `read` knows; keep in step with its switch.
    static let keys: Set<String> = ["Servers", "Name", "Credentials", "NKeySeedFile", "TLSCAFile", "TLSCertFile",
                                    "TLSKeyFile", "Inboxes", "Work", "Insecure", "AckWaitSec", "Host", "Replicas"]

    /// Reads one `[Cluster]` section. The list keys (Servers=, Inboxes=) add their space-separated words (quoted as
    /// in Exec=), an empty value clearing the list; for the others the last wins and an empty value means unset.
    /// nil, with the reasons in `sink`, when the section has an error.
    static func read(_ section: INISection, sink: inout DiagnosticSink) -> ClusterSettings? {
        let errorsBefore = sink.diagnostics.filter(\.isError).count
        var servers: [Server] = []
        var serversGiven = false
        var name: (value: String, line: Int)?
        var nameGiven = false
        var files: [String: (value: String, line: Int)] = [:]
        var inboxes: [String] = []
        var inboxLocations: [String: SourceLocation] = [:]
        var work = true
        var insecure = false
        var ackWait = defaultAckWait
        var host: String?
        var replicas = 1
        for entry in section.entries {
            switch entry.key {
            case "Servers":
                serversGiven = !entry.value.isEmpty
                guard serversGiven else {
                    servers.removeAll()
                    continue
                }
                for word in words(entry, sink: &sink) {
                    switch ServerURL.parse(word) {
                    case .success(let parsed):
                        let server = Server(scheme: parsed.scheme, host: parsed.host, port: parsed.port,
                                            location: sink.location(entry.line))
                        if !servers.contains(where: { $0.description == server.description }) { servers.append(server) }
                    case .failure(let problem):
                        sink.error(entry.line, "invalid Servers=: \(problem.message)")
                    }
                }
            case "Name":
                nameGiven = !entry.value.isEmpty
                if entry.value.isEmpty {
                    name = nil
                } else if ClusterNames.isValidName(entry.value) {
                    name = (entry.value, entry.line)
                } else {
                    sink.error(entry.line, "invalid Name= '\(entry.value.abbreviated)': a cluster's name has 1 to "
                               + "\(ClusterNames.maximumNameLength) letters, digits, '-' and '_'")
                }
            case "Credentials", "NKeySeedFile", "TLSCAFile", "TLSCertFile", "TLSKeyFile":
                if entry.value.isEmpty {
                    files[entry.key] = nil
                } else if let path = ConfigurationParser.absolutePath(entry, sink: &sink) {
                    if entry.key == "Credentials" && !path.hasSuffix(".creds") {
                        sink.error(entry.line, "Credentials= names a .creds file (a user's JWT and NKey seed), got "
                                   + "'\(path.abbreviated)'; a bare NKey seed is NKeySeedFile=")
                    } else {
                        files[entry.key] = (path, entry.line)
                    }
                }
            case "Inboxes":
                guard !entry.value.isEmpty else {
                    inboxes.removeAll()
                    inboxLocations.removeAll()
                    continue
                }
                for word in words(entry, sink: &sink) {
                    guard word.hasPrefix("/") else {
                        sink.error(entry.line, "Inboxes= must name absolute paths, got '\(word.abbreviated)'")
                        continue
                    }
                    let path = ConfigurationParser.normalized(word)
                    if inboxLocations[path] == nil { inboxes.append(path) }
                    inboxLocations[path] = sink.location(entry.line)
                }
            case "Work", "Insecure":
                let flag: Bool
                if entry.value.isEmpty {
                    flag = entry.key == "Work"
                } else if let parsed = BooleanSyntax.parse(entry.value) {
                    flag = parsed
                } else {
                    sink.error(entry.line, "invalid \(entry.key)= '\(entry.value.abbreviated)': expected yes or no")
                    continue
                }
                if entry.key == "Work" { work = flag } else { insecure = flag }
            case "Host":
                if entry.value.isEmpty {
                    host = nil
                } else if Self.isHostName(entry.value) {
                    host = entry.value
                } else {
                    sink.error(entry.line, "invalid Host= '\(entry.value.abbreviated)': 1 to "
                               + "\(ClusterDelivery.maximumSourceHostBytes) letters, digits, '.', '-' and '_'")
                }
            case "Replicas":
                if entry.value.isEmpty {
                    replicas = 1
                } else if let count = Int(entry.value), (1...maximumReplicas).contains(count) {
                    replicas = count
                } else {
                    sink.error(entry.line, "invalid Replicas= '\(entry.value.abbreviated)': expected a number from 1 to "
                               + "\(maximumReplicas)")
                }
            case "AckWaitSec":
                guard !entry.value.isEmpty else {
                    ackWait = defaultAckWait
                    continue
                }
                if let span = try? TimeSpan.parse(entry.value), span >= .seconds(1), span <= .seconds(3600) {
                    ackWait = span
                } else {
                    sink.error(entry.line, "invalid AckWaitSec= '\(entry.value.abbreviated)': expected a time span "
                               + "from 1s to 1h")
                }
            default:
                sink.unknownKey(entry, in: "Cluster", known: keys)
            }
        }
        if let credentials = files["Credentials"], let seed = files["NKeySeedFile"] {
            let (later, earlier) = credentials.line > seed.line ? (credentials, seed) : (seed, credentials)
            sink.error(later.line, "Credentials= and NKeySeedFile= exclude each other (the other is at line "
                       + "\(earlier.line)): a .creds file carries its own NKey seed")
        }
        for (present, missing) in [("TLSCertFile", "TLSKeyFile"), ("TLSKeyFile", "TLSCertFile")] {
            if let given = files[present], files[missing] == nil {
                sink.error(given.line, "\(present)= without \(missing)=: a client certificate is presented with its "
                           + "key")
            }
        }
        if !serversGiven {
            sink.error(section.line, "[Cluster] without Servers=: name the NATS servers, as nats://HOST[:PORT] or "
                       + "tls://HOST[:PORT]")
        }
        if !nameGiven {
            sink.error(section.line, "[Cluster] without Name=: the cluster's name names its stream, subjects and "
                       + "buckets")
        }
        let usesTLS = files["TLSCAFile"] != nil || servers.contains { $0.scheme == .tls }
        if !insecure && !usesTLS {
            for server in servers where !server.isLoopback {
                sink.error(server.location.line, "\(server) is not this host and nothing encrypts the connection: "
                           + "use tls://, set TLSCAFile=, or set Insecure=yes to send in clear")
            }
        }
        if !work && inboxes.isEmpty {
            sink.warning(section.line, "Work=no and no Inboxes=: this host neither feeds the cluster nor works for it")
        }
        guard sink.diagnostics.filter(\.isError).count == errorsBefore, let name,
              let names = ClusterNames(name: name.value) else { return nil }
        return ClusterSettings(servers: servers, names: names, credentials: files["Credentials"]?.value,
                               nkeySeedFile: files["NKeySeedFile"]?.value, tlsCAFile: files["TLSCAFile"]?.value,
                               tlsCertFile: files["TLSCertFile"]?.value, tlsKeyFile: files["TLSKeyFile"]?.value,
                               inboxes: inboxes, inboxLocations: inboxLocations, work: work, insecure: insecure,
                               ackWait: ackWait, host: host, replicas: replicas,
                               location: sink.location(section.line))
    }

    /// A name Host= takes: what a host name is made of, within the delivery message's bound for it.
    static func isHostName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= ClusterDelivery.maximumSourceHostBytes && text.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E
                || $0 == 0x2D || $0 == 0x5F
        }
    }

    /// `read`, with diagnostics of its own in line order: for a section lexed from the file at `path`.
    static func parse(_ section: INISection, path: String) -> (settings: ClusterSettings?, diagnostics: [Diagnostic]) {
        var sink = DiagnosticSink(path: path)
        let settings = read(section, sink: &sink)
        return (settings, sink.sorted)
    }

    /// The words of a list value, split as Exec= is; an error at the line when the quoting is broken.
    private static func words(_ entry: INIEntry, sink: inout DiagnosticSink) -> [String] {
        do {
            return try WordSplitter.split(entry.value)
        } catch {
            sink.error(entry.line, "invalid \(entry.key)=: \(error.message)")
            return []
        }
    }
}
