import Glibc

/// The agent's end of a resident instance's `SOCK_SEQPACKET` socket (unix(7)): each send and each receive is one
/// whole message, a delivery may carry one descriptor (SCM_RIGHTS). Non-blocking: a full socket is `.wouldBlock`,
/// never a wait, and the caller tries again when the event loop says it is writable.
struct MessageSocket {
    let descriptor: FileDescriptor

    /// A connected pair, both ends close-on-exec: the agent's end (non-blocking) and the instance's (its fd 3).
    static func pair() throws(SystemError) -> (agent: MessageSocket, instance: FileDescriptor) {
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
        return (MessageSocket(descriptor: agent), FileDescriptor(rawValue: ends[1]))
    }

    enum SendResult: Equatable {
        case sent
        /// The socket is full: try again once it is writable.
        case wouldBlock
        /// The instance closed its end or went away (EPIPE, ECONNRESET), or the message cannot be sent at all.
        case failed(Errno)
    }

    /// Sends `bytes` as one message, with `attached` passed along (the receiver gets its own descriptor for it).
    func send(_ bytes: [UInt8], attaching attached: FileDescriptor?) -> SendResult {
        let result = retryingErrno {
            bytes.withUnsafeBytes { sys_send_with_fd(descriptor.rawValue, $0, attached?.rawValue ?? -1) }
        }
        switch result {
        case .success: return .sent
        case .failure(.wouldBlock): return .wouldBlock
        case .failure(let error): return .failed(error)
        }
    }

    enum ReceiveResult {
        case message([UInt8])
        /// A message longer than the buffer, cut short (and dropped).
        case truncated
        case wouldBlock
        /// The instance closed its end.
        case endOfFile
        case failed(Errno)
    }

    /// Receives one message of at most `buffer.count` bytes, read into `buffer` (the caller's, kept from one receive
    /// to the next); descriptors the instance attached are closed unread.
    func receive(into buffer: inout [UInt8]) -> ReceiveResult {
        var attached: CInt = -1
        var truncated: CInt = 0
        let result = retryingErrno {
            buffer.withUnsafeMutableBytes { sys_receive_with_fd(descriptor.rawValue, $0, &attached, &truncated) }
        }
        if attached >= 0 { FileDescriptor(rawValue: attached).close() }
        switch result {
        case .success(0): return .endOfFile
        case .success(let count):
            if truncated != 0 { return .truncated }
            return .message(Array(buffer[..<count]))
        case .failure(.wouldBlock): return .wouldBlock
        case .failure(let error): return .failed(error)
        }
    }

    /// No more deliveries: the instance reads end of file ("exit now"), and may still send its last answers.
    func shutdownSending() {
        _ = sys_shutdown(descriptor.rawValue, CInt(SHUT_WR))
    }

    func close() { descriptor.close() }
}
