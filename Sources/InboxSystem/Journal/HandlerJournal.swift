import Glibc

/// journald's native socket (systemd.journal-fields(7), the native protocol): one connected datagram socket of the
/// agent's, each datagram one entry. One is shared by every `OutputRelay` for handlers' output; `AgentJournal` has one
/// of its own for the agent's entries. It is
/// non-blocking: a full journald queue is `wouldBlock`, never a wait (sd_journal_sendv(3) would wait), and being
/// connected, poll(2) on it says when journald's queue has room again (unix(7)).
final class HandlerJournal {
    let descriptor: FileDescriptor

    /// What a send did.
    enum SendResult: Equatable {
        case sent
        /// journald's queue is full: poll the descriptor for POLLOUT and send again.
        case wouldBlock
        /// journald went away (restarted: the socket it listens on is a new one) or refused the entry.
        case failed(Errno)
    }

    /// Connected to `path`, or nil when nothing listens there.
    init?(path: String = LogTarget.journalSocket) {
        let fd = sys_socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return nil }
        // A line of a batch's process carries every delivery id of the batch: room for entries past the default
        // 208 KiB (an entry larger than the buffer fails with EMSGSIZE, and goes to stderr instead).
        if sys_setsockopt_int(fd, SOL_SOCKET, SO_SNDBUFFORCE, Self.sendBuffer) != 0 {
            _ = sys_setsockopt_int(fd, SOL_SOCKET, SO_SNDBUF, Self.sendBuffer)
        }
        guard sys_connect_unix(fd, path) == 0 else {
            _ = sys_close(fd)
            return nil
        }
        descriptor = FileDescriptor(rawValue: fd)
    }

    deinit {
        writable = nil
        descriptor.close()
    }

    /// Relays waiting for journald's queue to have room, oldest first, and the one IO source that waits for all of
    /// them: a relay that waited on a descriptor of its own would hold one per relay, and a burst while journald does
    /// not read would run the agent out of descriptors (systemd's default soft limit is 1,024).
    private var waiters: [(owner: ObjectIdentifier, resume: () -> Void)] = []
    private var writable: EventSource?
    /// Set by a send that found the queue full: the waiters after it wait again.
    private var blocked = false

    /// Calls `resume` once journald's queue has room (before later waiters); false when it cannot wait (no IO source).
    func waitForRoom(_ owner: AnyObject, loop: EventLoop, _ resume: @escaping () -> Void) -> Bool {
        let id = ObjectIdentifier(owner)
        if !waiters.contains(where: { $0.owner == id }) { waiters.append((id, resume)) }
        if writable == nil {
            writable = try? loop.addIO(descriptor, events: EventLoop.writable) { [unowned self] _ in self.room() }
            if writable == nil {
                waiters.removeAll { $0.owner == id }
                return false
            }
        } else {
            writable?.setEnabled(.on)
        }
        return true
    }

    /// `owner` no longer waits (it finished, or was let go of).
    func cancelWait(_ owner: AnyObject) {
        let id = ObjectIdentifier(owner)
        waiters.removeAll { $0.owner == id }
        if waiters.isEmpty { writable?.setEnabled(.off) }
    }

    /// The queue has room: waiters resume in order until one finds it full again.
    private func room() {
        while !waiters.isEmpty {
            let first = waiters.removeFirst()
            blocked = false
            first.resume()
            if blocked { break }
        }
        if waiters.isEmpty { writable?.setEnabled(.off) }
    }

    static let sendBuffer: CInt = 8 << 20

    /// Sends `fields` (newline-terminated `KEY=value` lines) and then `MESSAGE=` with `message` as one entry.
    /// `message` holds no newline (a line of output), so the plain form of the protocol carries it whatever its bytes.
    func send(fields: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer?) -> SendResult {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: 4) { iov in
            iov[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: fields.baseAddress), iov_len: fields.count)
            var count = 1
            if let message {
                iov[1] = iovec(iov_base: UnsafeMutableRawPointer(mutating: Self.messageKey.utf8Start), iov_len: 8)
                iov[2] = iovec(iov_base: UnsafeMutableRawPointer(mutating: message.baseAddress), iov_len: message.count)
                iov[3] = iovec(iov_base: UnsafeMutableRawPointer(mutating: Self.newline.utf8Start), iov_len: 1)
                count = 4
            }
            while true {
                if sys_sendmsg_dontwait(descriptor.rawValue, iov.baseAddress!, count) >= 0 { return .sent }
                let error = Errno.current
                if error == .interrupted { continue }
                if error == .wouldBlock { blocked = true }
                return error == .wouldBlock ? .wouldBlock : .failed(error)
            }
        }
    }

    private static let messageKey: StaticString = "MESSAGE="
    private static let newline: StaticString = "\n"

    /// The fields of a handler's output entries, each line `KEY=value\n`: its identifier (as SYSLOG_IDENTIFIER and
    /// INBOX_HANDLER), its pid as OBJECT_PID, and one INBOX_DELIVERY_ID per delivery the process carries.
    static func outputFields(handler: String, pid: pid_t, deliveryIDs: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96 + handler.utf8.count * 2 + deliveryIDs.count * 51)
        func field(_ key: String, _ value: String) {
            bytes.append(contentsOf: key.utf8)
            bytes.append(UInt8(ascii: "="))
            // Registration identifiers and delivery ids are one line each; a newline would end the field early.
            bytes.append(contentsOf: value.utf8.lazy.map { $0 == 10 ? UInt8(ascii: " ") : $0 })
            bytes.append(10)
        }
        field("PRIORITY", LogPriority.info.digit)
        field("SYSLOG_IDENTIFIER", handler)
        field("INBOX_HANDLER", handler)
        if pid > 0 { field("OBJECT_PID", String(pid)) }
        for id in deliveryIDs { field("INBOX_DELIVERY_ID", id) }
        return bytes
    }
}
