/// What the owner of an X selection answers (ICCCM, "Peer-to-Peer Communication by Means of Selections"): each
/// SelectionRequest gets its target's bytes put on the requestor's property and a SelectionNotify, TARGETS gets the
/// list of targets, anything else a refusal; a value larger than one request goes in parts (the INCR protocol), the
/// next part each time the requestor deletes the property. A state machine over messages, with no I/O: InboxSystem's
/// `X11ClipboardServer` (inboxctl spawned as the owner) reads the messages and sends the requests it returns.
public struct X11SelectionServer: Sendable {
    /// One target offered: its atom and its bytes.
    public struct Target: Sendable, Equatable {
        public let atom: UInt32
        public let bytes: [UInt8]

        public init(atom: UInt32, bytes: [UInt8]) {
            self.atom = atom
            self.bytes = bytes
        }
    }

    /// The atoms the answers use besides the targets'.
    public struct Atoms: Sendable, Equatable {
        public let selection: UInt32
        public let targets: UInt32
        public let incr: UInt32

        public init(selection: UInt32, targets: UInt32, incr: UInt32) {
            self.selection = selection
            self.targets = targets
            self.incr = incr
        }
    }

    /// A value going in parts: the requestor's window and property, the target, and how much was sent.
    private struct Transfer: Sendable {
        let target: Int
        var offset: Int
        /// The last (empty) part went: the transfer ends when the requestor deletes it.
        var finished = false
    }

    public let window: UInt32
    public let atoms: Atoms
    public let offered: [Target]
    /// The largest part put in one request.
    public let partBytes: Int
    private var transfers: [Key: Transfer] = [:]

    private struct Key: Hashable, Sendable {
        let requestor: UInt32
        let property: UInt32
    }

    /// The server for the selection owned by `window`, offering `offered`; values over `partBytes` go in parts.
    public init(window: UInt32, atoms: Atoms, offered: [Target], partBytes: Int) {
        self.window = window
        self.atoms = atoms
        self.offered = offered
        self.partBytes = max(4, partBytes / 4 * 4)
    }

    /// The largest part for a server whose largest request is `maximumRequestBytes`: ChangeProperty's header is 24
    /// bytes; never more than 64 KiB, as other owners send them (a part is read whole by the requestor).
    public static func partBytes(maximumRequestBytes: Int) -> Int {
        min(64 << 10, max(4, maximumRequestBytes - 24))
    }

    /// Transfers in parts not yet finished.
    public var transfersInProgress: Int { transfers.count }

    /// What answering `message` takes: the requests to send, and whether the selection was lost (another client
    /// took it), after which nothing is served any more.
    public mutating func handle(_ message: X11Message) -> (requests: [[UInt8]], lost: Bool) {
        switch message {
        case .selectionRequest(let request):
            return (answer(request), false)
        case .selectionClear(let owner, let selection):
            return ([], owner == window && selection == atoms.selection)
        case .propertyNotify(let requestor, let property, let deleted):
            guard deleted else { return ([], false) }
            return (nextPart(requestor: requestor, property: property), false)
        case .reply, .error, .other:
            return ([], false)
        }
    }

    private mutating func answer(_ request: X11SelectionRequest) -> [[UInt8]] {
        // An obsolete requestor names no property: the target is the property (ICCCM 2.2).
        let property = request.property == X11Protocol.none ? request.target : request.property
        func notify(_ property: UInt32) -> [UInt8] {
            X11Protocol.selectionNotify(requestor: request.requestor, selection: request.selection,
                                        target: request.target, property: property, time: request.time)
        }
        guard request.selection == atoms.selection, request.owner == window else { return [notify(X11Protocol.none)] }
        if request.target == atoms.targets {
            return [X11Protocol.changeProperty(request.requestor, property: property, type: X11Protocol.atomATOM,
                                               values: [atoms.targets] + offered.map(\.atom)),
                    notify(property)]
        }
        guard let index = offered.firstIndex(where: { $0.atom == request.target }) else {
            return [notify(X11Protocol.none)]
        }
        let bytes = offered[index].bytes
        if bytes.count <= partBytes {
            return [X11Protocol.changeProperty(request.requestor, property: property, type: request.target, format: 8,
                                               data: bytes[...]),
                    notify(property)]
        }
        // INCR: the size as a lower bound, then a part at each deletion of the property. The requestor's property
        // changes are this client's events only once it asks for them.
        transfers[Key(requestor: request.requestor, property: property)] = Transfer(target: index, offset: 0)
        return [X11Protocol.selectEvents(request.requestor, mask: X11Protocol.propertyChangeMask),
                X11Protocol.changeProperty(request.requestor, property: property, type: atoms.incr,
                                           values: [UInt32(clamping: bytes.count)]),
                notify(property)]
    }

    private mutating func nextPart(requestor: UInt32, property: UInt32) -> [[UInt8]] {
        let key = Key(requestor: requestor, property: property)
        guard var transfer = transfers[key] else { return [] }
        if transfer.finished {
            transfers[key] = nil
            return [X11Protocol.selectEvents(requestor, mask: 0)]
        }
        let target = offered[transfer.target]
        let end = min(target.bytes.count, transfer.offset + partBytes)
        // The last part is empty: it says the value is whole.
        transfer.finished = transfer.offset == end
        let part = target.bytes[transfer.offset..<end]
        transfer.offset = end
        transfers[key] = transfer
        return [X11Protocol.changeProperty(requestor, property: property, type: target.atom, format: 8, data: part)]
    }
}
