import Glibc
import InboxCore

/// One file on its way to a handler. The file itself lies in the handler's container Inbox;
/// this is what the agent remembers about it while it waits or runs.
struct Delivery {
    let id: String
    var handler: String
    /// "sender" when the sender chose the handler (`user.inbox.handler`), "sender-override" when it does not claim the type.
    var chosenBy: String? = nil
    /// The name in the container Inbox.
    var fileName: String
    /// Its metadata came in a sidecar, which lies beside it and is removed with it.
    var hasSidecar = false
    var contentType: String
    var typeSource: ResolvedType.Source
    var sourceApp: String?
    var sourceUID: UInt32
    var annotation: [UInt8]?
    /// Attempts started so far; the failed ones are persisted in `user.inboxd.attempts`.
    var attempts: Int
    /// FIFO order across all handlers.
    var sequence: UInt64
    /// Placed in the container Inbox by intake, identity taken after the move, not launched yet:
    /// launch need not look at it again.
    var justMoved = false
    /// The Inbox copy as the handler is given it; compared after the handler exits.
    var identity: FileIdentity?
}

/// The agent's own attributes on files it holds. Any a sender set are removed at intake.
public enum AgentAttribute {
    public static let prefix = "user.inboxd."
    /// "<delivery id> <source uid>", set at intake: one attribute, one write.
    public static let delivery = "user.inboxd.delivery"
    /// Attempts that ended in failure so far; absent means none.
    public static let attempts = "user.inboxd.attempts"
    public static let failure = "user.inboxd.failure"

    /// The delivery id and the sender's uid of `user.inboxd.delivery`, when the attribute is well formed.
    public static func delivery(_ attributes: ExtendedAttributes) -> (id: String, sourceUID: UInt32)? {
        guard let text = attributes.readString(delivery, limit: 64) else { return nil }
        let parts = text.split(separator: " ")
        guard parts.count == 2, let id = validDeliveryID(String(parts[0])), let uid = UInt32(parts[1]) else { return nil }
        return (id, uid)
    }

    /// The text if it is a delivery id: 32 lowercase hex digits.
    public static func validDeliveryID(_ text: String) -> String? {
        text.utf8.count == 32 && text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            ? text : nil
    }
}

/// The sender's attributes (DESIGN.md "Metadata that rides with a file").
public enum SenderAttribute {
    public static let sourceApp = "user.inbox.source-app"
    public static let annotation = "user.inbox.annotation"
    public static let contentType = "user.inbox.content-type"
    public static let handler = "user.inbox.handler"
    public static let handlerOverride = "user.inbox.handler-override"
}

/// Per-handler FIFO queues served in global arrival order.
struct DeliveryQueue {
    private var queues: [String: [Delivery]] = [:]
    private var heads: [String: Int] = [:]
    private(set) var count = 0

    mutating func append(_ delivery: Delivery) {
        queues[delivery.handler, default: []].append(delivery)
        count += 1
    }

    /// Removes and returns the earliest delivery whose handler `canRun`.
    mutating func popNext(where canRun: (String) -> Bool) -> Delivery? {
        var best: (handler: String, sequence: UInt64)?
        for (handler, items) in queues {
            let head = heads[handler, default: 0]
            guard head < items.count, canRun(handler) else { continue }
            if best == nil || items[head].sequence < best!.sequence { best = (handler, items[head].sequence) }
        }
        guard let handler = best?.handler, let items = queues[handler] else { return nil }
        let head = heads[handler, default: 0]
        let delivery = items[head]
        if head + 1 == items.count {
            queues[handler] = nil
            heads[handler] = nil
        } else if head > 1024 && head * 2 > items.count {
            queues[handler] = Array(items[(head + 1)...])
            heads[handler] = 0
        } else {
            heads[handler] = head + 1
        }
        count -= 1
        return delivery
    }

    /// Takes every waiting delivery of handlers for which `predicate` is true.
    mutating func removeAll(where predicate: (String) -> Bool) -> [Delivery] {
        var removed: [Delivery] = []
        for (handler, items) in queues where predicate(handler) {
            removed += items[heads[handler, default: 0]...]
            queues[handler] = nil
            heads[handler] = nil
        }
        count -= removed.count
        return removed.sorted { $0.sequence < $1.sequence }
    }
}

/// What must not change about an Inbox copy while its handler runs (DESIGN.md: read and delete only).
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: timespec
    let changed: timespec

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modified = st.st_mtim
        changed = st.st_ctim
    }

    init?(_ file: FileDescriptor) {
        var st = stat()
        guard fstat(file.rawValue, &st) == 0 else { return nil }
        self.init(st)
    }

    static func == (a: FileIdentity, b: FileIdentity) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
            && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }

    /// What differs, for the journal: "size 12 → 0, modification time, change time".
    func differences(from other: FileIdentity) -> String {
        var parts: [String] = []
        if inode != other.inode || device != other.device { parts.append("a different file") }
        if size != other.size { parts.append("size \(size) → \(other.size)") }
        if modified.tv_sec != other.modified.tv_sec || modified.tv_nsec != other.modified.tv_nsec {
            parts.append("modification time")
        }
        if changed.tv_sec != other.changed.tv_sec || changed.tv_nsec != other.changed.tv_nsec {
            parts.append("change time (mode, owner, links or attributes)")
        }
        return parts.joined(separator: ", ")
    }
}
