import InboxCore

/// The agent's side of the Inbox bounds (`InboxQuota` decides and counts): the charge of each delivery from its
/// placing to its end, by the Inbox a file came from, which `Router` writes on it as it is placed
/// (`user.inboxd.inbox`) so that the counts are rebuilt from the containers at start-up. Made only when a bound is
/// set: without one, no attribute is written for it and nothing is counted.
final class InboxQuotas {
    private var quota: InboxQuota
    /// With one drop Inbox, a file recorded before bounds were set counts there.
    private let soleInbox: String?

    init(bounds: InboxBounds, inboxes: [String]) {
        quota = InboxQuota(bounds: bounds)
        soleInbox = inboxes.count == 1 ? inboxes[0] : nil
    }

    /// Why a newly dropped arrival is over a bound of its Inbox, or nil when it fits. A package counts as one file
    /// of all its files' bytes.
    func refusal(for arrival: Arrival) -> String? {
        quota.refusal(inbox: arrival.directory.path, uid: arrival.sourceUID, bytes: arrival.bytes)
    }

    /// The arrival was placed in a container as delivery `id`: it counts for its Inbox until the delivery ends.
    func charge(_ arrival: Arrival, id: String) {
        let inbox = arrival.origin == .dropped ? arrival.directory.path
            : ExtendedAttributes(arrival.file.descriptor).readString(AgentAttribute.inbox, limit: 4096) ?? soleInbox
        guard let inbox else { return }
        quota.charge(id, .init(inbox: inbox, uid: arrival.sourceUID, bytes: arrival.bytes))
    }

    /// Delivery `id` ended.
    func release(_ id: String) { quota.release(id) }

    /// The bounds, and each Inbox's use.
    var bounds: InboxBounds { quota.bounds }
    func usage(of inbox: String) -> InboxQuota.Usage { quota.usage(of: inbox) }
}
