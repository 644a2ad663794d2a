import Glibc

/// The agent's own entries to journald's native socket (systemd.journal-fields(7), the native protocol), over a
/// connected non-blocking datagram socket of its own (`HandlerJournal`): sd_journal_sendv(3) would wait in sendmsg for
/// as long as journald does not read, and with it every delivery. While journald's queue is full, entries wait here, in
/// order, up to `waitLimit` bytes, and go out when the event loop says the socket is writable; past the limit an entry
/// is dropped and counted. When journald reads again, one warning says how long it did not and what waited or was
/// dropped (`recovered`).
final class AgentJournal {
    /// What became of one entry.
    enum Outcome: Equatable {
        case sent
        /// journald's queue is full: it waits (`waitLimit`).
        case delayed
        /// The wait is full: the entry is lost, and counted.
        case dropped
        /// journald is not there (stopped, or its socket is gone): the caller says it another way.
        case failed(Errno)
    }

    private let path: String
    private var connection: HandlerJournal?
    /// Entries waiting for room, oldest first from `head`.
    private var waiting: [[UInt8]] = []
    private var head = 0
    private var waitingBytes = 0
    /// Since the agent started: entries that waited, and entries dropped because the wait was full.
    private(set) var delayed = 0
    private(set) var dropped = 0
    /// The stall in progress: when it began and what it cost so far.
    private var stall: (began: Duration, delayed: Int, dropped: Int)?
    private weak var loop: EventLoop?
    private var writable: EventSource?
    /// Told once the wait is empty again after a stall: how long it lasted, what waited and what was dropped.
    var recovered: ((_ lasted: Duration, _ delayed: Int, _ dropped: Int) -> Void)?

    /// About 8,000 entries of a burst: a few seconds of journald not reading at full speed.
    static let waitLimit = 4 << 20

    init(path: String) {
        self.path = path
        connection = HandlerJournal(path: path)
    }

    /// Waits for room through `loop` from now on.
    func attach(to loop: EventLoop) {
        self.loop = loop
        if head < waiting.count { flush() }
    }

    /// Sends `entry` (the native protocol's bytes, one datagram), or keeps it behind what already waits.
    func send(_ entry: [UInt8]) -> Outcome {
        if head < waiting.count {
            // Without an event loop to say when there is room, each entry tries what waits first.
            if loop == nil { flush() }
            if head < waiting.count { return keep(entry) }
        }
        switch transmit(entry) {
        case .sent: return .sent
        case .wouldBlock:
            stall = (EventLoop.now(), 0, 0)
            let outcome = keep(entry)
            waitForRoom()
            return outcome
        case .failed(let error): return .failed(error)
        }
    }

    /// At exit (the event loop is gone): what waits is given up to `within` in poll(2), then dropped and counted.
    func finish(within: Duration = .seconds(1)) {
        writable = nil
        let end = EventLoop.now() + within
        while head < waiting.count {
            flush()
            guard head < waiting.count, let connection else { break }
            let left = end - EventLoop.now()
            guard left > .zero, let ready = try? connection.descriptor.poll(CShort(POLLOUT), timeout: left), ready != 0
            else { break }
        }
        dropped += waiting.count - head
        waiting = []
        head = 0
        waitingBytes = 0
    }

    private func keep(_ entry: [UInt8]) -> Outcome {
        guard waitingBytes + entry.count <= Self.waitLimit else {
            dropped += 1
            stall?.dropped += 1
            return .dropped
        }
        waiting.append(entry)
        waitingBytes += entry.count
        delayed += 1
        stall?.delayed += 1
        return .delayed
    }

    /// One datagram; a connection journald dropped (it restarted: a new socket at the same path) is made again once.
    private func transmit(_ entry: [UInt8]) -> HandlerJournal.SendResult {
        if connection == nil { reconnect() }
        guard let connection else { return .failed(connectError) }
        var result = entry.withUnsafeBytes { connection.send(fields: $0, message: nil) }
        if case .failed(let error) = result, error != Errno(rawValue: EMSGSIZE) {
            reconnect()
            if let fresh = self.connection {
                result = entry.withUnsafeBytes { fresh.send(fields: $0, message: nil) }
            }
        }
        return result
    }

    private func reconnect() {
        writable = nil
        connection = HandlerJournal(path: path)
        // What connect(2) said (nothing listens, no socket), for the line that says the journal does not answer.
        if connection == nil { connectError = Errno.current }
    }

    private var connectError = Errno(rawValue: ENOTCONN)

    /// Sends what waits until journald's queue is full again or nothing waits.
    private func flush() {
        while head < waiting.count {
            let entry = waiting[head]
            switch transmit(entry) {
            case .sent:
                break
            case .wouldBlock:
                compact()
                waitForRoom()
                return
            case .failed:
                // journald went away with entries waiting: they are lost, and counted.
                dropped += 1
                stall?.dropped += 1
            }
            waiting[head] = []
            head += 1
            waitingBytes -= entry.count
        }
        waiting = []
        head = 0
        waitingBytes = 0
        writable?.setEnabled(.off)
        if let stall {
            self.stall = nil
            recovered?(EventLoop.now() - stall.began, stall.delayed, stall.dropped)
        }
    }

    private func compact() {
        guard head > 1024, head * 2 > waiting.count else { return }
        waiting.removeFirst(head)
        head = 0
    }

    private func waitForRoom() {
        guard let loop, let connection else { return }
        if writable == nil {
            writable = try? loop.addIO(connection.descriptor, events: EventLoop.writable) { [unowned self] _ in self.flush() }
        } else {
            writable?.setEnabled(.on)
        }
    }
}
