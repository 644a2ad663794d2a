import Testing
@testable import InboxCore

@Suite("The name queue and the delivery queue")
struct QueueTests {
    @Test func namesComeOutInTheOrderTheyWentIn() {
        var queue = NameQueue<Int>()
        #expect(queue.isEmpty && queue.popFirst() == nil)
        for index in 0..<10_000 { queue.append(index % 3, Array("n\(index)".utf8)) }
        #expect(queue.count == 10_000)
        for index in 0..<10_000 {
            let (place, name) = queue.popFirst()!
            #expect(place == index % 3 && name == Array("n\(index)".utf8))
            if index == 5_000 { queue.append(7, [0xFF, 0x00]) }
        }
        // One appended while the head was halfway (and the storage compacted) comes after the rest.
        #expect(queue.count == 1)
        #expect(queue.popFirst()! == (7, [0xFF, 0x00]))
        #expect(queue.isEmpty && queue.count == 0)
        queue.append(1, [])
        #expect(queue.popFirst()! == (1, []))
    }

    struct Item: Queueable, Equatable {
        let handler: String
        let sequence: UInt64
    }

    @Test func theOldestItemWhoseHandlerHasRoomComesNext() {
        var queue = DeliveryQueue<Item>()
        for (sequence, handler) in ["a", "b", "a", "c", "b"].enumerated() {
            queue.append(Item(handler: handler, sequence: UInt64(sequence)))
        }
        #expect(queue.count == 5)
        #expect(queue.popNext { _ in true } == Item(handler: "a", sequence: 0))
        // "a" is full: "b" is next, then "c"; "a" waits.
        #expect(queue.popNext { $0 != "a" } == Item(handler: "b", sequence: 1))
        #expect(queue.popNext { $0 != "a" } == Item(handler: "c", sequence: 3))
        #expect(queue.popNext { $0 == "nobody" } == nil)
        #expect(queue.count == 2)
        #expect(queue.popNext { _ in true } == Item(handler: "a", sequence: 2))
        #expect(queue.popNext { _ in true } == Item(handler: "b", sequence: 4))
        #expect(queue.popNext { _ in true } == nil && queue.count == 0)
    }

    @Test func removingAHandlersItemsKeepsTheRest() {
        var queue = DeliveryQueue<Item>()
        for sequence in 0..<3000 { queue.append(Item(handler: sequence % 2 == 0 ? "even" : "odd", sequence: UInt64(sequence))) }
        // Past the compaction point of the per-handler storage (1024 taken from the head).
        for index in 0..<1200 { #expect(queue.popNext { $0 == "even" }?.sequence == UInt64(2 * index)) }
        #expect(queue.count == 1800)
        let removed = queue.removeAll { $0 == "odd" }
        #expect(removed.count == 1500 && removed.allSatisfy { $0.handler == "odd" })
        #expect(removed.map(\.sequence) == removed.map(\.sequence).sorted())
        #expect(queue.count == 300)
        #expect(queue.popNext { _ in true }?.sequence == 2400)
    }
}
