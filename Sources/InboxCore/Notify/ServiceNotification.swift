/// One message to the service manager (sd_notify(3)): one datagram of `KEY=value` lines.
public struct ServiceNotification: Sendable, Hashable {
    /// What the message is for. Every kind but `status` changes what the manager does, and is worth waiting for.
    public enum Kind: String, Sendable, Hashable {
        case ready = "READY=1"
        case reloading = "RELOADING=1"
        case stopping = "STOPPING=1"
        case watchdog = "WATCHDOG=1"
        /// `STATUS=` alone: advisory, the newest replaces what was not sent yet.
        case status = "STATUS="
    }

    public let kind: Kind
    /// The datagram's text.
    public let message: String

    private init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Start-up (or a reload) is done: every watch is in place.
    public static func ready(status: String) -> Self { Self(.ready, "READY=1\nSTATUS=\(status)") }

    /// A reload begins. systemd wants the moment it began on CLOCK_MONOTONIC beside it (sd_notify(3), RELOADING=1;
    /// Type=notify-reload units match it against the reload they asked for); READY=1 ends it.
    public static func reloading(monotonicUSec: UInt64, status: String) -> Self {
        Self(.reloading, "RELOADING=1\nMONOTONIC_USEC=\(monotonicUSec)\nSTATUS=\(status)")
    }

    public static func stopping(status: String) -> Self { Self(.stopping, "STOPPING=1\nSTATUS=\(status)") }

    public static let watchdog = Self(.watchdog, "WATCHDOG=1")

    public static func status(_ text: String) -> Self { Self(.status, "STATUS=\(text)") }

    /// Whether the message says what the agent does (`STATUS=`): a newer one makes an older status stale.
    public var carriesStatus: Bool { kind != .watchdog }
}

/// What waits to be sent while the service manager's queue is full: never more than one message per kind. The newest
/// `STATUS=` replaces the one not sent yet (coalesced, it never expires); a message the manager acts on replaces an
/// older one of its kind, and waits until its deadline, then is dropped. Messages go out in the order they were made,
/// a waiting `STATUS=` last (it is the newest).
public struct NotificationBacklog: Sendable {
    public struct Waiting: Sendable, Hashable {
        public var notification: ServiceNotification
        /// When it stops being worth sending.
        public var deadline: Duration
    }

    /// Messages the manager acts on, oldest first, one per kind.
    public private(set) var waiting: [Waiting] = []
    /// The newest `STATUS=` made after every message in `waiting`.
    public private(set) var status: ServiceNotification?
    /// Messages replaced by a newer one before they were sent (status updates, mostly).
    public private(set) var coalesced = 0
    /// Messages dropped at their deadline.
    public private(set) var dropped = 0

    public init() {}

    public var isEmpty: Bool { waiting.isEmpty && status == nil }

    /// The earliest deadline of what waits; nil when only a status (or nothing) does.
    public var earliestDeadline: Duration? { waiting.map(\.deadline).min() }

    /// Keeps `notification` to send when there is room, until `deadline` unless it is a status.
    public mutating func add(_ notification: ServiceNotification, deadline: Duration) {
        if notification.carriesStatus, status != nil {
            status = nil
            coalesced += 1
        }
        guard notification.kind != .status else {
            status = notification
            return
        }
        if let older = waiting.firstIndex(where: { $0.notification.kind == notification.kind }) {
            waiting.remove(at: older)
            coalesced += 1
        }
        waiting.append(Waiting(notification: notification, deadline: deadline))
    }

    /// What to send next.
    public var next: ServiceNotification? { waiting.first?.notification ?? status }

    /// `next` was sent (or refused for good): the one after it is next.
    public mutating func removeNext() {
        if !waiting.isEmpty { waiting.removeFirst() } else { status = nil }
    }

    /// Drops what waited past its deadline at `now`; returns their kinds, oldest first.
    public mutating func expire(now: Duration) -> [ServiceNotification.Kind] {
        let expired = waiting.filter { $0.deadline <= now }.map(\.notification.kind)
        waiting.removeAll { $0.deadline <= now }
        dropped += expired.count
        return expired
    }

    /// Drops everything that waits (the agent exits): returns the kinds of messages the manager would have acted on.
    public mutating func dropAll() -> [ServiceNotification.Kind] {
        let kinds = waiting.map(\.notification.kind)
        dropped += kinds.count
        waiting = []
        status = nil
        return kinds
    }
}
