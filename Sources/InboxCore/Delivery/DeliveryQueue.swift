/// What the queue orders: per handler, by a global arrival sequence.
public protocol Queueable {
    var handler: String { get }
    var sequence: UInt64 { get }
}

/// Per-handler FIFO queues served in global arrival order: the next item is the oldest whose handler has room.
public struct DeliveryQueue<Item: Queueable> {
    private var queues: [String: [Item]] = [:]
    private var heads: [String: Int] = [:]
    public private(set) var count = 0

    public init() {}

    public mutating func append(_ item: Item) {
        queues[item.handler, default: []].append(item)
        count += 1
    }

    /// Removes and returns the earliest item whose handler `canRun`.
    public mutating func popNext(where canRun: (String) -> Bool) -> Item? {
        popNext(admitting: { canRun($0.handler) ? () : nil })?.item
    }

    /// Removes and returns the earliest head of a handler's queue that `admit` admits, with what `admit` said of it
    /// (each head is asked once; a handler's later items wait behind its head).
    public mutating func popNext<Admission>(admitting admit: (Item) -> Admission?) -> (item: Item, admission: Admission)? {
        var best: (handler: String, sequence: UInt64, admission: Admission)?
        for (handler, items) in queues {
            let head = heads[handler, default: 0]
            guard head < items.count, best == nil || items[head].sequence < best!.sequence,
                  let admission = admit(items[head]) else { continue }
            best = (handler, items[head].sequence, admission)
        }
        guard let handler = best?.handler, let admission = best?.admission, let items = queues[handler] else { return nil }
        let head = heads[handler, default: 0]
        let item = items[head]
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
        return (item, admission)
    }

    /// Calls `body` with every waiting item, in no particular order.
    public func forEach(_ body: (Item) -> Void) {
        for (handler, items) in queues {
            for item in items[heads[handler, default: 0]...] { body(item) }
        }
    }

    /// Takes every waiting item of handlers for which `predicate` is true.
    public mutating func removeAll(where predicate: (String) -> Bool) -> [Item] {
        var removed: [Item] = []
        for (handler, items) in queues where predicate(handler) {
            removed += items[heads[handler, default: 0]...]
            queues[handler] = nil
            heads[handler] = nil
        }
        count -= removed.count
        return removed.sorted { $0.sequence < $1.sequence }
    }
}
