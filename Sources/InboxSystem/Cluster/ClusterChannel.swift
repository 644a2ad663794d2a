import Glibc
import InboxCore

/// One end of the `SOCK_SEQPACKET` socket between the agent and its cluster child (ClusterProtocol): each send and
/// each receive is one whole message with at most one descriptor (SCM_RIGHTS). Every call is non-blocking; the child,
/// which has no event loop, waits with `wait(_:timeout:)`.
public struct ClusterChannel: Sendable {
    /// The socket.
    public let descriptor: FileDescriptor

    /// The channel on `descriptor` (the child's fd 0).
    public init(descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// A connected pair, both ends close-on-exec: the agent's end (non-blocking) and the child's.
    public static func pair() throws(SystemError) -> (agent: ClusterChannel, child: FileDescriptor) {
        var ends: [CInt] = [-1, -1]
        guard sys_seqpacket_pair(&ends) == 0 else { throw SystemError("socketpair", errno: .current) }
        let agent = FileDescriptor(rawValue: ends[0])
        do {
            try agent.setNonBlocking()
        } catch {
            agent.close()
            FileDescriptor(rawValue: ends[1]).close()
            throw SystemError("fcntl", errno: error)
        }
        return (ClusterChannel(descriptor: agent), FileDescriptor(rawValue: ends[1]))
    }

    /// What a send did.
    public enum SendResult: Sendable, Equatable {
        case sent
        /// The socket is full: try again once it is writable.
        case wouldBlock
        /// The other end is gone (EPIPE, ECONNRESET), or the message cannot be sent at all.
        case failed(Errno)
    }

    /// Sends `bytes` as one message, with `attached` passed along (the receiver gets a descriptor of its own).
    public func send(_ bytes: [UInt8], attaching attached: FileDescriptor? = nil) -> SendResult {
        let result = retryingErrno {
            bytes.withUnsafeBytes { sys_send_with_fd(descriptor.rawValue, $0, attached?.rawValue ?? -1) }
        }
        switch result {
        case .success: return .sent
        case .failure(.wouldBlock): return .wouldBlock
        case .failure(let error): return .failed(error)
        }
    }

    /// What a receive found.
    public enum ReceiveResult: Sendable {
        /// A message, and the descriptor attached to it (the caller's to close).
        case message([UInt8], FileDescriptor?)
        /// A message longer than the buffer, dropped (and its descriptor closed).
        case truncated
        case wouldBlock
        /// The other end closed.
        case endOfFile
        case failed(Errno)
    }

    /// A buffer for `receive`: one byte more than the largest message, so that a longer one shows as truncated.
    public static func makeBuffer() -> [UInt8] { [UInt8](repeating: 0, count: ClusterProtocol.maximumMessageBytes + 1) }

    /// Receives one message into `buffer` (the caller's, kept from one receive to the next: `makeBuffer()`).
    public func receive(into buffer: inout [UInt8]) -> ReceiveResult {
        var attached: CInt = -1
        var truncated: CInt = 0
        let result = retryingErrno {
            buffer.withUnsafeMutableBytes { sys_receive_with_fd(descriptor.rawValue, $0, &attached, &truncated) }
        }
        let passed = attached >= 0 ? FileDescriptor(rawValue: attached) : nil
        switch result {
        case .success(0):
            passed?.close()
            return .endOfFile
        case .success(let count):
            if truncated != 0 || count > ClusterProtocol.maximumMessageBytes {
                passed?.close()
                return .truncated
            }
            return .message(Array(buffer[..<count]), passed)
        case .failure(.wouldBlock): return .wouldBlock
        case .failure(let error): return .failed(error)
        }
    }

    /// What `wait` waits for.
    public enum Readiness: Sendable { case readable, writable }

    /// Waits up to `timeout` until the socket is readable or writable (or closed: a receive or send then says so);
    /// whether it is.
    public func wait(_ readiness: Readiness, timeout: Duration) -> Bool {
        let events = CShort(readiness == .readable ? POLLIN : POLLOUT)
        let ready = (try? descriptor.poll(events, timeout: timeout)) ?? CShort(POLLERR)
        return ready != 0
    }

    /// Sends as `send` does, waiting while the socket is full (the child's way: it has nothing else to do then).
    public func sendWaiting(_ bytes: [UInt8], attaching attached: FileDescriptor? = nil) -> Errno? {
        while true {
            switch send(bytes, attaching: attached) {
            case .sent: return nil
            case .failed(let error): return error
            case .wouldBlock: _ = wait(.writable, timeout: .seconds(1))
            }
        }
    }

    /// Closes the socket.
    public func close() { descriptor.close() }
}
