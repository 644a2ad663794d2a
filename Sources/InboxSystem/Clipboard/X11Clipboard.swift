import InboxCore

/// The X CLIPBOARD selection owned with every target offered at once (`X11SelectionServer`): the owner is a window of
/// a connection of our own, which a process spawned for it serves in the background until another client takes the
/// clipboard, as xclip serves one target. (xclip holds one value and gives it for whatever target is asked, so two
/// targets with different bytes need an owner that tells them apart.) The process is inboxctl itself, spawned as
/// `X11ClipboardServer` with the connection as its fd 3 and on its stdin what the server needs
/// (`X11SelectionHandoff`); never forked, as no process of the project's is: the child of a fork has only the
/// forking thread, and a lock another thread of the runtime held stays held in it.
enum X11Clipboard {
    /// Takes the CLIPBOARD of `display` with `targets` (MIME type and bytes, in the order TARGETS lists them), and
    /// leaves a process of its own serving it; returns once the selection is ours.
    static func copy(_ targets: [(type: String, bytes: [UInt8])], display: String) -> Result<Void, ClipboardError> {
        precondition(targets.count <= X11SelectionHandoff.maximumTargets, "more targets than the clipboard offers")
        let parsed: X11Display
        switch X11Display.parse(display) {
        case .success(let found): parsed = found
        case .failure(let refusal): return .failure(.unsupportedDisplay(refusal.reason))
        }
        let connection: X11Connection, setup: X11Setup
        do { (connection, setup) = try X11Connection.open(display: parsed, authority: authority(for: parsed)) } catch {
            return .failure(error)
        }
        defer { connection.close() }
        let server: X11SelectionServer
        do throws(ClipboardError) {
            let atoms = X11SelectionServer.Atoms(selection: try connection.atom("CLIPBOARD"),
                                                 targets: try connection.atom("TARGETS"),
                                                 incr: try connection.atom("INCR"))
            var offered: [X11SelectionServer.Target] = []
            for target in targets { offered.append(.init(atom: try connection.atom(target.type), bytes: target.bytes)) }
            // The first of the resource ids the server gave this client.
            let window = setup.resourceIDBase
            try connection.send(X11Protocol.createWindow(window, parent: setup.root))
            try connection.send(X11Protocol.setSelectionOwner(window, selection: atoms.selection))
            let owner = try connection.reply(to: X11Protocol.getSelectionOwner(atoms.selection))
            guard owner.count >= 12, owner[8..<12].elementsEqual([0, 1, 2, 3].map { UInt8((window >> ($0 * 8)) & 0xFF) })
            else {
                return .failure(.notOwned(display: display))
            }
            server = X11SelectionServer(window: window, atoms: atoms, offered: offered,
                                        partBytes: X11SelectionServer.partBytes(
                                            maximumRequestBytes: setup.maximumRequestBytes))
        } catch {
            return .failure(error)
        }
        // The selection is ours: a process of its own serves it from here, as the caller goes on (or exits). A
        // request that came before the owner was checked was read with the reply: it goes along, for the server.
        let events = Array(connection.pendingEvents.filter(X11SelectionHandoff.carries)
            .prefix(X11SelectionHandoff.maximumEvents))
        let handoff = X11SelectionHandoff(server: server, events: events)
        guard handoff.byteCount <= X11SelectionHandoff.maximumBytes else {
            let size = targets.reduce(0) { $0 + $1.bytes.count }
            return .failure(.tooLarge(Int64(size), limit: DesktopClipboard.maximumBytes))
        }
        return X11ClipboardServer.start(handoff, connection: connection.socket, display: display)
    }

    /// The `.Xauthority` cookie for `display` ($XAUTHORITY, else ~/.Xauthority), when there is one: a server
    /// started without access control takes a connection without.
    static func authority(for display: X11Display) -> X11AuthorityEntry? {
        let environment = CurrentProcess.environmentVariables
        guard let path = environment["XAUTHORITY"].flatMap({ $0.isEmpty ? nil : $0 })
            ?? environment["HOME"].map({ $0 + "/.Xauthority" }),
              case .success(let bytes) = readBounded(path, limit: 1 << 20) else { return nil }
        return X11AuthorityEntry.cookie(in: X11AuthorityEntry.parse(bytes), display: display.number,
                                        hostname: sys_hostname() ?? "")
    }
}

/// Why the clipboard could not be given the document; `description` is the sentence after "cannot copy FILE: ".
public enum ClipboardError: Error, Sendable, CustomStringConvertible {
    /// The display's server could not be reached.
    case unreachable(display: String, SystemError)
    /// The server refused the connection: its reason.
    case refused(display: String, reason: String)
    /// `DISPLAY` names no display reached here (one over the network, or none): why.
    case unsupportedDisplay(String)
    /// The connection ended or failed in the middle.
    case connectionLost(SystemError?)
    /// The server answered a request with an error: its name and the request's opcode.
    case protocolError(String, UInt8)
    /// The selection was not ours after we took it.
    case notOwned(display: String)
    /// The clipboard's program is not installed: its name and the Debian package that has it.
    case missingTool(String, package: String)
    /// The clipboard's program failed: its name and what it said.
    case toolFailed(String, String)
    /// The document is larger than the clipboard takes.
    case tooLarge(Int64, limit: Int)
    case system(SystemError)

    public var description: String {
        switch self {
        case .unreachable(let display, let error): "cannot reach the X display \(display): \(error)"
        case .refused(let display, let reason): "the X display \(display) refused the connection: \(reason)"
        case .unsupportedDisplay(let reason): reason
        case .connectionLost(let error?): "the X server's connection failed: \(error)"
        case .connectionLost(nil): "the X server closed the connection"
        case .protocolError(let name, let opcode): "the X server answered request \(opcode) with \(name)"
        case .notOwned(let display): "another program kept the clipboard of \(display)"
        case .missingTool(let name, let package): "\(name) is not installed; install \(package)"
        case .toolFailed(let name, let said): "\(name) failed" + (said.isEmpty ? "" : ": \(said)")
        case .tooLarge(let size, let limit):
            "it is \(size) bytes, more than the clipboard takes (\(limit >> 20) MiB); copy it into a directory instead"
        case .system(let error): "\(error)"
        }
    }
}
