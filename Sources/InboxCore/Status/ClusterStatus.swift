/// What status.json says of the cluster this agent takes part in (`[Cluster]`): its name, this host's name and
/// roles, what waits on this host, and the cluster as its children last reported it (`ClusterState`: the connection,
/// every handler's deliveries, the hosts present).
public struct ClusterStatus: Sendable, Hashable {
    /// Name=.
    public var name: String
    /// This host's name in the cluster (Host=, or the system's).
    public var host: String
    /// What this host does: ingest (it has Inboxes=), work (Work=yes).
    public var roles: [ClusterRole]
    /// Files in the outbox, not yet acknowledged by the server.
    public var toPublish: Int
    /// Deliveries from the cluster this host holds (queued, running, waiting to be answered).
    public var fromCluster: Int
    /// The last state a child reported; nil before the first.
    public var state: ClusterState?

    /// Creates one.
    public init(name: String, host: String, roles: [ClusterRole], toPublish: Int = 0, fromCluster: Int = 0,
                state: ClusterState? = nil) {
        self.name = name
        self.host = host
        self.roles = roles
        self.toPublish = toPublish
        self.fromCluster = fromCluster
        self.state = state
    }

    /// How long a host may go without renewing its presence entry (every 5 s) before it is shown as no longer
    /// reporting.
    public static let silenceUSec: Int64 = 15_000_000

    /// The hosts whose last word is older than `silenceUSec` at `now`.
    public func silentHosts(now: Int64) -> [HostPresence] {
        (state?.hosts ?? []).filter { now - $0.lastSeenUSec > Self.silenceUSec }
    }

    /// The hosts that work for `handler` and still report.
    public func hosts(serving handler: String, now: Int64) -> [String] {
        (state?.hosts ?? []).filter { $0.roles.contains(.work) && $0.handlers.contains(handler)
            && now - $0.lastSeenUSec <= Self.silenceUSec }.map(\.host).sorted()
    }

    /// The status file's member.
    public var json: String {
        var out = JSONBytes(capacity: 512)
        out.raw("{\"name\":"); out.string(name)
        out.raw(",\"host\":"); out.string(host)
        out.raw(",\"roles\":"); out.strings(roles.map(\.rawValue))
        out.raw(",\"toPublish\":"); out.integer(toPublish)
        out.raw(",\"fromCluster\":"); out.integer(fromCluster)
        out.raw(",\"state\":")
        if let state { state.write(to: &out) } else { out.raw("null") }
        out.raw("}")
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// Reads the member back; nil when it is absent or not one (an agent without a cluster).
    public static func parse(_ value: JSONValue?) -> ClusterStatus? {
        guard let value, let name = value["name"]?.string, let host = value["host"]?.string else { return nil }
        var status = ClusterStatus(name: name, host: host,
                                   roles: (value["roles"]?.array ?? []).compactMap { $0.string.flatMap(ClusterRole.init) },
                                   toPublish: value["toPublish"]?.int ?? 0, fromCluster: value["fromCluster"]?.int ?? 0)
        if let state = value["state"], state != .null {
            status.state = try? ClusterState.read(ClusterMessageFields(state, context: "cluster.state"))
        }
        return status
    }
}
