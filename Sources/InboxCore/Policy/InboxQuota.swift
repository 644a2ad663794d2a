/// The bounds of drop Inboxes (`MaxInboxFiles=`, `MaxInboxBytes=`, `MaxInboxFilesPerSender=`,
/// `MaxInboxBytesPerSender=`): what each Inbox, and each sender uid in it, has in the agent's hands, and whether one
/// more arrival fits.
///
/// A file counts from the moment the agent places it in a handler's container Inbox until its delivery ends
/// (handled, moved to failed/, moved to unhandled/, or routed again): queued, running and waiting for a retry all
/// count. Files still lying in the drop Inbox are checked one by one as the agent takes them, in order; files in
/// failed/ and unhandled/ are bounded by `KeepFailedSec=`/`KeepUnhandledSec=` instead. Every change is O(1): the
/// counts follow the deliveries, kept by delivery id.
public struct InboxQuota: Sendable {
    /// What one delivery counts for, and where.
    public struct Charge: Sendable, Hashable {
        public let inbox: String
        public let uid: UInt32
        public let bytes: Int64

        public init(inbox: String, uid: UInt32, bytes: Int64) {
            self.inbox = inbox
            self.uid = uid
            self.bytes = bytes
        }
    }

    /// Files and bytes in the agent's hands.
    public struct Usage: Sendable, Hashable {
        public var files = 0
        public var bytes: Int64 = 0

        public init(files: Int = 0, bytes: Int64 = 0) {
            self.files = files
            self.bytes = bytes
        }

        mutating func add(_ bytes: Int64, sign: Int) {
            files += sign
            self.bytes += Int64(sign) * bytes
        }

        var isZero: Bool { files == 0 && bytes == 0 }
    }

    private struct SenderKey: Hashable {
        let inbox: String
        let uid: UInt32
    }

    public let bounds: InboxBounds
    private var charges: [String: Charge] = [:]
    private var byInbox: [String: Usage] = [:]
    private var bySender: [SenderKey: Usage] = [:]

    public init(bounds: InboxBounds) {
        self.bounds = bounds
    }

    /// What `inbox` has in the agent's hands.
    public func usage(of inbox: String) -> Usage { byInbox[inbox] ?? Usage() }

    /// What `uid` has in the agent's hands from `inbox`.
    public func usage(of inbox: String, uid: UInt32) -> Usage { bySender[SenderKey(inbox: inbox, uid: uid)] ?? Usage() }

    /// Every Inbox's use, by path.
    public var usageByInbox: [String: Usage] { byInbox }

    /// Why an arrival of `bytes` from `uid` in `inbox` is over a bound, or nil when it fits. The reason names the
    /// bound and its value, for the sender who reads it in failed/'s attribute.
    public func refusal(inbox: String, uid: UInt32, bytes: Int64) -> String? {
        Self.refusal(inbox: inbox, uid: uid, bytes: bytes, inInbox: usage(of: inbox), fromSender: usage(of: inbox, uid: uid),
                     bounds: bounds)
    }

    /// The decision itself: an arrival fits when, counted with what is there, no bound is passed. The sender's bounds
    /// are checked first, so a sender over their own share is told so even when the Inbox as a whole is full too.
    public static func refusal(inbox: String, uid: UInt32, bytes: Int64, inInbox: Usage, fromSender: Usage,
                               bounds: InboxBounds) -> String? {
        let size = max(0, bytes)
        if let limit = bounds.maxFilesPerSender, fromSender.files + 1 > limit {
            return "over MaxInboxFilesPerSender=\(limit) for uid \(uid) in \(inbox)"
        }
        if let limit = bounds.maxBytesPerSender, fromSender.bytes + size > limit {
            return "over MaxInboxBytesPerSender=\(ByteSize.format(limit)) for uid \(uid) in \(inbox) "
                + "(\(fromSender.bytes) bytes in hand, this file \(size))"
        }
        if let limit = bounds.maxFiles, inInbox.files + 1 > limit {
            return "over MaxInboxFiles=\(limit) in \(inbox)"
        }
        if let limit = bounds.maxBytes, inInbox.bytes + size > limit {
            return "over MaxInboxBytes=\(ByteSize.format(limit)) in \(inbox) (\(inInbox.bytes) bytes in hand, this file \(size))"
        }
        return nil
    }

    /// Counts delivery `id` (again: a delivery counted already is first released).
    public mutating func charge(_ id: String, _ charge: Charge) {
        release(id)
        charges[id] = charge
        byInbox[charge.inbox, default: Usage()].add(charge.bytes, sign: 1)
        bySender[SenderKey(inbox: charge.inbox, uid: charge.uid), default: Usage()].add(charge.bytes, sign: 1)
    }

    /// Delivery `id` ended: it no longer counts. Nothing happens for an id that is not counted.
    public mutating func release(_ id: String) {
        guard let charge = charges.removeValue(forKey: id) else { return }
        let sender = SenderKey(inbox: charge.inbox, uid: charge.uid)
        byInbox[charge.inbox, default: Usage()].add(charge.bytes, sign: -1)
        bySender[sender, default: Usage()].add(charge.bytes, sign: -1)
        // Senders come and go: an empty count is dropped, so the table holds only who has files in hand.
        if bySender[sender]?.isZero == true { bySender[sender] = nil }
    }

    /// Deliveries counted.
    public var count: Int { charges.count }
}
