/// What a worker host keeps of the cluster message a delivery came in (docs/design.md, Cluster: the agent): which
/// message to answer when the delivery ends, and how many times the server has handed it out.
public struct ClusterTicket: Sendable, Hashable {
    /// The cluster link's reference for the message, valid while the link that received it lives.
    public var reference: UInt64
    /// The handler whose consumer it came from: the only one it may be delivered to here.
    public var handler: String
    /// The message's sequence in the cluster's stream (`INBOX_CLUSTER_SEQUENCE`).
    public var sequence: UInt64
    /// How many times the server has delivered it, this time included (1 the first time).
    public var delivered: UInt64
    /// The link that received it (a link replaced after its child died cannot answer for the one before).
    public var link: Int

    /// Creates a ticket.
    public init(reference: UInt64, handler: String, sequence: UInt64, delivered: UInt64, link: Int) {
        self.reference = reference
        self.handler = handler
        self.sequence = sequence
        self.delivered = delivered
        self.link = link
    }

    /// The attempts made on other hosts (or this one) before this delivery: what the retry policy counts from.
    public var earlierAttempts: Int { Int(clamping: delivered > 0 ? delivered - 1 : 0) }
}

/// How a worker answers a cluster message when its delivery ends here.
public enum ClusterVerdict: Sendable, Hashable {
    /// Handled: the message is acknowledged and its content removed from the object store.
    case handled
    /// To be tried again, by any host, after the delay (a retry, or given back when this host stops or no longer has
    /// the handler).
    case again(after: Duration)
    /// Given up on here (kept in this host's failed/): the message is terminated, with the reason.
    case givenUp(reason: String)
}
