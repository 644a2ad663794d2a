/// The part of the X Window System protocol (X11, "X Window System Protocol", X.Org) that owning the CLIPBOARD
/// selection takes: the connection set-up, six requests, and the replies, errors and events that come back, as bytes.
/// Everything is little-endian: the client says so in its first byte. No I/O here: InboxSystem's `X11Connection`
/// sends and reads them.
public enum X11Protocol {
    /// Predefined atoms (the protocol's appendix B).
    public static let atomATOM: UInt32 = 4
    public static let atomINTEGER: UInt32 = 19
    /// `CurrentTime` in requests; `None` for a window, atom or property.
    public static let currentTime: UInt32 = 0
    public static let none: UInt32 = 0
    /// `PropertyChangeMask`: the PropertyNotify events of a window.
    public static let propertyChangeMask: UInt32 = 1 << 22

    /// The event codes read here (the high bit marks an event sent with SendEvent).
    public enum EventCode: UInt8 {
        case propertyNotify = 28, selectionClear = 29, selectionRequest = 30, selectionNotify = 31
    }

    /// The set-up request: protocol 11.0 and the authorization (`MIT-MAGIC-COOKIE-1` and its cookie, or none).
    public static func setupRequest(authorizationName: [UInt8], authorizationData: [UInt8]) -> [UInt8] {
        var bytes = X11Bytes()
        bytes.u8(0x6C)  // 'l': little-endian
        bytes.u8(0)
        bytes.u16(11)
        bytes.u16(0)
        bytes.u16(UInt16(authorizationName.count))
        bytes.u16(UInt16(authorizationData.count))
        bytes.u16(0)
        bytes.padded(authorizationName)
        bytes.padded(authorizationData)
        return bytes.bytes
    }

    /// InternAtom (16): the atom named `name`, made if missing.
    public static func internAtom(_ name: String) -> [UInt8] {
        let text = Array(name.utf8)
        var bytes = X11Bytes()
        bytes.header(16, 0, words: 2 + (text.count + 3) / 4)
        bytes.u16(UInt16(text.count))
        bytes.u16(0)
        bytes.padded(text)
        return bytes.bytes
    }

    /// CreateWindow (1): an InputOnly window of 1 × 1 at 0,0 under `parent`, no attributes: a selection's owner needs
    /// a window, never a visible one.
    public static func createWindow(_ window: UInt32, parent: UInt32) -> [UInt8] {
        var bytes = X11Bytes()
        bytes.header(1, 0, words: 8)
        bytes.u32(window)
        bytes.u32(parent)
        bytes.u16(0)  // x
        bytes.u16(0)  // y
        bytes.u16(1)  // width
        bytes.u16(1)  // height
        bytes.u16(0)  // border width
        bytes.u16(2)  // InputOnly
        bytes.u32(0)  // visual: CopyFromParent
        bytes.u32(0)  // no attributes
        return bytes.bytes
    }

    /// ChangeWindowAttributes (2) setting only this client's event mask on `window`.
    public static func selectEvents(_ window: UInt32, mask: UInt32) -> [UInt8] {
        var bytes = X11Bytes()
        bytes.header(2, 0, words: 4)
        bytes.u32(window)
        bytes.u32(0x800)  // CWEventMask
        bytes.u32(mask)
        return bytes.bytes
    }

    /// ChangeProperty (18), replacing `property` of `window` with `data`, of `type` in units of `format` bits (8 or
    /// 32; `data` holds whole units).
    public static func changeProperty(_ window: UInt32, property: UInt32, type: UInt32, format: UInt8,
                                      data: ArraySlice<UInt8>) -> [UInt8] {
        var bytes = X11Bytes()
        bytes.header(18, 0, words: 6 + (data.count + 3) / 4)
        bytes.u32(window)
        bytes.u32(property)
        bytes.u32(type)
        bytes.u8(format)
        bytes.u8(0)
        bytes.u16(0)
        bytes.u32(UInt32(data.count / (Int(format) / 8)))
        bytes.padded(Array(data))
        return bytes.bytes
    }

    /// ChangeProperty with 32-bit values (atoms, a size).
    public static func changeProperty(_ window: UInt32, property: UInt32, type: UInt32, values: [UInt32]) -> [UInt8] {
        var data = X11Bytes()
        for value in values { data.u32(value) }
        return changeProperty(window, property: property, type: type, format: 32, data: data.bytes[...])
    }

    /// SetSelectionOwner (22).
    public static func setSelectionOwner(_ owner: UInt32, selection: UInt32, time: UInt32 = currentTime) -> [UInt8] {
        var bytes = X11Bytes()
        bytes.header(22, 0, words: 4)
        bytes.u32(owner)
        bytes.u32(selection)
        bytes.u32(time)
        return bytes.bytes
    }

    /// GetSelectionOwner (23): its reply holds the owner's window.
    public static func getSelectionOwner(_ selection: UInt32) -> [UInt8] {
        var bytes = X11Bytes()
        bytes.header(23, 0, words: 2)
        bytes.u32(selection)
        return bytes.bytes
    }

    /// SendEvent (25) of a SelectionNotify to `requestor`: the answer to its SelectionRequest, with `property` where
    /// the value was put, or None when the request is refused.
    public static func selectionNotify(requestor: UInt32, selection: UInt32, target: UInt32, property: UInt32,
                                       time: UInt32) -> [UInt8] {
        var bytes = X11Bytes()
        bytes.header(25, 0, words: 11)
        bytes.u32(requestor)
        bytes.u32(0)  // event mask: to the client that made the window
        bytes.u8(EventCode.selectionNotify.rawValue)
        bytes.u8(0)
        bytes.u16(0)
        bytes.u32(time)
        bytes.u32(requestor)
        bytes.u32(selection)
        bytes.u32(target)
        bytes.u32(property)
        bytes.padded([UInt8](repeating: 0, count: 8))
        return bytes.bytes
    }

    /// What a server's first 8 bytes say: how many more to read for the rest of its answer to the set-up.
    public static func setupLength(_ header: [UInt8]) -> Int {
        header.count < 8 ? 0 : Int(X11Bytes.u16(header, 6)) * 4
    }

    /// The server's answer to the set-up (its 8 bytes, then the rest): what the connection needs, or the reason it
    /// gave for refusing.
    public static func parseSetup(_ reply: [UInt8]) -> Result<X11Setup, X11Refusal> {
        guard reply.count >= 8 else { return .failure(X11Refusal(reason: "the server's answer was cut short")) }
        switch reply[0] {
        case 1: break
        case 0:
            let length = Int(reply[1])
            return .failure(X11Refusal(reason: text(reply, from: 8, count: length)))
        default:
            return .failure(X11Refusal(reason: text(reply, from: 8, count: reply.count - 8)
                                           + " (the server asks for further authentication)"))
        }
        guard reply.count >= 40 else { return .failure(X11Refusal(reason: "the server's answer was cut short")) }
        let vendorLength = Int(X11Bytes.u16(reply, 24))
        let formats = Int(reply[29])
        let screens = Int(reply[28])
        let screenStart = 40 + (vendorLength + 3) / 4 * 4 + 8 * formats
        guard screens > 0, reply.count >= screenStart + 4 else {
            return .failure(X11Refusal(reason: "the server describes no screen"))
        }
        return .success(X11Setup(resourceIDBase: X11Bytes.u32(reply, 12), resourceIDMask: X11Bytes.u32(reply, 16),
                                 maximumRequestBytes: Int(X11Bytes.u16(reply, 26)) * 4,
                                 root: X11Bytes.u32(reply, screenStart)))
    }

    /// How many bytes follow a 32-byte reply or event header (a reply's or a generic event's length).
    public static func extraLength(_ header: [UInt8]) -> Int {
        guard header.count >= 8 else { return 0 }
        if header[0] == 1 || header[0] & 0x7F == 35 { return Int(X11Bytes.u32(header, 4)) * 4 }
        return 0
    }

    /// A whole message from the server: a reply, an error or an event.
    public static func parseMessage(_ bytes: [UInt8]) -> X11Message {
        guard bytes.count >= 32 else { return .other }
        let sequence = X11Bytes.u16(bytes, 2)
        switch bytes[0] {
        case 0: return .error(code: bytes[1], sequence: sequence, majorOpcode: bytes[10])
        case 1: return .reply(sequence: sequence, bytes: bytes)
        default: break
        }
        switch EventCode(rawValue: bytes[0] & 0x7F) {
        case .selectionRequest?:
            return .selectionRequest(X11SelectionRequest(
                time: X11Bytes.u32(bytes, 4), owner: X11Bytes.u32(bytes, 8), requestor: X11Bytes.u32(bytes, 12),
                selection: X11Bytes.u32(bytes, 16), target: X11Bytes.u32(bytes, 20), property: X11Bytes.u32(bytes, 24)))
        case .selectionClear?:
            return .selectionClear(owner: X11Bytes.u32(bytes, 8), selection: X11Bytes.u32(bytes, 12))
        case .propertyNotify?:
            return .propertyNotify(window: X11Bytes.u32(bytes, 4), atom: X11Bytes.u32(bytes, 8),
                                   deleted: bytes[16] == 1)
        default:
            return .other
        }
    }

    /// The error codes a person may meet, named as the protocol names them.
    public static func errorName(_ code: UInt8) -> String {
        let names = [1: "BadRequest", 2: "BadValue", 3: "BadWindow", 5: "BadAtom", 10: "BadAccess", 11: "BadAlloc",
                     14: "BadIDChoice", 16: "BadLength"]
        return names[Int(code)] ?? "error \(code)"
    }

    private static func text(_ bytes: [UInt8], from start: Int, count: Int) -> String {
        let end = min(bytes.count, start + max(0, count))
        guard start < end else { return "no reason given" }
        let visible = bytes[start..<end].filter { $0 >= 0x20 && $0 < 0x7F }
        let reason = String(decoding: visible, as: UTF8.self)
        return reason.isEmpty ? "no reason given" : reason
    }
}

/// What the connection needs of the server's set-up: how to make resource ids, the largest request, and the first
/// screen's root window.
public struct X11Setup: Sendable, Equatable {
    public let resourceIDBase: UInt32
    public let resourceIDMask: UInt32
    public let maximumRequestBytes: Int
    public let root: UInt32

    public init(resourceIDBase: UInt32, resourceIDMask: UInt32, maximumRequestBytes: Int, root: UInt32) {
        self.resourceIDBase = resourceIDBase
        self.resourceIDMask = resourceIDMask
        self.maximumRequestBytes = maximumRequestBytes
        self.root = root
    }
}

/// The server's reason for refusing a connection.
public struct X11Refusal: Error, Sendable, Equatable {
    public let reason: String
}

/// A SelectionRequest event: `requestor` asks for the selection converted to `target`, into its `property`.
public struct X11SelectionRequest: Sendable, Equatable {
    public let time: UInt32
    public let owner: UInt32
    public let requestor: UInt32
    public let selection: UInt32
    public let target: UInt32
    public let property: UInt32

    public init(time: UInt32, owner: UInt32, requestor: UInt32, selection: UInt32, target: UInt32, property: UInt32) {
        self.time = time
        self.owner = owner
        self.requestor = requestor
        self.selection = selection
        self.target = target
        self.property = property
    }
}

/// One message from the server, as far as owning a selection cares.
public enum X11Message: Sendable, Equatable {
    /// A request's reply, whole (its 32 bytes and what follows).
    case reply(sequence: UInt16, bytes: [UInt8])
    case error(code: UInt8, sequence: UInt16, majorOpcode: UInt8)
    case selectionRequest(X11SelectionRequest)
    /// Another client took the selection.
    case selectionClear(owner: UInt32, selection: UInt32)
    /// `atom` of `window` changed; `deleted` when it was deleted (a requestor took a part of an INCR transfer).
    case propertyNotify(window: UInt32, atom: UInt32, deleted: Bool)
    /// Anything else: ignored.
    case other
}

/// One `.Xauthority` entry (libXau's file format: big-endian lengths, each field counted).
public struct X11AuthorityEntry: Sendable, Equatable {
    /// 256 FamilyLocal (the address is a host name), 65535 FamilyWild, 0 Internet, ...
    public let family: UInt16
    public let address: [UInt8]
    /// The display number, as text ("0"); empty matches any.
    public let number: String
    public let name: [UInt8]
    public let data: [UInt8]

    public init(family: UInt16, address: [UInt8], number: String, name: [UInt8], data: [UInt8]) {
        self.family = family
        self.address = address
        self.number = number
        self.name = name
        self.data = data
    }

    /// Every whole entry in an `.Xauthority` file's bytes; a cut last entry is dropped.
    public static func parse(_ bytes: [UInt8]) -> [X11AuthorityEntry] {
        var entries: [X11AuthorityEntry] = []
        var index = 0
        func field() -> [UInt8]? {
            guard index + 2 <= bytes.count else { return nil }
            let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            guard index + 2 + length <= bytes.count else { return nil }
            defer { index += 2 + length }
            return Array(bytes[(index + 2)..<(index + 2 + length)])
        }
        while index + 2 <= bytes.count {
            let family = UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
            index += 2
            guard let address = field(), let number = field(), let name = field(), let data = field() else { break }
            entries.append(X11AuthorityEntry(family: family, address: address,
                                             number: String(decoding: number, as: UTF8.self), name: name, data: data))
        }
        return entries
    }

    /// The MIT-MAGIC-COOKIE-1 entry for local display `number` of host `hostname`, as libXau picks one: a local
    /// entry for this host or a wildcard, for this display or any, the first in the file.
    public static func cookie(in entries: [X11AuthorityEntry], display number: Int,
                              hostname: String) -> X11AuthorityEntry? {
        let cookie = Array("MIT-MAGIC-COOKIE-1".utf8)
        return entries.first { entry in
            entry.name == cookie && (entry.number.isEmpty || entry.number == String(number))
                && (entry.family == 65535 || (entry.family == 256 && entry.address == Array(hostname.utf8)))
        }
    }
}

/// A display as `DISPLAY` names it: only local ones (`:0`, `:1.0`, `unix:0`) are reached, through the server's Unix
/// socket `/tmp/.X11-unix/X<number>`.
public struct X11Display: Sendable, Equatable {
    public let number: Int

    /// The display `DISPLAY` names, or nil with why not (a display over the network, or no display name).
    public static func parse(_ name: String) -> Result<X11Display, X11Refusal> {
        guard let colon = name.lastIndex(of: ":") else {
            return .failure(X11Refusal(reason: "DISPLAY=\(name) names no display (':0', ':1.0')"))
        }
        let host = name[..<colon]
        guard host.isEmpty || host == "unix" else {
            return .failure(X11Refusal(reason: "DISPLAY=\(name) is a display over the network; only a local display "
                                           + "(':N') is reached"))
        }
        let rest = name[name.index(after: colon)...]
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        let tail = rest.dropFirst(digits.count), screen = tail.dropFirst()
        guard let number = Int(digits), number < 65536,
              tail.isEmpty || (tail.first == "." && !screen.isEmpty && screen.allSatisfy { $0.isASCII && $0.isNumber }) else {
            return .failure(X11Refusal(reason: "DISPLAY=\(name) names no display (':0', ':1.0')"))
        }
        return .success(X11Display(number: number))
    }

    /// Its socket's path; Linux servers also listen on the abstract name with a NUL before it.
    public var socketPath: String { "/tmp/.X11-unix/X\(number)" }
}

/// A little-endian byte writer for requests.
struct X11Bytes {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(value & 0xFF))
        bytes.append(UInt8(value >> 8))
    }

    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }

    /// `data`, then zeros to a multiple of 4 bytes.
    mutating func padded(_ data: [UInt8]) {
        bytes += data
        bytes += [UInt8](repeating: 0, count: (4 - data.count % 4) % 4)
    }

    /// A request's first word: its opcode, one byte of its own, and its length in 4-byte words.
    mutating func header(_ opcode: UInt8, _ detail: UInt8, words: Int) {
        u8(opcode)
        u8(detail)
        u16(UInt16(truncatingIfNeeded: words))
    }

    static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }

    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
}
