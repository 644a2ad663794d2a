/// A FIFO of entry names waiting to be looked at, each with the place it was seen in (an Inbox). Popping is O(1);
/// the storage is compacted as the head advances, so a long burst does not keep its whole history.
public struct NameQueue<Place> {
    private var items: [(Place, [UInt8])] = []
    private var head = 0

    public init() {}

    public var count: Int { items.count - head }
    public var isEmpty: Bool { head == items.count }

    public mutating func append(_ place: Place, _ name: [UInt8]) {
        items.append((place, name))
    }

    public mutating func popFirst() -> (Place, [UInt8])? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 1024)
            head = 0
        } else if head >= 4096 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
