import Glibc
import InboxCore

/// Where `NOTIFY_SOCKET` says the service manager listens (sd_notify(3)): a socket's path, or a name in the abstract
/// namespace (written with a leading `@`).
enum NotifyAddress: Equatable {
    case path(String)
    case abstract(String)

    /// nil for what the agent does not speak (`vsock:` addresses, which only a virtual machine's own manager is
    /// given) and for an empty or relative value.
    init?(_ text: String) {
        if text.hasPrefix("/") {
            self = .path(text)
        } else if text.hasPrefix("@"), text.count > 1 {
            self = .abstract(String(text.dropFirst()))
        } else {
            return nil
        }
    }
}

/// The service-manager protocol (sd_notify(3)) over a datagram socket of the agent's own, connected to
/// `NOTIFY_SOCKET` and never waited on: a manager that does not read (PID 1 in a long daemon-reload) must not stop
/// deliveries. A send that finds the manager's queue full keeps the message in a `NotificationBacklog` and sends it
/// when the event loop says the socket is writable again: `STATUS=` is advisory (only the newest waits, coalesced);
/// READY=1, RELOADING=1, STOPPING=1 and WATCHDOG=1 change what the manager does and wait up to `patience` each, then
/// are dropped with one warning per stall. Without `NOTIFY_SOCKET` every call does nothing.
public final class ServiceNotifier {
    private let logger: Logger
    private let address: NotifyAddress?
    private var socket: FileDescriptor?
    private var backlog = NotificationBacklog()
    private weak var loop: EventLoop?
    private var writable: EventSource?
    private var expiry: EventSource?
    private var watchdogTimer: EventSource?
    /// Set once a stall dropped something, so that it is said once per stall; cleared when the backlog empties.
    private var warnedThisStall = false
    /// Set once sending failed with an error other than a full queue, said once until a send succeeds again.
    private var warnedFailure = false

    /// How long a message the manager acts on waits for room before it is dropped. The event loop never waits: this
    /// bounds how late the manager may still hear it.
    static let patience: Duration = .seconds(10)
    /// How long, at exit (the event loop is gone), the agent waits for room for what still waits.
    static let exitPatience: Duration = .seconds(1)

    /// Status updates replaced by newer ones before the manager read them, and messages it acts on that were dropped.
    public var coalescedCount: Int { backlog.coalesced }
    public var droppedCount: Int { backlog.dropped + refused }
    /// Messages the manager acts on that a send refused (an error other than a full queue).
    private var refused = 0

    public init(logger: Logger, environment: [String: String] = CurrentProcess.environmentVariables) {
        self.logger = logger
        let value = environment["NOTIFY_SOCKET"]
        address = value.flatMap(NotifyAddress.init)
        if let value, address == nil {
            logger.log(.warning, "NOTIFY_SOCKET=\(value) is no unix socket address (a path or @name): "
                       + "the service manager hears nothing from the agent")
            return
        }
        socket = connect()
    }

    deinit { socket?.close() }

    /// Sends through `loop`'s writability from now on: what waits goes out when the manager reads again.
    public func attach(to loop: EventLoop) {
        self.loop = loop
        if !backlog.isEmpty { flush() }
    }

    public func ready(status: String) { send(.ready(status: status)) }
    public func status(_ text: String) { send(.status(text)) }
    public func reloading(status: String = "Reloading registrations") {
        send(.reloading(monotonicUSec: EventLoop.now().microseconds, status: status))
    }
    public func stopping(status: String) { send(.stopping(status: status)) }

    /// WATCHDOG=1 at half the interval the manager asked for (WatchdogSec=, through WATCHDOG_USEC=), from a timer of
    /// the event loop: it stops when the loop does, which is what the watchdog is for.
    public func startWatchdog() {
        var usec: UInt64 = 0
        guard socket != nil, loop != nil, sys_sd_watchdog_enabled(&usec) > 0, usec > 0 else { return }
        let interval = Duration.microseconds(Int64(clamping: usec / 2))
        func arm() {
            watchdogTimer = try? loop?.addTimer(after: interval, accuracy: interval / 4) { [unowned self] in
                self.send(.watchdog)
                arm()
            }
        }
        arm()
    }

    /// At exit: what the manager acts on and still waits is given `exitPatience` (the loop is gone, so this waits in
    /// poll(2)), then dropped with a warning.
    public func finish() {
        watchdogTimer = nil
        writable = nil
        expiry = nil
        guard let socket, !backlog.isEmpty else { return }
        let end = EventLoop.now() + Self.exitPatience
        while !backlog.isEmpty {
            flushOnce()
            if backlog.waiting.isEmpty { break }
            let left = end - EventLoop.now()
            guard left > .zero, let ready = try? socket.poll(CShort(POLLOUT), timeout: left), ready != 0 else { break }
        }
        let dropped = backlog.dropAll()
        if !dropped.isEmpty { warnDropped(dropped, waited: Self.exitPatience) }
    }

    // MARK: Sending

    private enum SendResult { case sent, full, failed(Errno) }

    private func connect() -> FileDescriptor? {
        guard let address else { return nil }
        let fd = sys_socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard sys_connect_notify(fd, address) == 0 else {
            let error = Errno.current
            _ = sys_close(fd)
            if !warnedFailure {
                warnedFailure = true
                logger.log(.warning, "Cannot reach the service manager at NOTIFY_SOCKET (connect: \(error))")
            }
            return nil
        }
        return FileDescriptor(rawValue: fd)
    }

    private func send(_ notification: ServiceNotification) {
        guard address != nil else { return }
        // Behind what waits, so that the manager hears the messages in the order they were made.
        if backlog.isEmpty {
            switch transmit(notification) {
            case .sent: return
            case .full: break
            case .failed:
                if notification.kind != .status { refused += 1 }
                return
            }
        }
        backlog.add(notification, deadline: EventLoop.now() + Self.patience)
        waitForRoom()
    }

    /// One datagram, without waiting; a connection the manager dropped (it re-executed, or a test's stand-in came
    /// back) is made again once.
    private func transmit(_ notification: ServiceNotification) -> SendResult {
        var result = attempt(notification.message)
        if case .failed = result {
            socket?.close()
            socket = connect()
            result = attempt(notification.message)
        }
        switch result {
        case .sent: warnedFailure = false
        case .failed(let error) where !warnedFailure:
            warnedFailure = true
            logger.log(.warning, "The service manager refuses notifications (\(error)); "
                       + "\(notification.kind.rawValue) was not sent")
        default: break
        }
        return result
    }

    private func attempt(_ message: String) -> SendResult {
        guard let socket else { return .failed(Errno(rawValue: ENOTCONN)) }
        var text = message
        return text.withUTF8 { bytes in
            while true {
                if sys_send_dontwait(socket.rawValue, UnsafeRawBufferPointer(bytes)) >= 0 { return .sent }
                let error = Errno.current
                if error == .interrupted { continue }
                return error == .wouldBlock ? .full : .failed(error)
            }
        }
    }

    /// Sends what waits, oldest first, until the queue is full again or nothing waits.
    private func flushOnce() {
        while let next = backlog.next {
            switch transmit(next) {
            case .sent: backlog.removeNext()
            case .failed:
                if next.kind != .status { refused += 1 }
                backlog.removeNext()
            case .full: return
            }
        }
    }

    private func flush() {
        flushOnce()
        if backlog.isEmpty {
            writable?.setEnabled(.off)
            expiry = nil
            warnedThisStall = false
        } else {
            waitForRoom()
        }
    }

    /// Waits, in the event loop, for the socket to be writable and for the earliest deadline.
    private func waitForRoom() {
        guard let loop, let socket else { return }
        if writable == nil {
            writable = try? loop.addIO(socket, events: EventLoop.writable) { [unowned self] _ in self.flush() }
        } else {
            writable?.setEnabled(.on)
        }
        if expiry == nil, let deadline = backlog.earliestDeadline {
            expiry = try? loop.addTimer(after: deadline - EventLoop.now(), accuracy: .milliseconds(100)) { [unowned self] in
                self.expiry = nil
                let dropped = self.backlog.expire(now: EventLoop.now())
                if !dropped.isEmpty { self.warnDropped(dropped, waited: Self.patience) }
                if self.backlog.isEmpty { self.flush() } else { self.waitForRoom() }
            }
        }
    }

    private func warnDropped(_ kinds: [ServiceNotification.Kind], waited: Duration) {
        guard !warnedThisStall else { return }
        warnedThisStall = true
        let names = kinds.map(\.rawValue).joined(separator: ", ")
        logger.log(.warning, "The service manager did not read notifications for \(waited.components.seconds) s; "
                   + "dropped \(names) (later ones are dropped the same way until it reads again)",
                   fields: ["INBOX_NOTIFICATIONS_DROPPED": String(backlog.dropped)])
    }
}
