import InboxCore

/// A file taken in: opened and checked (a regular file with one link, never followed; or a package document, a
/// directory opened and walked by descriptor), with what its sender attached and what the agent verified itself. It
/// exists from the moment the file is opened until it is moved on (into a container, unhandled/ or failed/); `file`
/// is closed by whoever took it.
public struct Arrival {
    /// What was taken: a regular file, or a package document with what its check found.
    public enum Kind {
        case file
        /// A package whose tree was checked: every entry as it was then.
        case package(PackageManifest)
        /// A package its check refused (`.changing` passes: checked again after the writer back-off).
        case refusedPackage(PackageRefusal)
    }

    /// Where it was found, and why it is being looked at.
    public enum Origin: Sendable {
        /// Dropped in an Inbox: a new delivery. Sender-set agent attributes are removed and a delivery id is made.
        case dropped
        /// Held by the agent already (unhandled/, or a container Inbox after a restart or a reload): its recorded
        /// delivery id, sender uid and attempts are kept.
        case held
    }

    public let directory: Directory
    public let name: [UInt8]
    public let file: OpenedFile
    public let origin: Origin
    public let id: String
    /// The uid that owned the file when it was dropped.
    public let sourceUID: UInt32
    /// Attempts recorded on the file: those that failed, and one a crash cut short.
    public let attempts: Int
    /// An attempt started and never ended as far as the agent knows (a crash, or its shutdown, stopped it).
    public var redelivered = false
    public let metadata: SenderMetadata
    /// Its metadata came in a sidecar `.<name>.inbox-meta`, which goes where the file goes.
    public let hasSidecar: Bool
    /// The cluster message it came in, for a file a worker host fetched (`ClusterWork`); nil for a local one.
    public var cluster: ClusterTicket?
    /// The host it arrived at, for a file fetched from the cluster.
    public var sourceHost: String?
    /// A regular file (`file` is open for reading), or a package (`file` is its directory, O_RDONLY|O_DIRECTORY).
    public var kind = Kind.file

    /// The package's tree as checked; nil for a regular file and for a refused package.
    public var package: PackageManifest? { if case .package(let manifest) = kind { manifest } else { nil } }
    public var isPackage: Bool { if case .file = kind { false } else { true } }
    /// What the Inbox bounds count: the file's size, or the bytes of all of a package's files.
    public var bytes: Int64 { package?.totalBytes ?? Int64(file.status.st_size) }

    /// The sidecar the agent writes for the file in its own directories (`Directory.relocate`): what was read and
    /// checked, never the sender's file itself; nil when the metadata fits in its attributes.
    public var agentSidecar: [UInt8]? { hasSidecar ? Sidecar.document(metadata) : nil }

    /// The path for messages: invalid UTF-8 replaced.
    public var shown: String { directory.child(displayName(name)) }
    /// The name it was dropped as, recorded on a file the agent holds (`stamp`): a file in intake/ lies under its
    /// inode's name, but is typed and placed under this one.
    public var recordedName: String?
    /// The name it may take in the agent's directories (FileNames.sanitized), and that its type is judged by.
    public var cleanName: String { recordedName ?? FileNames.sanitized(name) }

    /// The sender's choice of handler, if it made one, with whether it may override the type check.
    public var request: Routing.Request? {
        metadata.handler.map { handler in
            Routing.Request(handler: handler, override: metadata.overridesHandlerCheck,
                            trusted: sourceUID == 0 || sourceUID == CurrentProcess.effectiveUserID)
        }
    }

    /// Records a dropped file's delivery on the agent's file (the staged original, or its copy): sender-set agent
    /// attributes are removed and the delivery id and sender uid written. Done in the agent's staging directory,
    /// before the handler can see the file: the after-exit check compares the change time, so nothing of the agent's
    /// may touch the file once the handler runs.
    public func stamp(_ file: FileDescriptor) {
        guard origin == .dropped else { return }
        let attributes = ExtendedAttributes(file)
        for key in attributes.names() where key.hasPrefix(AgentAttribute.prefix) { attributes.remove(key) }
        attributes.write(AgentAttribute.delivery, "\(id) \(sourceUID) \(cleanName)")
    }
}
