/// One file on its way to a handler: everything the agent knows about it, and everything the handler is told
/// (docs/design.md, "What a handler receives"). The file itself lies in the handler's container Inbox; the record is
/// made when it is moved there, travels through the queue and the launcher, and ends in one journal entry.
public struct Delivery: Sendable, Hashable {
    /// Who chose the handler (journal field `INBOX_CHOSEN_BY`).
    public enum ChosenBy: String, Sendable, Hashable {
        /// Rank selection (the usual case; the journal leaves the field out).
        case rank
        /// The sender's choice (`user.inbox.handler`), a handler that claims the type.
        case sender
        /// The sender's choice of a handler that does not claim the type (`user.inbox.handler-override`).
        case senderOverride = "sender-override"
        /// The file came through an Inbox bound to the handler (`[Inbox] Handler=`).
        case inbox
        /// The document type claimed the file's name (`NamePatterns=`).
        case namePattern = "name-pattern"
        /// A person chose among the candidates of an Inbox with `ChooseHandler=ask` (`inboxctl choose`).
        case person
        /// Nobody chose within `ChooseHandler=ask`'s `ChooseTimeoutSec=`: the best-ranked candidate.
        case timeout

        /// The value of `INBOX_CHOSEN_BY`, nil for rank selection.
        public var journalValue: String? { self == .rank ? nil : rawValue }
    }

    /// What a viewer is told about a preview (`QLPreviewController` items and their titles).
    public struct Preview: Sendable, Hashable {
        /// The title to show: `--title`, else the file's name.
        public var title: String
        /// 1-based position among the files previewed together, and how many there are.
        public var index: Int
        public var count: Int

        public init(title: String, index: Int, count: Int) {
            self.title = title
            self.index = index
            self.count = count
        }
    }

    /// A unique identifier for this delivery, stable across attempts (32 lowercase hex digits).
    public let id: String
    /// The handler's identifier.
    public var handler: String
    public var chosenBy: ChosenBy
    /// The file's name in the handler's Inbox.
    public var name: String
    /// The file's path in the handler's Inbox.
    public var path: String { didSet { url = fileURL(forPath: path) } }
    /// `path` as a file:// URL, kept in step with it (it goes into the environment and the stdin document).
    public private(set) var url: String
    /// The handler's Documents directory, where it copies files it keeps.
    public var documents: String
    /// The file's UTI, where that decision came from, and its conformance chain (the UTI first).
    public var contentType: String
    public var typeSource: ResolvedType.Source
    public var contentTypes: [String]
    /// What the sender attached, as read and checked at intake: its claimed application, its annotation, the
    /// content type it claimed and the handler it chose.
    public var sender: SenderMetadata
    /// The uid that owned the dropped file: the one sender fact the agent verified itself.
    public var sourceUID: UInt32?
    /// Its metadata came in a sidecar, which lies beside it and is removed with it.
    public var hasSidecar: Bool
    /// Attempts started so far; 1-based while one runs.
    public var attempt: Int
    /// The attempt before this one never ended as far as the agent knows: the agent crashed (or its shutdown stopped
    /// the handler) while it ran, so part of the work may be done. Cleared once an attempt of this run has ended.
    public var redelivered = false
    /// Set when a viewer is run by `inboxctl preview`: the file is shown, not delivered.
    public var preview: Preview?
    /// Runs in a process of its own even where Exec= takes a list (%F, %U): the batch it was in failed.
    public var alone = false
    /// The systemd unit that runs it, for a `Unit=` handler (journal field `INBOX_UNIT`).
    public var unit: String?
    /// The CUPS destination it is printed on, for a `Print=` handler (journal field `INBOX_PRINTER`).
    public var printer: String?
    /// The document is a package: a directory delivered whole (`INBOX_PACKAGE=1`).
    public var isPackage = false
    /// The host it arrived at, for a delivery that came through the cluster (`INBOX_SOURCE_HOST`); nil for a local one.
    public var sourceHost: String?
    /// The cluster message it came in, for a delivery that came through the cluster: answered when it ends.
    public var cluster: ClusterTicket?

    public init(id: String, handler: String, chosenBy: ChosenBy = .rank, name: String, path: String, documents: String,
                contentType: String, typeSource: ResolvedType.Source = .extension, contentTypes: [String],
                sender: SenderMetadata = SenderMetadata(), sourceUID: UInt32? = nil,
                hasSidecar: Bool = false, attempt: Int = 0) {
        self.id = id
        self.handler = handler
        self.chosenBy = chosenBy
        self.name = name
        self.path = path
        self.url = fileURL(forPath: path)
        self.documents = documents
        self.contentType = contentType
        self.typeSource = typeSource
        self.contentTypes = contentTypes
        self.sender = sender
        self.sourceUID = sourceUID
        self.hasSidecar = hasSidecar
        self.attempt = attempt
    }

    /// True for a delivery id: 32 lowercase hex digits (`INBOX_DELIVERY_ID`, `user.inboxd.delivery`).
    public static func isValidID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The claimed sender (`user.inbox.source-app`).
    public var sourceApp: String? { sender.sourceApp }
    /// Raw JSON text of the annotation, already checked with `JSON.validate`.
    public var annotation: [UInt8]? { sender.annotation }
}
