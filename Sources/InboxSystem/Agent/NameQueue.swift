/// A FIFO of Inbox entry names waiting to be looked at.
struct NameQueue {
    private var items: [(Directory, [UInt8])] = []
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }

    mutating func append(_ directory: Directory, _ name: [UInt8]) {
        items.append((directory, name))
    }

    mutating func popFirst() -> (Directory, [UInt8])? {
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
