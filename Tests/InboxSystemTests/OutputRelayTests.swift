import Foundation
import Glibc
@testable import InboxSystem
import Synchronization
import Testing

/// The relay against a stand-in journald: a datagram socket bound in a temporary directory, read by the test when it
/// likes (its queue holds ten datagrams, net.unix.max_dgram_qlen, so not reading it is a journal that pushes back).
/// Each line of output is one entry with the handler's fields; the relay pauses instead of blocking, forwards exactly
/// the limit once the journal drains, including what was still waiting when the attempt ended, and counts the rest.
@Suite struct OutputRelayTests {
    /// (bytes the handler writes, the limit, the tick from which the journal is read: 10 ms each; the attempt ends
    /// at tick 40). Past the limit, 1 MiB is drained while the journal is full; 100 KB within it are still waiting
    /// for the journal when the attempt ends, and are written after.
    @Test(arguments: [(1 << 20, Int64(300_000), 31), (100_000, Int64(1 << 20), 41)])
    func aFullJournalPausesTheRelayAndNothingWithinTheLimitIsLost(_ total: Int, _ limit: Int64, _ drainFrom: Int) throws {
        let journald = try StandInJournald()
        let loop = try EventLoop()
        let logger = Logger(target: .stderr, threshold: .error)
        let relay = try OutputRelay(loop: loop, logger: logger, handler: "test.flood", deliveryIDs: ["d1"],
                                    destination: .journal(try #require(journald.client())), limit: limit)

        // The "handler": a blocking writer of lines of 1023 x's that then exits (closes its end).
        let written = Atomic<Bool>(false)
        let handlerEnd = relay.handlerEnd
        var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: total)
        for index in stride(from: 1023, to: total, by: 1024) { bytes[index] = 10 }
        let writer = Thread { [bytes] in
            _ = handlerEnd.write(all: bytes)
            handlerEnd.close()
            written.store(true, ordering: .releasing)
        }
        writer.start()

        var received: [StandInJournald.Entry] = []
        var closed = false
        var timers: [EventSource] = []
        // Nobody reads the "journal" for 300 ms: the relay must fill it and wait, not block the loop.
        var ticks = 0
        func tick() {
            ticks += 1
            // From then on "journald" reads whenever something is there, as the real one does.
            if ticks == drainFrom {
                timers.append(try! loop.addIO(journald.descriptor) { _ in received += journald.receive() })
            }
            if ticks == 40 {
                let done = written.load(ordering: .acquiring)
                #expect(done)
                relay.finish(fields: []) { _ in closed = true }
                // Whatever waits for the journal keeps the relay until it is written.
                #expect(closed == (drainFrom < 40))
            }
            if closed && ticks > 40 {
                received += journald.receive()
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
        // Whole lines of the forwarded bytes, and the part of the last one within the limit as a line of its own.
        let forwarded = Int(min(Int64(total), limit))
        let expected = Array(repeating: 1023, count: forwarded / 1024) + (forwarded % 1024 > 0 ? [forwarded % 1024] : [])
        #expect(received.map(\.message.count) == expected)
        #expect(received.allSatisfy { $0.message.allSatisfy { $0 == UInt8(ascii: "x") } })
        #expect(received.allSatisfy { $0.fields["INBOX_DELIVERY_ID"] == ["d1"] })
        #expect(relay.dropped == max(0, Int64(total) - limit))
    }

    /// What a handler may write, and the entries it becomes: a line ends at a newline or a NUL, a line longer than
    /// journald's LineMax= is cut there, a last line without a newline is a line, empty lines are kept, and bytes
    /// that are no UTF-8 are kept as they are. Every entry names the handler, its pid and each delivery of its batch.
    @Test func eachLineIsOneEntryThatNamesTheHandlerItsPidAndEveryDeliveryOfItsBatch() throws {
        let journald = try StandInJournald()
        let loop = try EventLoop()
        let relay = try OutputRelay(loop: loop, logger: Logger(target: .stderr, threshold: .error), handler: "test.batch",
                                    deliveryIDs: ["d1", "d2", "d3"], destination: .journal(try #require(journald.client())),
                                    limit: nil)
        relay.attribute(pid: 4242)
        let long = [UInt8](repeating: UInt8(ascii: "y"), count: 2 * OutputRelay.lineMax + 100)
        let output: [UInt8] = Array("one\ntwo\u{0}three\n\n".utf8) + long + [10, 0xFF, 0xFE, 0x41, 10] + Array("tail".utf8)
        let handlerEnd = relay.handlerEnd
        let writer = Thread {
            _ = handlerEnd.write(all: output)
            handlerEnd.close()
        }
        writer.start()
        var received: [StandInJournald.Entry] = []
        var closed = false
        var timers: [EventSource] = []
        func tick() {
            received += journald.receive()
            if !closed && received.count >= 7 {
                relay.finish(fields: []) { _ in closed = true }
            }
            if closed {
                received += journald.receive()
                loop.exit(code: 0)
                return
            }
            timers.append(try! loop.addTimer(after: .milliseconds(5)) { tick() })
        }
        timers.append(try loop.addTimer(after: .milliseconds(5)) { tick() })
        timers.append(try loop.addTimer(after: .seconds(20)) { loop.exit(code: 1) })
        #expect(try loop.run() == 0)

        let y = [UInt8](repeating: UInt8(ascii: "y"), count: OutputRelay.lineMax)
        let expected: [[UInt8]] = [Array("one".utf8), Array("two".utf8), Array("three".utf8), [], y, y,
                                   Array(repeating: UInt8(ascii: "y"), count: 100), [0xFF, 0xFE, 0x41], Array("tail".utf8)]
        #expect(received.map { summary($0.message) } == expected.map(summary))
        for entry in received {
            #expect(entry.fields["SYSLOG_IDENTIFIER"] == ["test.batch"])
            #expect(entry.fields["INBOX_HANDLER"] == ["test.batch"])
            #expect(entry.fields["OBJECT_PID"] == ["4242"])
            #expect(entry.fields["PRIORITY"] == ["6"])
            #expect(entry.fields["INBOX_DELIVERY_ID"] == ["d1", "d2", "d3"])
        }
    }

    /// A resident instance's lines name the delivery it holds while it holds one: what it wrote before it was given
    /// the delivery, or after the delivery was answered, is read under what it held then.
    @Test func aResidentInstancesLinesNameTheDeliveryInFlightWhenTheyWereWritten() throws {
        let journald = try StandInJournald()
        let loop = try EventLoop()
        let relay = try OutputRelay(loop: loop, logger: Logger(target: .stderr, threshold: .error), handler: "test.resident",
                                    deliveryIDs: [], destination: .journal(try #require(journald.client())), limit: nil)
        relay.attribute(pid: 77)
        // Small writes into the pipe, none read until the deliveries change (the loop never runs).
        _ = relay.handlerEnd.write(all: Array("ready\n".utf8))
        relay.attribute(to: ["d1"])
        _ = relay.handlerEnd.write(all: Array("working on d1\n".utf8))
        relay.attribute(to: [])
        _ = relay.handlerEnd.write(all: Array("two at once".utf8))
        relay.attribute(to: [])
        _ = relay.handlerEnd.write(all: Array("\n".utf8))
        relay.attribute(to: ["d2"])
        _ = relay.handlerEnd.write(all: Array("working on d2\n".utf8))
        relay.handlerEnd.close()
        var closed = false
        relay.finish(fields: []) { _ in closed = true }
        #expect(closed)
        let received = journald.receive()
        #expect(received.map { String(decoding: $0.message, as: UTF8.self) }
                == ["ready", "working on d1", "two at once", "working on d2"])
        #expect(received.map { $0.fields["INBOX_DELIVERY_ID"] ?? [] } == [[], ["d1"], [], ["d2"]])
        #expect(received.allSatisfy { $0.fields["OBJECT_PID"] == ["77"] && $0.fields["SYSLOG_IDENTIFIER"] == ["test.resident"] })
    }

    /// While journald pushes back the pipe cannot be read before a change, so what it holds cannot be told to be from
    /// before or after: those lines name no delivery, rather than perhaps the wrong one, until a read empties the pipe.
    @Test func linesReadAfterAChangeWhileTheJournalPushedBackNameNoDelivery() throws {
        let journald = try StandInJournald()
        let loop = try EventLoop()
        let relay = try OutputRelay(loop: loop, logger: Logger(target: .stderr, threshold: .error), handler: "test.resident",
                                    deliveryIDs: ["d0"], destination: .journal(try #require(journald.client())), limit: nil)
        // Thirty lines: ten fill the stand-in's queue, the rest wait in the relay, which stops reading.
        _ = relay.handlerEnd.write(all: Array(String(repeating: "a\n", count: 30).utf8))
        relay.attribute(to: ["d1"])
        // Written while d1 was held, read only after d9 is: neither can be told, so neither is named.
        _ = relay.handlerEnd.write(all: Array("b\n".utf8))
        relay.attribute(to: ["d9"])
        _ = relay.handlerEnd.write(all: Array("c\n".utf8))
        var received: [StandInJournald.Entry] = []
        var timers: [EventSource] = []
        func tick() {
            received += journald.receive()
            if received.count >= 32 {
                // Read again once the pipe was found empty: the lines name the deliveries again.
                relay.attribute(to: ["d2"])
                _ = relay.handlerEnd.write(all: Array("d\n".utf8))
                relay.handlerEnd.close()
                relay.finish(fields: []) { _ in loop.exit(code: 0) }
                return
            }
            timers.append(try! loop.addTimer(after: .milliseconds(5)) { tick() })
        }
        timers.append(try loop.addTimer(after: .milliseconds(5)) { tick() })
        timers.append(try loop.addTimer(after: .seconds(20)) { loop.exit(code: 1) })
        #expect(try loop.run() == 0)
        received += journald.receive()
        #expect(received.map { String(decoding: $0.message, as: UTF8.self) } == Array(repeating: "a", count: 30) + ["b", "c", "d"])
        #expect(received.map { $0.fields["INBOX_DELIVERY_ID"] ?? [] }
                == Array(repeating: ["d0"], count: 30) + [[], [], ["d2"]])
    }

    /// journald restarted (its socket is a new one): the next line connects again, and nothing is lost.
    @Test func aRestartedJournaldIsConnectedToAgainForTheNextLine() throws {
        let journald = try StandInJournald()
        let loop = try EventLoop()
        let logger = Logger(target: .journal, threshold: .error)
        logger.handlerJournalPath = journald.path
        let destination = logger.handlerOutput()
        guard case .journal = destination else {
            Issue.record("no connection to the stand-in")
            return
        }
        let relay = try OutputRelay(loop: loop, logger: logger, handler: "test.restart", deliveryIDs: ["d1"],
                                    destination: destination, limit: nil)
        _ = relay.handlerEnd.write(all: Array("before\n".utf8))
        relay.attribute(to: ["d1", "d2"])
        #expect(journald.receive().map { String(decoding: $0.message, as: UTF8.self) } == ["before"])
        try journald.restart()
        _ = relay.handlerEnd.write(all: Array("after\n".utf8))
        relay.handlerEnd.close()
        var closed = false
        relay.finish(fields: []) { _ in closed = true }
        #expect(closed)
        let after = journald.receive()
        #expect(after.map { String(decoding: $0.message, as: UTF8.self) } == ["after"])
        #expect(after.first?.fields["INBOX_DELIVERY_ID"] == ["d1", "d2"])
    }
}

/// A message short enough for a failure's text: a run of one byte as "y×49152", else its bytes.
private func summary(_ bytes: [UInt8]) -> String {
    if bytes.count > 16, let first = bytes.first, bytes.allSatisfy({ $0 == first }) { return "\(first)×\(bytes.count)" }
    return bytes.map { String($0) }.joined(separator: ",")
}

/// A datagram socket bound where the relay sends, read with the native protocol's plain form (KEY=value lines).
final class StandInJournald {
    struct Entry {
        var message: [UInt8] = []
        var fields: [String: [String]] = [:]
    }

    let directory: URL
    let path: String
    private var fd: CInt
    var descriptor: FileDescriptor { FileDescriptor(rawValue: fd) }

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("socket").path
        fd = try Self.bound(at: path)
    }

    private static func bound(at path: String) throws -> CInt {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw POSIXError(.EIO) }
        return fd
    }

    deinit {
        close(fd)
        try? FileManager.default.removeItem(at: directory)
    }

    func client() -> HandlerJournal? { HandlerJournal(path: path) }

    /// As journald restarting: the socket closed and another bound at the same path.
    func restart() throws {
        close(fd)
        unlink(path)
        fd = try Self.bound(at: path)
    }

    /// Every datagram waiting, as entries.
    func receive() -> [Entry] {
        var entries: [Entry] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return entries }
            var entry = Entry()
            for line in buffer[..<count].split(separator: 10, omittingEmptySubsequences: false).dropLast() {
                guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let key = String(decoding: line[..<equals], as: UTF8.self)
                let value = Array(line[(equals + 1)...])
                if key == "MESSAGE" {
                    entry.message = value
                } else {
                    entry.fields[key, default: []].append(String(decoding: value, as: UTF8.self))
                }
            }
            entries.append(entry)
        }
    }
}
