import InboxCore

/// Where the router hands the deliveries it placed in their containers: the `Dispatcher` in the agent, a recorder in
/// tests of routing and recovery.
protocol DeliveryHandoff: AnyObject {
    /// Takes a delivery whose file lies in its container Inbox; `placed` when intake just moved it there.
    func enqueue(_ delivery: Delivery, placed: FileIdentity?)
    /// Starts what the limits allow of what was queued (a retry's timer ends no intake batch that would).
    func launchReady()
}

extension Dispatcher: DeliveryHandoff {}
