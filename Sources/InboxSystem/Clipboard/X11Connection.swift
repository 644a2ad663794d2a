import InboxCore

/// A connection to a local X server, speaking the protocol's bytes (`X11Protocol`) over its Unix socket: set up with
/// the `.Xauthority` cookie for the display, when there is one; requests sent in order; messages read one at a time.
/// A blocking socket: the connection is used by one process that waits for nothing else. The process that made it
/// may hand it to another (X11Clipboard to the selection's owner it spawns): the socket, and the events read but not
/// yet taken (`pendingEvents`).
final class X11Connection {
    let socket: FileDescriptor
    /// The number of the last request sent (the protocol counts them, from 1, modulo 2^16).
    private var sequence: UInt16 = 0
    /// Messages read while waiting for a reply, in order, as their bytes.
    private var queued: [[UInt8]]

    /// A connection over `socket`, set up already; `events` were read from it first (a handed-over connection's).
    init(socket: FileDescriptor, events: [[UInt8]] = []) {
        self.socket = socket
        queued = events
    }

    /// Connects to `display`: its socket's path, else its abstract name; then the set-up with `authority`'s cookie.
    /// The connection, and what the server's set-up said.
    static func open(display: X11Display,
                     authority: X11AuthorityEntry?) throws(ClipboardError) -> (X11Connection, X11Setup) {
        let name = ":\(display.number)"
        let fd = sys_unix_stream_socket()
        guard fd >= 0 else { throw .system(SystemError("socket", errno: .current)) }
        let socket = FileDescriptor(rawValue: fd)
        if sys_connect_unix_name(fd, display.socketPath, abstract: false) != 0 {
            let error = Errno.current
            if sys_connect_unix_name(fd, display.socketPath, abstract: true) != 0 {
                socket.close()
                throw .unreachable(display: name, SystemError("connect", path: display.socketPath, errno: error))
            }
        }
        do throws(ClipboardError) {
            try Self.write(socket, X11Protocol.setupRequest(authorizationName: authority?.name ?? [],
                                                            authorizationData: authority?.data ?? []))
            let header = try Self.read(socket, count: 8)
            let reply = header + (try Self.read(socket, count: X11Protocol.setupLength(header)))
            switch X11Protocol.parseSetup(reply) {
            case .success(let setup): return (X11Connection(socket: socket), setup)
            case .failure(let refusal): throw ClipboardError.refused(display: name, reason: refusal.reason)
            }
        } catch {
            socket.close()
            throw error
        }
    }

    func close() { socket.close() }

    /// The events read while waiting for replies and not yet taken by `next()`, as their bytes: what goes with the
    /// connection when it is handed over.
    var pendingEvents: [[UInt8]] { queued }

    /// Sends one request.
    func send(_ request: [UInt8]) throws(ClipboardError) {
        sequence &+= 1
        try Self.write(socket, request)
    }

    /// Sends a request that has a reply, and waits for it; an error for it, or for any request before it, is thrown.
    func reply(to request: [UInt8]) throws(ClipboardError) -> [UInt8] {
        try send(request)
        let wanted = sequence
        while true {
            let bytes = try read()
            switch X11Protocol.parseMessage(bytes) {
            case .reply(let number, let bytes) where number == wanted: return bytes
            case .error(let code, _, let opcode): throw ClipboardError.protocolError(X11Protocol.errorName(code), opcode)
            case .reply: continue
            default: queued.append(bytes)
            }
        }
    }

    /// The atom named `name` (InternAtom).
    func atom(_ name: String) throws(ClipboardError) -> UInt32 {
        let bytes = try reply(to: X11Protocol.internAtom(name))
        return UInt32(bytes[8]) | UInt32(bytes[9]) << 8 | UInt32(bytes[10]) << 16 | UInt32(bytes[11]) << 24
    }

    /// The next message: one read while waiting for a reply first, else the next from the server.
    func next() throws(ClipboardError) -> X11Message {
        if !queued.isEmpty { return X11Protocol.parseMessage(queued.removeFirst()) }
        return X11Protocol.parseMessage(try read())
    }

    /// The next message's bytes, whole.
    private func read() throws(ClipboardError) -> [UInt8] {
        let header = try Self.read(socket, count: 32)
        let extra = X11Protocol.extraLength(header)
        return extra == 0 ? header : header + (try Self.read(socket, count: extra))
    }

    private static func write(_ socket: FileDescriptor, _ bytes: [UInt8]) throws(ClipboardError) {
        if let error = socket.write(all: bytes) { throw .connectionLost(SystemError("write", errno: error)) }
    }

    /// Exactly `count` bytes; the end of the connection before them is an error.
    private static func read(_ socket: FileDescriptor, count: Int) throws(ClipboardError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let start = filled
            let result: Result<Int, Errno> = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) -> Int in
                    try socket.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[start...]))
                }
            }
            switch result {
            case .success(0): throw .connectionLost(nil)
            case .success(let n): filled += n
            case .failure(let error): throw .connectionLost(SystemError("read", errno: error))
            }
        }
        return bytes
    }
}
