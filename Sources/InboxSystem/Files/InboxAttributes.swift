import InboxCore

/// The extended attributes inboxd reads and writes on the files it holds (docs/design.md, Metadata that rides with
/// a file).

/// The agent's own attributes on files it holds. Any a sender set are removed at intake.
public enum AgentAttribute {
    public static let prefix = "user.inboxd."
    /// "<delivery id> <source uid> <name>", set at intake: one attribute, one write. The name is the one the file was
    /// dropped as (made safe, `FileNames.sanitized`), which a file waiting in intake/ under its inode's name needs.
    public static let delivery = "user.inboxd.delivery"
    /// Attempts that ended in failure so far; absent means none.
    public static let attempts = "user.inboxd.attempts"
    public static let failure = "user.inboxd.failure"
    /// "<n>", written just before attempt n is launched; "<n> stopped" once the agent's own shutdown stopped it
    /// (read as `RecordedAttempts`).
    public static let started = "user.inboxd.started"
    /// "<microseconds since the epoch>": when the file was put in failed/ or unhandled/, written where entries there
    /// expire (`Retention`, `RetentionPolicy`).
    public static let kept = "user.inboxd.kept"
    /// The path of the drop Inbox a file was dropped in, written where it matters: when that Inbox is bound to a
    /// handler (`[Inbox] Handler=`), so that a file the agent holds (unhandled/, rerouted) keeps the binding, and when
    /// Inboxes are bounded (`InboxQuotas`), so that the counts are rebuilt at start-up.
    public static let inbox = "user.inboxd.inbox"
    /// "<microseconds since the epoch>": when a file started waiting in pending/ for a person's choice of handler
    /// (`ChooseHandler=ask`); its `ChooseTimeoutSec=` counts from then, across restarts.
    public static let waiting = "user.inboxd.waiting"
    /// The handler a person chose for a file in pending/ (`inboxctl choose --with`); the agent sees it written
    /// (IN_ATTRIB) or finds it at start-up. It stays on the file, so a restart queues the file for that handler again.
    public static let choice = "user.inboxd.choice"
    /// "<handler> <stream sequence>": a file a worker fetched from a cluster. Its message is the server's until it is
    /// answered, so a restart removes such a file instead of delivering it (the server gives it out again).
    public static let cluster = "user.inboxd.cluster"

    /// The delivery id, the sender's uid and the name it was dropped as of `user.inboxd.delivery`, when the attribute
    /// is well formed (files recorded before the name was kept have none).
    public static func delivery(_ attributes: ExtendedAttributes) -> (id: String, sourceUID: UInt32, name: String?)? {
        guard let text = attributes.readString(delivery, limit: 64 + 256 * 4) else { return nil }
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, let id = validDeliveryID(String(parts[0])), let uid = UInt32(parts[1]) else { return nil }
        let name = parts.count == 3 ? String(parts[2]) : nil
        return (id, uid, name.flatMap { FileNames.sanitized(Array($0.utf8)) == $0 && !$0.isEmpty ? $0 : nil })
    }

    /// The text if it is a delivery id: 32 lowercase hex digits.
    public static func validDeliveryID(_ text: String) -> String? {
        Delivery.isValidID(text) ? text : nil
    }
}

/// The sender's attributes (docs/design.md, Metadata that rides with a file).
public enum SenderAttribute {
    public static let sourceApp = "user.inbox.source-app"
    public static let annotation = "user.inbox.annotation"
    public static let contentType = "user.inbox.content-type"
    public static let handler = "user.inbox.handler"
    public static let handlerOverride = "user.inbox.handler-override"
}
