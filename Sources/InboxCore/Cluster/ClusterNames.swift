/// The names the agents of one cluster share on NATS JetStream, all made from the cluster's name (docs/design.md,
/// Cluster: the NATS layer): the work-queue stream of delivery messages and its subject per handler, the durable pull
/// consumer per handler, the object store of arrivals' content and the key-value bucket of the agents' presence.
///
/// A cluster name is 1 to 32 letters, digits, `-` and `_`: what a stream, a bucket and a subject token all accept.
/// A handler identifier (`[A-Za-z0-9.-]`, as registrations have them) becomes subject tokens at its dots, so it
/// must have no empty part; as a consumer name its dots become `_`, which no identifier has, so that mapping is
/// one-to-one and `handlerIdentifier(consumer:)` reverses it.
public struct ClusterNames: Sendable, Hashable {
    /// The cluster's name, as given.
    public let cluster: String

    /// The longest cluster name accepted.
    public static let maximumClusterLength = 32
    /// The longest handler identifier accepted: a consumer name is a directory name in the server's file store.
    public static let maximumIdentifierLength = 200

    /// Names for the cluster `cluster`, or why that cannot be a cluster's name.
    public init(cluster: String) throws(ClusterNameError) {
        if let reason = Self.nameProblem(cluster, maximum: Self.maximumClusterLength) {
            throw ClusterNameError(kind: .cluster, name: cluster, reason: reason)
        }
        self.cluster = cluster
    }

    /// The work-queue stream that holds the delivery messages: `inboxd-<cluster>-deliveries`.
    public var deliveryStream: String { "inboxd-\(cluster)-deliveries" }

    /// The subjects of that stream: `inboxd.<cluster>.deliver.>`.
    public var deliverySubjects: String { "inboxd.\(cluster).deliver.>" }

    /// The object store bucket of the arrivals' content, `inboxd-<cluster>-content` (its stream is
    /// `OBJ_inboxd-<cluster>-content`, ObjectStoreLayout).
    public var contentBucket: String { "inboxd-\(cluster)-content" }

    /// The key-value bucket of the agents' presence entries, `inboxd-<cluster>-presence` (its stream
    /// `KV_inboxd-<cluster>-presence`).
    public var presenceBucket: String { "inboxd-\(cluster)-presence" }

    /// The subject of a delivery message for the handler `identifier`: `inboxd.<cluster>.deliver.<identifier>`, the
    /// identifier's dots kept as token separators (`com.example.notes` is three tokens).
    public func deliverySubject(handler identifier: String) throws(ClusterNameError) -> String {
        try Self.checkIdentifier(identifier)
        return "inboxd.\(cluster).deliver.\(identifier)"
    }

    /// The durable pull consumer every host's workers for `identifier` share: the identifier with `.` as `_`
    /// (`com_example_notes`), since a consumer name may hold no dot.
    public func consumerName(handler identifier: String) throws(ClusterNameError) -> String {
        try Self.checkIdentifier(identifier)
        return String(identifier.map { $0 == "." ? "_" : $0 })
    }

    /// The handler identifier a consumer of `consumerName(handler:)` serves; nil for a name that function never makes.
    public func handlerIdentifier(consumer: String) -> String? {
        let identifier = String(consumer.map { $0 == "_" ? "." : $0 })
        return (try? consumerName(handler: identifier)) == consumer ? identifier : nil
    }

    /// Whether `identifier` can name a handler in the cluster: nil when it can, else why not.
    public static func identifierProblem(_ identifier: String) -> String? {
        if identifier.isEmpty { return "is empty" }
        if identifier.utf8.count > maximumIdentifierLength { return "is longer than \(maximumIdentifierLength) bytes" }
        if !IdentifierSyntax.isValid(identifier) { return "has a character other than letters, digits, '.' and '-'" }
        if identifier.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "has an empty part between dots, which a subject cannot have"
        }
        return nil
    }

    /// Throws for an identifier `identifierProblem` finds fault with.
    private static func checkIdentifier(_ identifier: String) throws(ClusterNameError) {
        if let reason = identifierProblem(identifier) {
            throw ClusterNameError(kind: .handler, name: identifier, reason: reason)
        }
    }

    /// Whether `name` is 1 to `maximum` letters, digits, `-` and `_`: a JetStream stream, key-value and object store
    /// bucket name, and a subject token. Nil when it is, else why not.
    public static func nameProblem(_ name: String, maximum: Int) -> String? {
        if name.isEmpty { return "is empty" }
        if name.utf8.count > maximum { return "is longer than \(maximum) bytes" }
        let valid = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        return valid ? nil : "has a character other than letters, digits, '-' and '_'"
    }
}

/// A name the cluster cannot use, and why.
public struct ClusterNameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the name was to name.
    public enum Kind: String, Sendable, Equatable {
        /// A cluster's name (ClusterNames).
        case cluster = "cluster name"
        /// A handler identifier made a subject or a consumer name.
        case handler = "handler identifier"
        /// A key-value or object store bucket's name.
        case bucket = "bucket name"
    }

    /// What the name was to name.
    public let kind: Kind
    /// The name as given.
    public let name: String
    /// Why it cannot be used, as the end of a sentence (`is empty`).
    public let reason: String

    /// `cluster name "a.b" has a character other than letters, digits, '-' and '_'`.
    public var description: String { "\(kind.rawValue) \(JSON.quote(name)) \(reason)" }
}
