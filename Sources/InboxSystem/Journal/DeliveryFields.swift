import InboxCore

/// A journal entry's fields, in the order they are written; nil values are left out.
public typealias JournalFields = [(key: String, value: String?)]

extension Delivery {
    /// The fields every entry about this delivery carries (docs/design.md, Journal), with `file` as INBOX_FILE
    /// (where the file lies now: its container Inbox, or failed/ once moved there).
    public func journalFields(file: String? = nil) -> JournalFields {
        [("INBOX_FILE", file ?? path), ("INBOX_DELIVERY_ID", id), ("INBOX_HANDLER", handler),
         ("INBOX_CONTENT_TYPE", contentType), ("INBOX_TYPE_SOURCE", typeSource.rawValue),
         ("INBOX_SOURCE_APP", sourceApp), ("INBOX_SOURCE_UID", sourceUID.map { String($0) }),
         ("INBOX_ATTEMPT", String(attempt)), ("INBOX_REDELIVERED", redelivered ? "1" : nil),
         ("INBOX_SOURCE_HOST", sourceHost), ("INBOX_CLUSTER_SEQUENCE", cluster.map { String($0.sequence) }),
         ("INBOX_CHOSEN_BY", chosenBy.journalValue), ("INBOX_UNIT", unit), ("INBOX_PRINTER", printer), ("INBOX_PACKAGE", isPackage ? "1" : nil)]
    }
}

extension DeliveryOutcome {
    /// INBOX_EXIT_STATUS: the exit status, when the handler exited.
    public var exitStatusField: String? {
        switch self {
        case .exited(let code): String(code)
        case .batchFailed(let outcome): outcome.exitStatusField
        default: nil
        }
    }

    /// How an attempt ended, as a phrase: "exited with status 1", "timed out".
    public var phrase: String {
        switch self {
        case .exited(75): "asked to retry (exit status 75)"
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "was killed by signal \(signal)"
        case .timedOut: "timed out"
        case .spawnFailed(let reason): "could not be started (\(reason))"
        case .failedAnswer(let reason): reason.isEmpty ? "answered failed" : "answered failed (\(reason))"
        case .unanswered(let why): "gave no answer (\(why))"
        case .batchFailed(let outcome): "\(outcome.phrase) in a batch"
        case .deferred(let why): "could not take it now (\(why))"
        case .printFailed(let why): "could not print it (\(why))"
        }
    }
}

extension Duration {
    /// "10s", "250ms": how the journal states a retry delay.
    public var shortDescription: String {
        let ms = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        return ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
    }

    /// INBOX_DURATION_USEC.
    public var microsecondsField: String { String(microseconds) }
}
