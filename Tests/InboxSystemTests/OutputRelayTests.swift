import Foundation
import Glibc
@testable import InboxSystem
import Synchronization
import Testing

/// The relay against a journal that pushes back: a non-blocking pipe that nobody reads for a while stands in for
/// the journal stream. The relay pauses instead of blocking, forwards exactly the limit once it drains, including
/// what was still waiting when the attempt ended, and counts the rest.
@Suite struct OutputRelayTests {
    /// (bytes the handler writes, the limit, the tick from which the journal is read: 10 ms each; the attempt ends
    /// at tick 40). Past the limit, 1 MiB is drained while the journal is full; 100 KB within it are still waiting
    /// for the journal when the attempt ends, and are written after.
    @Test(arguments: [(1 << 20, Int64(300_000), 31), (100_000, Int64(1 << 20), 41)])
    func aFullJournalPausesTheRelayAndNothingWithinTheLimitIsLost(_ total: Int, _ limit: Int64, _ drainFrom: Int) throws {
        var ends: [CInt] = [0, 0]
        #expect(pipe(&ends) == 0)
        let journalReader = FileDescriptor(rawValue: ends[0]), journalWriter = FileDescriptor(rawValue: ends[1])
        defer { journalReader.close() }
        try journalReader.setNonBlocking()
        try journalWriter.setNonBlocking()
        let stream = HandlerOutputStream(journalWriter, owned: true)

        let loop = try EventLoop()
        let logger = Logger(target: .stderr, threshold: .error)
        let relay = try OutputRelay(loop: loop, logger: logger, stream: stream, limit: limit)

        // The "handler": a blocking writer of 1 MiB that then exits (closes its end).
        let written = Atomic<Bool>(false)
        let handlerEnd = relay.handlerEnd
        let writer = Thread {
            let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: total)
            _ = handlerEnd.write(all: bytes)
            handlerEnd.close()
            written.store(true, ordering: .releasing)
        }
        writer.start()

        var received = 0
        var closed = false
        var timers: [EventSource] = []
        func drain() {
            withUnsafeTemporaryAllocation(byteCount: 65536, alignment: 1) { buffer in
                while let n = try? journalReader.read(into: buffer), n > 0 { received += n }
            }
        }
        // Nobody reads the "journal" for 300 ms: the relay must fill it and wait, not block the loop.
        var ticks = 0
        func tick() {
            ticks += 1
            if ticks >= drainFrom { drain() }
            if ticks == 40 {
                let done = written.load(ordering: .acquiring)
                #expect(done)
                relay.finish(fields: []) { _ in closed = true }
                // Whatever waits for the journal keeps the relay until it is written.
                #expect(closed == (drainFrom < 40))
            }
            if closed && ticks > 40 {
                drain()
                loop.exit(code: 0)
                return
            }
            if ticks > 400 {
                loop.exit(code: 1)
                return
            }
            timers.append(try! loop.addTimer(after: .milliseconds(10)) { tick() })
        }
        timers.append(try loop.addTimer(after: .milliseconds(10)) { tick() })
        #expect(try loop.run() == 0)
        #expect(closed)
        #expect(Int64(received) == min(Int64(total), limit))
        #expect(relay.dropped == max(0, Int64(total) - limit))
    }
}
