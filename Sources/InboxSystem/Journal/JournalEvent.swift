/// The kinds of entries the agent writes, each with a stable MESSAGE_ID (see units/inboxd.catalog).
public enum JournalEvent: String, Sendable, CaseIterable {
    case arrived, dispatched, finished, retry, failed, unhandled, violation, removed, rejected, mismatch
    case registrationsLoaded = "registrations-loaded"
    case registrationError = "registration-error"
    case overflow, started, stopping
    case outputDropped = "output-dropped"
    /// A resident handler's instance started, stopped (the agent stopped it: idle, reload, timeout, shutdown), or
    /// ended on its own (crashed).
    case instanceStarted = "instance-started"
    case instanceStopped = "instance-stopped"
    case instanceCrashed = "instance-crashed"
    /// An entry of failed/ or unhandled/ was removed after its KeepFailedSec=/KeepUnhandledSec=.
    case expired
    /// A file waits in pending/ for a person to choose among its candidates (`ChooseHandler=ask`).
    case pending
    /// A print hot folder's job was created on its destination (`Print=`), and when it ended.
    case printSubmitted = "print-submitted"
    case printEnded = "print-ended"
    /// An arrival in a cluster Inbox was published: its content in the object store, its delivery message in the
    /// stream (`INBOX_CLUSTER_SEQUENCE`); its local copy is gone.
    case published
    /// A delivery came from the cluster to this host (`INBOX_SOURCE_HOST`, `INBOX_CLUSTER_SEQUENCE`).
    case received
    /// The cluster's connection changed: connected, lost, or a message refused as poison.
    case cluster

    /// 128-bit id in journal form; the last digit tells the kinds apart.
    public var messageID: String {
        // Sixteen kinds filled the first prefix; the instance events have the next one.
        switch self {
        case .instanceStarted: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c61"
        case .instanceStopped: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c62"
        case .instanceCrashed: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c63"
        case .expired: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c6a"
        case .pending: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c64"
        case .printSubmitted: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c65"
        case .printEnded: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c66"
        case .published: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c67"
        case .received: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c68"
        case .cluster: return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c69"
        default: break
        }
        let digit: String = switch self {
        case .arrived: "1"
        case .dispatched: "2"
        case .finished: "3"
        case .retry: "4"
        case .failed: "5"
        case .unhandled: "6"
        case .violation: "7"
        case .removed: "8"
        case .rejected: "9"
        case .registrationsLoaded: "a"
        case .registrationError: "b"
        case .overflow: "c"
        case .started: "d"
        case .stopping: "e"
        case .mismatch: "f"
        case .outputDropped: "0"
        case .instanceStarted, .instanceStopped, .instanceCrashed, .expired, .pending, .printSubmitted, .printEnded,
             .published, .received, .cluster: ""
        }
        return "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5" + digit
    }

    /// Whether the entry carries `INBOX_EVENT=` (the per-file events of docs/design.md, Journal).
    var isDeliveryEvent: Bool {
        switch self {
        case .arrived, .dispatched, .finished, .retry, .failed, .unhandled, .violation, .removed, .rejected,
             .mismatch, .outputDropped, .expired, .pending, .printSubmitted, .printEnded, .published, .received: true
        default: false
        }
    }
}

/// syslog priorities (sd-journal(3) uses the same numbers).
public enum LogPriority: Int, Sendable, Comparable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    public static func < (a: LogPriority, b: LogPriority) -> Bool { a.rawValue > b.rawValue }

    /// The journal's PRIORITY= value.
    var digit: String {
        switch self {
        case .error: "3"
        case .warning: "4"
        case .notice: "5"
        case .info: "6"
        case .debug: "7"
        }
    }
}
