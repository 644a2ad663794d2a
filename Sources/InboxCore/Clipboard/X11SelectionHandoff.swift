/// What the process that took an X selection hands the process that serves it: InboxSystem's `X11Clipboard` spawns
/// inboxctl as the selection's owner (`X11ClipboardServer`) with this on its stdin and the connection as fd 3. It is
/// the server's state before any request (`X11SelectionServer`: the window, the atoms, the part size and the targets
/// offered) and the events the connection had already read, which are the server's to answer. A binary encoding of
/// our own, little-endian:
///
///     "IX11SEL1"                            8 bytes: what it is, and its version
///     window, selection, TARGETS, INCR      4 × u32, none of them 0 (None)
///     part size                             u32, 4...65536, a multiple of 4
///     targets, events                       2 × u32: how many of each, at most `maximumTargets`, `maximumEvents`
///     each target: atom, length, bytes      u32 (not 0), u32, that many bytes
///     each event                            32 bytes, an event's (not a reply's or an error's)
///
/// and nothing after it; at most `maximumBytes` in all. `parse` refuses anything else whole: a handoff cut short or
/// with bytes left over, a count or a length past what is there or past the bounds, a value out of range.
public struct X11SelectionHandoff: Sendable, Equatable {
    public let window: UInt32
    public let atoms: X11SelectionServer.Atoms
    /// The largest part put in one request (`X11SelectionServer.partBytes`).
    public let partBytes: Int
    public let offered: [X11SelectionServer.Target]
    /// Events read from the connection before the handoff, in order, each 32 bytes (`carries`).
    public let events: [[UInt8]]

    /// The most bytes a handoff has: the clipboard's 256 MiB (InboxSystem's `DesktopClipboard.maximumBytes`) and
    /// room for the rest (a `text/uri-list`, the header, the events).
    public static let maximumBytes = (256 << 20) + (1 << 20)
    /// The most targets offered (the clipboard offers two).
    public static let maximumTargets = 16
    /// The most events handed over (only requests that came before the ownership was checked: a few at most).
    public static let maximumEvents = 256
    /// The part sizes a server uses (`X11SelectionServer.partBytes(maximumRequestBytes:)`).
    public static let partSizes = 4...(64 << 10)

    static let magic = Array("IX11SEL1".utf8)
    /// The magic and the seven words after it.
    static let headerBytes = 8 + 7 * 4

    /// The handoff of `server`, which has answered nothing yet, and `events` (each one that `carries`).
    public init(server: X11SelectionServer, events: [[UInt8]]) {
        precondition(server.transfersInProgress == 0, "a server is handed over before it answers anything")
        self.init(window: server.window, atoms: server.atoms, partBytes: server.partBytes, offered: server.offered,
                  events: events)
    }

    init(window: UInt32, atoms: X11SelectionServer.Atoms, partBytes: Int, offered: [X11SelectionServer.Target],
         events: [[UInt8]]) {
        self.window = window
        self.atoms = atoms
        self.partBytes = partBytes
        self.offered = offered
        self.events = events
    }

    /// The server it describes, as it was handed over.
    public var server: X11SelectionServer {
        X11SelectionServer(window: window, atoms: atoms, offered: offered, partBytes: partBytes)
    }

    /// Whether a message read from the connection goes in a handoff: a whole 32-byte event. (A generic event, with
    /// more bytes, is none a selection's owner answers; replies and errors were the requests' that waited for them.)
    public static func carries(_ message: [UInt8]) -> Bool {
        message.count == 32 && message[0] & 0x7F >= 2
    }

    /// How many bytes `encoded()` makes: what the caller checks against `maximumBytes` before it encodes.
    public var byteCount: Int {
        Self.headerBytes + offered.reduce(0) { $0 + 8 + $1.bytes.count } + 32 * events.count
    }

    /// Its bytes, which `parse` reads back as they were. Within the bounds: at most `maximumTargets` targets and
    /// `maximumEvents` events (each one that `carries`), and `byteCount` at most `maximumBytes`.
    public func encoded() -> [UInt8] {
        precondition(offered.count <= Self.maximumTargets && events.count <= Self.maximumEvents,
                     "more targets or events than a handoff has")
        precondition(Self.partSizes.contains(partBytes) && partBytes % 4 == 0, "a part size no server uses")
        precondition(events.allSatisfy(Self.carries), "a handoff carries only whole events")
        precondition(byteCount <= Self.maximumBytes, "a handoff larger than one is read")
        var bytes = X11Bytes()
        bytes.bytes.reserveCapacity(byteCount)
        bytes.bytes += Self.magic
        for word in [window, atoms.selection, atoms.targets, atoms.incr, UInt32(partBytes), UInt32(offered.count),
                     UInt32(events.count)] {
            bytes.u32(word)
        }
        for target in offered {
            bytes.u32(target.atom)
            bytes.u32(UInt32(target.bytes.count))
            bytes.bytes += target.bytes
        }
        for event in events { bytes.bytes += event }
        return bytes.bytes
    }

    /// Why bytes are no handoff.
    public enum Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        /// More than `maximumBytes`: how many.
        case tooLarge(Int)
        /// Not the magic (another format, or another version of it).
        case notAHandoff
        /// It ends before what it announces.
        case truncated
        /// More targets or events than a handoff has: which, and how many it says.
        case tooMany(String, UInt32)
        /// A value out of range: which.
        case invalid(String)
        /// Bytes after the last event: how many.
        case trailingBytes(Int)

        public var description: String {
            switch self {
            case .tooLarge(let count): "\(count) bytes, more than a handoff has (\(X11SelectionHandoff.maximumBytes))"
            case .notAHandoff: "not an X selection's handoff"
            case .truncated: "cut short"
            case .tooMany(let what, let count): "\(count) \(what), more than a handoff has"
            case .invalid(let what): "invalid \(what)"
            case .trailingBytes(let count): "\(count) bytes after its end"
            }
        }
    }

    /// The handoff `bytes` hold, or why they hold none.
    public static func parse(_ bytes: [UInt8]) -> Result<X11SelectionHandoff, Malformed> {
        guard bytes.count <= maximumBytes else { return .failure(.tooLarge(bytes.count)) }
        guard bytes.count >= magic.count, bytes[0..<magic.count].elementsEqual(magic) else {
            return .failure(.notAHandoff)
        }
        guard bytes.count >= headerBytes else { return .failure(.truncated) }
        var index = magic.count
        // The next word; the caller made sure it is there.
        func word() -> UInt32 {
            defer { index += 4 }
            return X11Bytes.u32(bytes, index)
        }
        let window = word(), selection = word(), targets = word(), incr = word(), part = word()
        let targetCount = word(), eventCount = word()
        guard window != X11Protocol.none else { return .failure(.invalid("window")) }
        guard selection != X11Protocol.none, targets != X11Protocol.none, incr != X11Protocol.none else {
            return .failure(.invalid("atom"))
        }
        guard partSizes.contains(Int(part)), part % 4 == 0 else { return .failure(.invalid("part size")) }
        guard targetCount <= maximumTargets else { return .failure(.tooMany("targets", targetCount)) }
        guard eventCount <= maximumEvents else { return .failure(.tooMany("events", eventCount)) }
        var offered: [X11SelectionServer.Target] = []
        for _ in 0..<Int(targetCount) {
            guard bytes.count - index >= 8 else { return .failure(.truncated) }
            let atom = word(), length = Int(word())
            guard atom != X11Protocol.none else { return .failure(.invalid("target atom")) }
            // Compared with what is left, never added to the index first: a length near 2^32 cannot wrap.
            guard length <= bytes.count - index else { return .failure(.truncated) }
            offered.append(X11SelectionServer.Target(atom: atom, bytes: Array(bytes[index..<(index + length)])))
            index += length
        }
        var events: [[UInt8]] = []
        for _ in 0..<Int(eventCount) {
            guard bytes.count - index >= 32 else { return .failure(.truncated) }
            let event = Array(bytes[index..<(index + 32)])
            guard carries(event) else { return .failure(.invalid("event")) }
            events.append(event)
            index += 32
        }
        guard index == bytes.count else { return .failure(.trailingBytes(bytes.count - index)) }
        let atoms = X11SelectionServer.Atoms(selection: selection, targets: targets, incr: incr)
        return .success(X11SelectionHandoff(window: window, atoms: atoms, partBytes: Int(part), offered: offered,
                                            events: events))
    }
}
