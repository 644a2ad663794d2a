/// The names a cluster's NATS resources take, all made from its name (`[Cluster] Name=`) and, per handler, the
/// handler's identifier (docs/design.md, Cluster: the core parts). Every name made here stays within what the NATS
/// server and its clients accept; `problem(forHandler:)` says why an identifier cannot be named.
///
/// The cluster's name is case-insensitive: subjects, consumers and buckets use it in lower case, the stream in upper
/// case, so that `Office` and `office` are one cluster everywhere rather than two that share a stream.
public struct ClusterNames: Sendable, Hashable {
    /// The longest cluster name, in characters (all ASCII).
    public static let maximumNameLength = 32
    /// The longest stream or consumer name the NATS server takes (`JSMaxNameLen`); also the longest file name, and
    /// the server makes a directory of each.
    public static let maximumAssetNameLength = 255

    /// The cluster's name in lower case.
    public let name: String

    /// The names of the cluster called `name`; nil when `name` is not a cluster name (`isValidName`).
    public init?(name: String) {
        guard Self.isValidName(name) else { return nil }
        self.name = name.lowercased()
    }

    /// True for a cluster name: 1 to `maximumNameLength` ASCII letters, digits, '-' and '_'.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumNameLength && name.utf8.allSatisfy { byte in
            isLetterOrDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// `INBOXD_<NAME>`: the stream that keeps the cluster's delivery messages.
    public var stream: String { "INBOXD_" + name.uppercased() }

    /// `inboxd.<name>.deliver.>`: every delivery subject of the cluster, the subjects its stream takes.
    public var streamSubjects: String { subjectPrefix + ">" }

    /// `inboxd.<name>.deliver.<identifier>`: where deliveries for the handler are published; the identifier's dots
    /// are subject token separators. nil when the identifier cannot be named (`problem(forHandler:)`).
    public func deliverySubject(for handler: String) -> String? {
        problem(forHandler: handler) == nil ? subjectPrefix + handler : nil
    }

    /// The handler a delivery subject of this cluster is for; nil for any other subject.
    public func handler(forSubject subject: String) -> String? {
        guard subject.hasPrefix(subjectPrefix) else { return nil }
        let handler = String(subject.dropFirst(subjectPrefix.count))
        return problem(forHandler: handler) == nil ? handler : nil
    }

    /// `<name>_<identifier with '.' as '_'>`: the durable consumer that pulls the handler's deliveries. Identifiers
    /// have no '_', so within the cluster's stream each handler has one consumer and each consumer one handler
    /// (`handler(forConsumer:)`). nil when the identifier cannot be named.
    public func consumer(for handler: String) -> String? {
        guard problem(forHandler: handler) == nil else { return nil }
        return consumerPrefix + handler.replacing(".", with: "_")
    }

    /// The handler a consumer of this cluster pulls for: the inverse of `consumer(for:)`; nil for any other name.
    public func handler(forConsumer consumer: String) -> String? {
        let rest = consumer.dropFirst(consumerPrefix.count)
        guard consumer.hasPrefix(consumerPrefix), !rest.contains(".") else { return nil }
        let handler = String(rest).replacing("_", with: ".")
        return problem(forHandler: handler) == nil ? handler : nil
    }

    /// `inboxd.<name>.event.<kind>`: where hosts publish events of the cluster (plain NATS, no stream keeps them),
    /// such as `failed` for a delivery a worker ended for good. nil when `kind` is not a subject token.
    public func eventSubject(_ kind: String) -> String? {
        NATSNameSyntax.isSubject(kind) && !kind.contains(".") ? "inboxd." + name + ".event." + kind : nil
    }

    /// `inboxd_<name>_content`: the object store bucket that holds the content of the cluster's deliveries (its
    /// stream is `OBJ_inboxd_<name>_content`).
    public var objectStore: String { "inboxd_" + name + "_content" }

    /// `inboxd_<name>_state`: the key-value bucket of the cluster's shared records (its stream is
    /// `KV_inboxd_<name>_state`).
    public var keyValue: String { "inboxd_" + name + "_state" }

    /// Why a handler identifier cannot be named in this cluster, as a phrase about it; nil when it can. It must be an
    /// identifier (letters, digits, '.' and '-'), its dots must separate non-empty subject tokens, and its consumer
    /// name must fit `maximumAssetNameLength`.
    public func problem(forHandler handler: String) -> String? {
        guard IdentifierSyntax.isValid(handler) else {
            return "'\(handler.abbreviated)' is not a handler identifier (letters, digits, '.' and '-')"
        }
        guard !handler.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            return "'\(handler.abbreviated)' has an empty part between its dots, which a NATS subject cannot carry"
        }
        let length = consumerPrefix.utf8.count + handler.utf8.count
        guard length <= Self.maximumAssetNameLength else {
            return "'\(handler.abbreviated)' makes a consumer name of \(length) characters, over NATS's limit of "
                + "\(Self.maximumAssetNameLength)"
        }
        return nil
    }

    /// What every delivery subject of the cluster starts with.
    private var subjectPrefix: String { "inboxd." + name + ".deliver." }
    /// What every consumer name of the cluster starts with.
    private var consumerPrefix: String { name + "_" }

    /// True for an ASCII letter or digit.
    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}

extension ClusterNames {
    /// Why `name` cannot name a bucket or stream of the cluster's (nil when it can): empty, longer than `maximum`
    /// bytes, or a character other than letters, digits, '-' and '_'.
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

/// What the NATS server and its clients accept as names, for checking the names `ClusterNames` makes.
public enum NATSNameSyntax {
    /// A subject to publish on: non-empty tokens separated by '.', each of printable ASCII without a space or the
    /// wildcards '*' and '>'. (The server bounds a subject only through the protocol line it travels in,
    /// `max_control_line`, 4096 bytes by default.)
    public static func isSubject(_ text: String) -> Bool {
        !text.isEmpty && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { token in
            !token.isEmpty && token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x2A && $0 != 0x3E }
        }
    }

    /// A stream or consumer name: 1 to `ClusterNames.maximumAssetNameLength` bytes of printable ASCII without a
    /// space, '.', '*', '>', '/' or '\' (a name is a subject token and a directory).
    public static func isAssetName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= ClusterNames.maximumAssetNameLength && text.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && !".*>/\\".utf8.contains(byte)
        }
    }

    /// An object store or key-value bucket: letters, digits, '-' and '_', short enough that its stream
    /// (`OBJ_<bucket>`, `KV_<bucket>`) is a stream name.
    public static func isBucketName(_ text: String) -> Bool {
        !text.isEmpty && isAssetName("OBJ_" + text) && text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }
}
