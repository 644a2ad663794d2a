import InboxCore

/// A resident inboxd handler's side of its socket (docs/handler-protocol.md): the deliveries as they come, and the
/// answers. A handler is a loop:
///
///     import InboxHandlerKit
///
///     for delivery in Inbox.deliveries {
///         let bytes = try delivery.read()
///         // ... use the file, copy what is kept into delivery.documents ...
///         delivery.finish(.done)
///     }
///
/// The loop ends when the agent closes the socket (it wants the instance to exit); a handler that is not a
/// resident instance (no socket from inboxd) gets no deliveries and a message on stderr.
public enum Inbox {
    /// The deliveries of this instance, one at a time as they arrive (blocking until one does).
    public static var deliveries: InboxConnection {
        do {
            return try InboxConnection.fromEnvironment()
        } catch {
            var standardError = StandardError()
            print("inboxd handler: \(error)", to: &standardError)
            return InboxConnection(descriptor: -1)
        }
    }
}

/// Why the instance has no connection to inboxd.
public struct InboxError: Error, CustomStringConvertible {
    public let description: String
}

/// The socket inboxd passed as fd 3 (`LISTEN_FDS=1`, `LISTEN_PID`, `LISTEN_FDNAMES=inbox`), as a sequence of
/// deliveries. Answers go back through `Delivery.finish`. Not for sharing between threads.
public final class InboxConnection: Sequence, IteratorProtocol {
    /// fd 3, or -1 when there is none (the sequence is then empty).
    public let descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// The socket activation variables, checked as `sd_listen_fds(3)` checks them, then removed from the environment
    /// so that programs the handler starts do not take them for their own.
    public static func fromEnvironment() throws -> InboxConnection {
        defer { ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"].forEach(sys_unsetenv) }
        guard let count = sys_getenv("LISTEN_FDS"), let pid = sys_getenv("LISTEN_PID") else {
            throw InboxError(description: "no LISTEN_FDS: not started by inboxd as a resident handler (Activation=resident)")
        }
        guard Int32(pid) == sys_getpid() else { throw InboxError(description: "LISTEN_PID=\(pid) is another process's") }
        guard count == "1" else { throw InboxError(description: "LISTEN_FDS=\(count), expected 1") }
        return InboxConnection(descriptor: 3)
    }

    /// The next delivery; nil when the agent closed the socket (exit now) or it failed.
    public func next() -> Delivery? {
        guard descriptor >= 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 256 * 1024)
        var file: Int32 = -1
        var truncated: Int32 = 0
        while true {
            let count = bytes.withUnsafeMutableBytes { sys_receive_with_fd(descriptor, $0, &file, &truncated) }
            if count < 0 && sys_errno() == 4 { continue }  // EINTR
            guard count > 0 else { return nil }
            bytes.removeSubrange(count...)
            guard truncated == 0, case .success(let value) = JSONValue.parse(bytes),
                  let delivery = Delivery(value, raw: bytes, file: file, connection: self) else {
                // Not a delivery: nothing to answer (and no id to answer with). Keep going.
                if file >= 0 { sys_close(file) }
                bytes = [UInt8](repeating: 0, count: 256 * 1024)
                continue
            }
            return delivery
        }
    }

    /// Sends one answer; false when the socket is gone.
    func send(_ answer: String) -> Bool {
        var text = answer
        let sent = text.withUTF8 { utf8 in sys_send(descriptor, UnsafeRawBufferPointer(utf8)) }
        return sent >= 0
    }
}

/// stderr for `print(to:)`, which goes to the journal under the handler's identifier.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var text = string
        text.withUTF8 { utf8 in
            var rest = UnsafeRawBufferPointer(utf8)
            while !rest.isEmpty {
                let written = kitWrite(2, rest)
                guard written > 0 else { return }
                rest = UnsafeRawBufferPointer(rebasing: rest[written...])
            }
        }
    }
}
