import InboxCore

/// The agent's state directory, where the files themselves are the queue (docs/design.md, Directories):
/// `containers/<handler>/{Inbox,Documents,tmp}` hold what is being delivered, `failed/` what was given up on or
/// refused, `unhandled/` what waits for a handler, and `intake/` (0700) is where every file passes on its way into
/// them, so that the inode that was checked is the one delivered (`Directory.relocate`). The agent creates them;
/// `inboxctl retry` and `discard` open what exists.
public final class StateDirectories {
    public static let containersName = "containers"
    public static let failedName = "failed"
    public static let unhandledName = "unhandled"
    public static let intakeName = "intake"
    public static let pendingName = "pending"
    /// A cluster's: what waits to be published (an ingest host), and where fetched content is written (a worker).
    public static let outboxName = "outbox"
    public static let clusterSpoolName = "cluster"

    public let root: Directory
    /// nil only when opened by inboxctl and the agent never made it.
    public let containers: Directory?
    public let failed: Directory?
    public let unhandled: Directory?
    /// Only the agent can write here: a file renamed in is out of its sender's reach.
    public let intake: Directory?
    /// What waits for a person to choose its handler (`ChooseHandler=ask`), 0700: only root or the agent's own user
    /// may choose.
    public let pending: Directory?
    /// The entries that could not be moved aside, as recorded (the agent's; inboxctl reads `LeftInPlace.read`).
    public private(set) lazy var leftInPlace = LeftInPlace(root: root)
    private var containerCache: [String: Container] = [:]
    /// Told of each entry put in failed/ and unhandled/ when entries there expire (the agent's; nil for inboxctl).
    public var retention: Retention?
    private let isRoot = CurrentProcess.isRoot

    /// The agent's: creates what is missing, with the modes that keep handlers out of each other's way.
    public init(creating path: String) throws(SystemError) {
        root = try Directory.create(path: path, mode: 0o755)
        containers = try root.subdirectory(Self.containersName, mode: 0o711)
        failed = try root.subdirectory(Self.failedName, mode: 0o700)
        unhandled = try root.subdirectory(Self.unhandledName, mode: 0o700)
        let intake = try root.subdirectory(Self.intakeName, mode: 0o700)
        // Exactly 0700 whatever the umask or an earlier run left: the staging check relies on no one else writing.
        try? intake.descriptor.chmod(0o700)
        self.intake = intake
        pending = try root.subdirectory(Self.pendingName, mode: 0o700)
    }

    /// inboxctl's: opens what exists, creating nothing.
    public init(existing path: String) throws(SystemError) {
        root = try Directory(path: path)
        containers = try? root.subdirectory(Self.containersName, create: false)
        failed = try? root.subdirectory(Self.failedName, create: false)
        unhandled = try? root.subdirectory(Self.unhandledName, create: false)
        intake = try? root.subdirectory(Self.intakeName, create: false)
        pending = try? root.subdirectory(Self.pendingName, create: false)
    }

    /// The paths of the three directories for a state directory path, as the agent names them in the journal.
    public static func paths(of state: String) -> (containers: String, failed: String, unhandled: String) {
        let base = state.hasSuffix("/") && state.count > 1 ? String(state.dropLast()) : state
        return (base + "/" + containersName, base + "/" + failedName, base + "/" + unhandledName)
    }

    /// A handler's container, made on first use; `identity` owns its Documents and tmp when the agent is root (an
    /// ordinary user's agent keeps its containers its own).
    public func container(for handler: String, identity: Identity?) throws(SystemError) -> Container {
        if let container = containerCache[handler] { return container }
        guard let containers else { throw SystemError("openat", path: Self.paths(of: root.path).containers, errno: .noSuchFile) }
        let container = try Container(handler: handler, in: containers, identity: isRoot ? identity : nil)
        containerCache[handler] = container
        return container
    }

    /// The container already opened for `handler`, if any.
    public func openedContainer(for handler: String) -> Container? { containerCache[handler] }

    /// The container Inboxes that exist, by handler name (what an earlier run left there), sorted.
    public func containerInboxes() -> [(handler: String, inbox: Directory)] {
        guard let containers, let names = try? containers.entries() else { return [] }
        return names.compactMap { String(validating: $0, as: UTF8.self) }.sorted().compactMap { handler in
            guard let root = try? containers.subdirectory(handler, create: false),
                  let inbox = try? root.subdirectory("Inbox", create: false) else { return nil }
            return (handler, inbox)
        }
    }

    /// The owners of the containers' Documents/ (as root, the identities their handlers ran as).
    public func containerOwners() -> Set<UInt32> {
        guard let containers, let names = try? containers.entries() else { return [] }
        return Set(names.compactMap { String(validating: $0, as: UTF8.self) }.compactMap { name in
            guard let root = try? containers.subdirectory(name, create: false),
                  let st = try? root.status(of: Array("Documents".utf8)) else { return nil }
            return st.st_uid
        })
    }

    /// An entry was just put in failed/ or unhandled/ as `name`: stamped with the time through `file` when the agent
    /// has it open, and queued to expire.
    func kept(_ name: String, in place: Retention.Place, file: FileDescriptor?) {
        guard let retention else { return }
        if let file { retention.stamp(file, for: place) }
        retention.added(name, in: place)
    }

    /// The cluster's outbox and spool (0700), made when the agent takes part in a cluster.
    public func clusterDirectory(_ name: String) throws(SystemError) -> Directory {
        let directory = try root.subdirectory(name, mode: 0o700)
        try? directory.descriptor.chmod(0o700)
        return directory
    }

    /// Visible entries of a directory, the count status.json reports.
    public static func visibleCount(_ directory: Directory?) -> Int {
        guard let directory else { return 0 }
        return (try? directory.entries().filter { !FileNames.isHidden($0) }.count) ?? 0
    }
}
