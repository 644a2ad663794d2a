import Glibc

/// A delivery's stdout and stderr, bounded: the handler writes into a pipe, the agent reads it through the event
/// loop and forwards up to `limit` bytes to the handler's journal stream; past that it keeps reading and discards,
/// so the handler never blocks on a full pipe for that reason, and counts what it dropped. When the attempt ends,
/// `finish` reads what is left in the pipe (the tail within the limit is never lost) and logs one entry with the
/// count (INBOX_OUTPUT_DROPPED_BYTES) when anything was dropped.
///
/// The agent never blocks: both ends it reads and writes are non-blocking. When the journal stream is full,
/// reading pauses (the pipe fills, and the handler waits as it did writing to the journal itself) and resumes
/// when the stream drains; what is left for the journal after the attempt ended is written the same way.
///
/// Per delivery (measured with strace, 200 deliveries of a handler printing one line): a pipe2, an fcntl (O_NONBLOCK
/// on the agent's end), one IO source (two epoll_ctl), a read per 64 KiB, the write to the journal the handler used
/// to make itself, and two closes; a second IO source only while the journal pushes back.
final class OutputRelay {
    /// The end the handler gets as fd 1 and 2; the caller closes it once the handler is started.
    let handlerEnd: FileDescriptor
    private let reader: FileDescriptor
    private let stream: HandlerOutputStream
    private var destination: FileDescriptor { stream.descriptor }
    private let loop: EventLoop
    private let logger: Logger
    /// Forwarded bytes still allowed; nil: no limit.
    private var allowance: Int64?
    private let limit: Int64?
    private(set) var dropped: Int64 = 0
    private var readSource: EventSource?
    /// Forwardable bytes the journal did not take yet, and the source waiting until it can.
    private var pending: [UInt8] = []
    private var writeSource: EventSource?
    private var writeEnd: FileDescriptor?
    private var finished = false
    /// Called once everything is read and written (or given up), so that the owner can let go of it.
    private var closed: ((OutputRelay) -> Void)?

    private static let chunk = 65536

    /// A pipe for a delivery whose output goes to `stream` (held until the relay is done).
    init(loop: EventLoop, logger: Logger, stream: HandlerOutputStream, limit: Int64?) throws(SystemError) {
        var ends: [CInt] = [-1, -1]
        guard sys_pipe2(&ends, O_CLOEXEC) == 0 else { throw SystemError("pipe2", errno: .current) }
        reader = FileDescriptor(rawValue: ends[0])
        handlerEnd = FileDescriptor(rawValue: ends[1])
        self.loop = loop
        self.logger = logger
        self.stream = stream
        self.limit = limit
        allowance = limit
        do {
            try reader.setNonBlocking()
        } catch {
            reader.close()
            handlerEnd.close()
            throw SystemError("fcntl", errno: error)
        }
        do {
            readSource = try loop.addIO(reader) { [unowned self] _ in self.readAvailable() }
        } catch {
            reader.close()
            handlerEnd.close()
            throw error
        }
    }

    /// A relay let go of without `finish` (the agent is stopping): its descriptors still close.
    deinit {
        readSource = nil
        writeSource = nil
        if !finished { reader.close() }
        writeEnd?.close()
    }

    /// Reads until the pipe is empty or at its end, then logs the dropped count; `fields` name the delivery (built only
    /// when something was dropped). `closed` is called when nothing is left to write (at once, unless the journal is
    /// pushing back).
    func finish(fields: @autoclosure () -> JournalFields, closed: @escaping (OutputRelay) -> Void) {
        guard !finished else { return }
        finished = true
        self.closed = closed
        // At most a pipe's worth is left, unless something the handler left running still writes: bounded either way.
        // A read shorter than the buffer emptied the pipe, and the handler is gone: no need to read again to see so.
        var budget = 16
        while budget > 0, pending.isEmpty, readOnce() == Self.chunk { budget -= 1 }
        // Bytes the journal has not taken yet are not lost: they are written after, within the limit.
        if !pending.isEmpty {
            while budget > 0, readOnce(intoPendingToo: true) == Self.chunk { budget -= 1 }
        }
        readSource = nil
        reader.close()
        if dropped > 0 {
            let limitText = limit.map { "\($0) bytes" } ?? "none"
            logger.log(.notice, "Dropped \(dropped) bytes of output past the limit (\(limitText))", event: .outputDropped,
                       fields: fields() + [("INBOX_OUTPUT_DROPPED_BYTES", String(dropped)),
                                         ("INBOX_OUTPUT_LIMIT", limit.map { String($0) })])
        }
        if pending.isEmpty { close() }
    }

    /// The pipe is readable: one read, forwarded or dropped.
    private func readAvailable() {
        _ = readOnce()
    }

    /// One read of up to 64 KiB: how many bytes it read, 0 at end-of-file, when the pipe is empty or on an error.
    /// Unless `intoPendingToo`, it is only called while nothing waits for the journal.
    private func readOnce(intoPendingToo: Bool = false) -> Int {
        withUnsafeTemporaryAllocation(byteCount: Self.chunk, alignment: 1) { buffer in
            let count: Int
            do { count = try reader.read(into: buffer) } catch { return 0 }
            if count == 0 {
                // End-of-file: every writer is gone. Nothing more to wait for.
                readSource?.setEnabled(.off)
                return 0
            }
            var forward = count
            if let left = allowance {
                forward = Int(min(Int64(count), left))
                allowance = left - Int64(forward)
                dropped += Int64(count - forward)
            }
            guard forward > 0 else { return count }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<forward])
            if !pending.isEmpty || intoPendingToo {
                pending.append(contentsOf: bytes)
                return count
            }
            var written = 0
            while written < forward {
                do throws(Errno) {
                    written += try destination.write(some: UnsafeRawBufferPointer(rebasing: bytes[written...]))
                } catch {
                    if error == .wouldBlock {
                        pending.append(contentsOf: bytes[written...])
                        waitForJournal()
                    }
                    // Any other error (journald went away): what is left of this read is lost, as it was before.
                    return count
                }
            }
            return count
        }
    }

    /// The journal stream is full: stop reading until it drains.
    private func waitForJournal() {
        readSource?.setEnabled(.off)
        if writeSource == nil {
            // sd-event takes one source per descriptor, and deliveries of one handler share its stream: wait on a
            // descriptor of our own for the same stream.
            guard let own = try? destination.duplicate() else {
                giveUpPending()
                return
            }
            writeEnd = own
            writeSource = try? loop.addIO(own, events: EventLoop.writable) { [unowned self] _ in self.writePending() }
            if writeSource == nil { giveUpPending() }
        } else {
            writeSource?.setEnabled(.on)
        }
    }

    /// The journal stream can take more: write what waits, then read again.
    private func writePending() {
        while !pending.isEmpty {
            let result = pending.withUnsafeBytes { bytes in Result { () throws(Errno) in try destination.write(some: bytes) } }
            switch result {
            case .success(let written):
                pending.removeFirst(written)
            case .failure(.wouldBlock):
                return
            case .failure:
                // journald went away: what waits is lost.
                pending.removeAll()
            }
        }
        writeSource?.setEnabled(.off)
        if finished {
            close()
        } else {
            readSource?.setEnabled(.on)
        }
    }

    /// Without a way to wait for the journal, what waits is lost (it was within the limit; journald is failing).
    private func giveUpPending() {
        pending.removeAll()
        if finished { close() } else { readSource?.setEnabled(.on) }
    }

    private func close() {
        writeSource = nil
        writeEnd?.close()
        writeEnd = nil
        let closed = self.closed
        self.closed = nil
        closed?(self)
    }
}
