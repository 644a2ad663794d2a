/// What the agent held back or dropped because a reader of its messages did not read (the service manager's
/// notification socket, journald's socket), as `status.json` carries it under `"notifications"` and `"journal"`
/// (`AgentStatus.stalls`). Counted since the agent started; all zero while both keep up.
public struct ReaderStalls: Sendable, Hashable {
    /// `STATUS=` updates (or repeated messages) replaced by a newer one before the manager read them.
    public var notificationsCoalesced = 0
    /// READY=1, RELOADING=1, STOPPING=1 or WATCHDOG=1 dropped: the manager did not read them in time.
    public var notificationsDropped = 0
    /// The agent's own entries that waited for journald to read again, and those dropped (the wait was full).
    public var journalDelayed = 0
    public var journalDropped = 0
    /// Lines of handlers' output dropped while journald did not read.
    public var outputLinesDropped = 0

    public init() {}

    public var isZero: Bool { self == ReaderStalls() }

    /// The `"notifications"` and `"journal"` members, with their names.
    public var jsonMembers: String {
        "\"notifications\":{\"coalesced\":\(notificationsCoalesced),\"dropped\":\(notificationsDropped)},"
            + "\"journal\":{\"delayed\":\(journalDelayed),\"dropped\":\(journalDropped),"
            + "\"outputLinesDropped\":\(outputLinesDropped)}"
    }

    /// From a status file; what is missing is zero.
    public init(notifications: JSONValue?, journal: JSONValue?) {
        notificationsCoalesced = notifications?["coalesced"]?.int ?? 0
        notificationsDropped = notifications?["dropped"]?.int ?? 0
        journalDelayed = journal?["delayed"]?.int ?? 0
        journalDropped = journal?["dropped"]?.int ?? 0
        outputLinesDropped = journal?["outputLinesDropped"]?.int ?? 0
    }

    /// `inboxctl status`'s lines, only for what is not zero.
    public var lines: [(name: String, value: String)] {
        var lines: [(name: String, value: String)] = []
        if notificationsCoalesced > 0 || notificationsDropped > 0 {
            lines.append(("Notifications", "\(notificationsCoalesced) coalesced, \(notificationsDropped) dropped "
                          + "(the service manager did not read)"))
        }
        if journalDelayed > 0 || journalDropped > 0 || outputLinesDropped > 0 {
            lines.append(("Journal", "\(journalDelayed) entries delayed, \(journalDropped) dropped, "
                          + "\(outputLinesDropped) output lines dropped (journald did not read)"))
        }
        return lines
    }
}
