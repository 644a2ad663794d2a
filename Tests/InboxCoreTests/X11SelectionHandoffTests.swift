import Testing
@testable import InboxCore

/// `X11SelectionHandoff`: what inboxctl's X clipboard owner reads on its stdin, read back as it was written, and
/// refused whole when it is cut short, padded, or says more than it holds or than a handoff has.
@Suite("X11 selection handoff")
struct X11SelectionHandoffTests {
    typealias Handoff = X11SelectionHandoff

    static let atoms = X11SelectionServer.Atoms(selection: 100, targets: 101, incr: 102)
    static let window: UInt32 = 0x0040_0000

    /// A SelectionRequest for `target`, as the server sends it.
    static func request(target: UInt32) -> [UInt8] {
        var event = [UInt8](repeating: 0, count: 32)
        event[0] = 30
        for (offset, value) in [(4, UInt32(9)), (8, window), (12, 0x0060_0001), (16, 100), (20, target), (24, 500)] {
            for byte in 0..<4 { event[offset + byte] = UInt8((value >> UInt32(byte * 8)) & 0xFF) }
        }
        return event
    }

    static let handoff = X11SelectionHandoff(
        server: X11SelectionServer(window: window, atoms: atoms,
                                   offered: [.init(atom: 200, bytes: Array("file:///tmp/a.png\r\n".utf8)),
                                             .init(atom: 201, bytes: [0x89, 0x50, 0x4E, 0x47, 0, 1, 2]),
                                             .init(atom: 202, bytes: [])],
                                   partBytes: 4096),
        events: [request(target: 201), request(target: 101)])

    /// The header's words as `encoded()` writes them, then `rest`.
    static func bytes(window: UInt32 = window, selection: UInt32 = 100, targets: UInt32 = 101, incr: UInt32 = 102,
                      part: UInt32 = 4096, targetCount: UInt32 = 0, eventCount: UInt32 = 0,
                      _ rest: [UInt8] = []) -> [UInt8] {
        var bytes = X11Bytes()
        bytes.bytes = Array("IX11SEL1".utf8)
        for word in [window, selection, targets, incr, part, targetCount, eventCount] { bytes.u32(word) }
        return bytes.bytes + rest
    }

    static func words(_ values: UInt32...) -> [UInt8] {
        var bytes = X11Bytes()
        for value in values { bytes.u32(value) }
        return bytes.bytes
    }

    @Test func aHandoffReadsBackAsItWasAndServesTheSame() throws {
        let encoded = Self.handoff.encoded()
        #expect(encoded.count == Self.handoff.byteCount)
        #expect(Array(encoded.prefix(8)) == Array("IX11SEL1".utf8))
        let read = try X11SelectionHandoff.parse(encoded).get()
        #expect(read == Self.handoff)
        #expect(read.server.partBytes == 4096)

        // The server read back answers as the one written would, the events handed over first.
        var written = Self.handoff.server, served = read.server
        for event in read.events + [Self.request(target: 200), Self.request(target: 202)] {
            let message = X11Protocol.parseMessage(event)
            let (expected, answered) = (written.handle(message), served.handle(message))
            #expect(answered.requests == expected.requests)
            #expect(answered.lost == expected.lost)
        }

        // Nothing offered and nothing pending is a handoff too, and the largest part size is one.
        let empty = X11SelectionHandoff(server: X11SelectionServer(window: 7, atoms: Self.atoms, offered: [],
                                                                   partBytes: 64 << 10), events: [])
        #expect(try X11SelectionHandoff.parse(empty.encoded()).get() == empty)
        #expect(empty.encoded() == Self.bytes(window: 7, part: 64 << 10))
    }

    @Test func aHandoffCutShortAnywhereIsRefused() {
        let encoded = Self.handoff.encoded()
        for count in 0..<encoded.count {
            let result = X11SelectionHandoff.parse(Array(encoded.prefix(count)))
            #expect(result == .failure(count < 8 ? .notAHandoff : .truncated), "\(count) of \(encoded.count) bytes")
        }
    }

    @Test func bytesAfterTheLastEventAreRefused() {
        #expect(Handoff.parse(Self.handoff.encoded() + [0]) == .failure(.trailingBytes(1)))
        #expect(Handoff.parse(Self.bytes([1, 2, 3, 4])) == .failure(.trailingBytes(4)))
    }

    @Test func anotherFormatOrVersionIsRefused() {
        var encoded = Self.handoff.encoded()
        encoded[7] = UInt8(ascii: "2")
        #expect(Handoff.parse(encoded) == .failure(.notAHandoff))
        #expect(Handoff.parse(Array("not a handoff at all, but long enough".utf8)) == .failure(.notAHandoff))
    }

    @Test func countsAndLengthsPastTheBoundsOrTheBytesAreRefused() {
        // More targets or events than a handoff has: refused before anything is read for them.
        let targets = UInt32(X11SelectionHandoff.maximumTargets), events = UInt32(X11SelectionHandoff.maximumEvents)
        #expect(Handoff.parse(Self.bytes(targetCount: targets + 1)) == .failure(.tooMany("targets", targets + 1)))
        #expect(Handoff.parse(Self.bytes(targetCount: .max)) == .failure(.tooMany("targets", .max)))
        #expect(Handoff.parse(Self.bytes(eventCount: events + 1)) == .failure(.tooMany("events", events + 1)))
        #expect(Handoff.parse(Self.bytes(eventCount: .max)) == .failure(.tooMany("events", .max)))
        // Within the bounds, but more than the bytes hold.
        #expect(Handoff.parse(Self.bytes(targetCount: targets)) == .failure(.truncated))
        #expect(Handoff.parse(Self.bytes(eventCount: events)) == .failure(.truncated))
        // A target's length past its end, up to the largest a word holds (no allocation, no overflow).
        for length: UInt32 in [1, 4097, UInt32(X11SelectionHandoff.maximumBytes), .max] {
            #expect(Handoff.parse(Self.bytes(targetCount: 1, Self.words(200, length))) == .failure(.truncated),
                    "length \(length)")
        }
        #expect(Handoff.parse(Self.bytes(targetCount: 1, Self.words(200, 2) + [1])) == .failure(.truncated))
        #expect(Handoff.parse(Self.bytes(targetCount: 1, Self.words(200, 1) + [1]))
                == .success(X11SelectionHandoff(server: X11SelectionServer(window: Self.window, atoms: Self.atoms,
                                                                           offered: [.init(atom: 200, bytes: [1])],
                                                                           partBytes: 4096), events: [])))
    }

    @Test func valuesOutOfRangeAreRefused() {
        #expect(Handoff.parse(Self.bytes(window: 0)) == .failure(.invalid("window")))
        #expect(Handoff.parse(Self.bytes(selection: 0)) == .failure(.invalid("atom")))
        #expect(Handoff.parse(Self.bytes(targets: 0)) == .failure(.invalid("atom")))
        #expect(Handoff.parse(Self.bytes(incr: 0)) == .failure(.invalid("atom")))
        for part: UInt32 in [0, 2, 6, 65540, .max] {
            #expect(Handoff.parse(Self.bytes(part: part)) == .failure(.invalid("part size")), "\(part)")
        }
        #expect(Handoff.parse(Self.bytes(part: 4)) != .failure(.invalid("part size")))
        #expect(Handoff.parse(Self.bytes(targetCount: 1, Self.words(0, 0))) == .failure(.invalid("target atom")))
        // A reply or an error is no event to hand over.
        for first: UInt8 in [0, 1, 0x81] {
            var event = Self.request(target: 201)
            event[0] = first
            #expect(Handoff.parse(Self.bytes(eventCount: 1, event)) == .failure(.invalid("event")))
            #expect(!X11SelectionHandoff.carries(event))
        }
        #expect(X11SelectionHandoff.carries(Self.request(target: 201)))
        #expect(!X11SelectionHandoff.carries(Self.request(target: 201) + [0, 0, 0, 0]))
    }
}
