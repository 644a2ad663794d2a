import Glibc

/// A handler process's stdout and stderr, bounded: the handler writes into a pipe, the agent reads it through the event
/// loop and forwards up to `limit` bytes; past that it keeps reading and discards, so the handler never blocks on a
/// full pipe for that reason, and counts what it dropped. When the attempt ends, `finish` reads what is left in the
/// pipe (the tail within the limit is never lost) and logs one entry with the count (INBOX_OUTPUT_DROPPED_BYTES) when
/// anything was dropped.
///
/// To the journal, each line is one entry that names the delivery (`HandlerJournal.outputFields`): the handler's
/// identifier, its pid as OBJECT_PID, and the INBOX_DELIVERY_ID of each delivery the process carries (a batch's
/// every one; a resident instance's only while exactly one is in flight, see `attribute(to:)`), so that the entries of
/// one delivery tell its whole story. A line ends at a newline or a NUL (neither is kept), at `lineMax` bytes (the
/// rest is the next line), or at the end of the output; its bytes are written as they are (invalid UTF-8 too, as
/// journald keeps a stream's). Without a journal the bytes go to the agent's stderr as they came.
///
/// The agent never blocks: the pipe and the destination are non-blocking. When journald's queue is full, reading
/// pauses (the pipe fills, and the handler waits as it would writing to the journal itself) and resumes when the queue
/// drains; what is left for the journal after the attempt ended is written the same way.
///
/// Per delivery of a handler that prints one line: a pipe2, an fcntl (O_NONBLOCK on the agent's end), one IO source
/// (two epoll_ctl), a read, one sendmsg to journald and two closes. While journald pushes back, relays wait in line on
/// the journal connection's one IO source (`HandlerJournal.waitForRoom`), never on a descriptor each.
final class OutputRelay {
    /// Where the bytes go.
    enum Destination {
        /// One entry per line.
        case journal(HandlerJournal)
        /// The bytes as they came: the agent's stderr without a journal.
        case stream(FileDescriptor)
    }

    /// The end the handler gets as fd 1 and 2; the caller closes it once the handler is started.
    let handlerEnd: FileDescriptor
    private let reader: FileDescriptor
    private var destination: Destination
    private let handler: String
    private let loop: EventLoop
    private let logger: Logger
    /// Forwarded bytes still allowed; nil: no limit.
    private var allowance: Int64?
    private let limit: Int64?
    private(set) var dropped: Int64 = 0
    private var readSource: EventSource?
    /// The process's pid (0 until it runs) and the deliveries its lines name.
    private var pid: pid_t = 0
    private var deliveryIDs: [String]
    /// Set when the deliveries changed while reading was paused: what the pipe holds may be from before, so lines name
    /// no delivery until a read finds the pipe empty.
    private var attributionStale = false
    /// The fields of the entries, built at the first line after a change.
    private var fields: [UInt8]?
    /// The start of a line whose end has not been read yet.
    private var partial: [UInt8] = []
    /// What the destination did not take yet (whole entries, or for a stream the bytes), oldest first, and the source
    /// waiting until it can.
    private var pending: [Pending] = []
    private var writeSource: EventSource?
    private var writeEnd: FileDescriptor?
    private var finished = false
    /// Called once everything is read and written (or given up), so that the owner can let go of it.
    private var closed: ((OutputRelay) -> Void)?

    private struct Pending {
        var bytes: [UInt8]
        /// Where the message starts in an entry (after its fields and `MESSAGE=`); 0 for a stream's bytes.
        var messageStart: Int
    }

    private static let chunk = 65536
    /// journald's own LineMax= default: a longer line is cut into lines of this length.
    static let lineMax = 48 * 1024

    /// A pipe for the output of `handler`'s process delivering `deliveryIDs`, to `destination`.
    init(loop: EventLoop, logger: Logger, handler: String, deliveryIDs: [String], destination: Destination,
         limit: Int64?) throws(SystemError) {
        var ends: [CInt] = [-1, -1]
        guard sys_pipe2(&ends, O_CLOEXEC) == 0 else { throw SystemError("pipe2", errno: .current) }
        reader = FileDescriptor(rawValue: ends[0])
        handlerEnd = FileDescriptor(rawValue: ends[1])
        self.loop = loop
        self.logger = logger
        self.handler = handler
        self.deliveryIDs = deliveryIDs
        self.destination = destination
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
        if case .journal(let journal) = destination { journal.cancelWait(self) }
        readSource = nil
        writeSource = nil
        if !finished { reader.close() }
        writeEnd?.close()
    }

    /// The process runs with this pid.
    func attribute(pid: pid_t) {
        self.pid = pid
        fields = nil
    }

    /// The deliveries a resident instance holds changed: its lines name `ids` from now on (none when it holds several
    /// or none: then a line names the instance only). What the pipe holds was written before the change, so it is read
    /// first, under the deliveries it was written for; while the journal pushes back that cannot be done, and lines
    /// name no delivery until the pipe has been found empty.
    func attribute(to ids: [String]) {
        guard ids != deliveryIDs else { return }
        if case .journal = destination, !finished {
            // Emptied by a short read (its lines are sent or queued under the old deliveries), or it may still hold
            // bytes from before the change.
            var drained = false
            var budget = 16
            while !drained, budget > 0, pending.isEmpty {
                drained = readOnce() < Self.chunk
                budget -= 1
            }
            if !drained { attributionStale = true }
        }
        deliveryIDs = ids
        fields = nil
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
            while budget > 0, readOnce(queueing: true) == Self.chunk { budget -= 1 }
        }
        readSource = nil
        reader.close()
        // A last line without its newline is a line.
        if !partial.isEmpty {
            let line = partial
            partial = []
            line.withUnsafeBytes { emit($0, queueing: !pending.isEmpty) }
        }
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
    /// Unless `queueing`, it is only called while nothing waits for the destination.
    private func readOnce(queueing: Bool = false) -> Int {
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
            if forward > 0 { self.forward(UnsafeRawBufferPointer(rebasing: buffer[..<forward]), queueing: queueing) }
            // A short read emptied the pipe: whatever comes next was written after it.
            if count < Self.chunk && attributionStale {
                attributionStale = false
                fields = nil
            }
            return count
        }
    }

    /// Bytes within the limit: as lines to the journal, as they are to a stream.
    private func forward(_ bytes: UnsafeRawBufferPointer, queueing: Bool) {
        guard case .journal = destination else {
            write(bytes, queueing: queueing)
            return
        }
        var start = 0
        for index in bytes.indices where bytes[index] == 10 || bytes[index] == 0 {
            let piece = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
            if partial.isEmpty && piece.count <= Self.lineMax {
                emit(piece, queueing: queueing)
            } else {
                // The last piece of a long line is its rest (never empty).
                partial.append(contentsOf: piece)
                var line = partial[...]
                partial = []
                while line.count > Self.lineMax {
                    line.prefix(Self.lineMax).withUnsafeBytes { emit($0, queueing: queueing) }
                    line = line.dropFirst(Self.lineMax)
                }
                line.withUnsafeBytes { emit($0, queueing: queueing) }
            }
            start = index + 1
        }
        guard start < bytes.count else { return }
        partial.append(contentsOf: bytes[start...])
        // A line longer than lineMax is cut; exactly lineMax waits, since its end may come next.
        if partial.count > Self.lineMax {
            var rest = partial[...]
            while rest.count > Self.lineMax {
                rest.prefix(Self.lineMax).withUnsafeBytes { emit($0, queueing: queueing) }
                rest = rest.dropFirst(Self.lineMax)
            }
            partial = Array(rest)
        }
    }

    /// One line as one entry: sent now, or queued behind what waits (and then reading pauses until journald drains).
    private func emit(_ line: UnsafeRawBufferPointer, queueing: Bool) {
        // Lines are only made for the journal; a stream takes the bytes as they came.
        guard case .journal(let journal) = destination else { return }
        let fields = entryFields()
        if queueing || !pending.isEmpty {
            pending.append(Self.entry(fields, line))
            return
        }
        let result = fields.withUnsafeBytes { journal.send(fields: $0, message: line) }
        switch result {
        case .sent:
            return
        case .wouldBlock:
            pending.append(Self.entry(fields, line))
            waitForDestination()
        case .failed(let error):
            pending.append(Self.entry(fields, line))
            journalFailed(error)
        }
    }

    private func entryFields() -> [UInt8] {
        if let fields { return fields }
        let built = HandlerJournal.outputFields(handler: handler, pid: pid, deliveryIDs: attributionStale ? [] : deliveryIDs)
        fields = built
        return built
    }

    private static func entry(_ fields: [UInt8], _ line: UnsafeRawBufferPointer) -> Pending {
        var bytes = fields
        bytes.reserveCapacity(fields.count + 9 + line.count)
        bytes.append(contentsOf: "MESSAGE=".utf8)
        let start = bytes.count
        bytes.append(contentsOf: line)
        bytes.append(10)
        return Pending(bytes: bytes, messageStart: start)
    }

    /// Bytes to a stream: written now as far as it takes them, the rest queued.
    private func write(_ bytes: UnsafeRawBufferPointer, queueing: Bool) {
        guard case .stream(let stream) = destination else { return }
        if queueing || !pending.isEmpty {
            pending.append(Pending(bytes: Array(bytes), messageStart: 0))
            return
        }
        var written = 0
        while written < bytes.count {
            do throws(Errno) {
                written += try stream.write(some: UnsafeRawBufferPointer(rebasing: bytes[written...]))
            } catch {
                if error == .wouldBlock {
                    pending.append(Pending(bytes: Array(bytes[written...]), messageStart: 0))
                    waitForDestination()
                }
                // Any other error: what is left is lost (stderr is gone).
                return
            }
        }
    }

    /// The destination is full: stop reading until it drains.
    private func waitForDestination() {
        readSource?.setEnabled(.off)
        if case .journal(let journal) = destination {
            // One wait per journal connection, whatever the number of relays waiting on it.
            let waiting = journal.waitForRoom(self, loop: loop) { [weak self] in self?.writePending() }
            if !waiting { giveUpPending() }
            return
        }
        if writeSource == nil {
            // sd-event takes one source per descriptor, and every relay shares the destination: wait on a descriptor
            // of our own for it.
            let descriptor: FileDescriptor = switch destination {
            case .journal(let journal): journal.descriptor
            case .stream(let stream): stream
            }
            guard let own = try? descriptor.duplicate() else {
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

    /// The destination can take more: write what waits, then read again.
    private func writePending() {
        while let first = pending.first {
            switch destination {
            case .journal(let journal):
                switch first.bytes.withUnsafeBytes({ journal.send(fields: $0, message: nil) }) {
                case .sent:
                    pending.removeFirst()
                case .wouldBlock:
                    waitForDestination()
                    return
                case .failed(let error):
                    journalFailed(error)
                    return
                }
            case .stream(let stream):
                let result = first.bytes.withUnsafeBytes { bytes in Result { () throws(Errno) in try stream.write(some: bytes) } }
                switch result {
                case .success(let written) where written == first.bytes.count:
                    pending.removeFirst()
                case .success(let written):
                    pending[0].bytes.removeFirst(written)
                case .failure(.wouldBlock):
                    return
                case .failure:
                    pending.removeAll()
                }
            }
        }
        resume()
    }

    /// journald refused the first pending entry or went away: a new connection takes what waits (journald restarted,
    /// and listens on a new socket); without one, or when the entry itself is refused (too large), what waits goes to
    /// the agent's stderr, so that nothing within the limit is lost.
    private func journalFailed(_ error: Errno) {
        guard case .journal(let failed) = destination else { return }
        failed.cancelWait(self)
        writeSource = nil
        writeEnd?.close()
        writeEnd = nil
        if error != Errno(rawValue: EMSGSIZE), let fresh = logger.handlerJournal(replacing: failed) {
            destination = .journal(fresh)
            writePending()
            return
        }
        let entry = pending.removeFirst()
        entry.bytes.withUnsafeBytes { bytes in
            _ = FileDescriptor.standardError.write(all: UnsafeRawBufferPointer(rebasing: bytes[entry.messageStart...]))
        }
        if pending.isEmpty { resume() } else { writePending() }
    }

    /// Nothing waits any more: read again, or close once finished.
    private func resume() {
        writeSource?.setEnabled(.off)
        if finished {
            close()
        } else {
            readSource?.setEnabled(.on)
        }
    }

    /// Without a way to wait for the destination, what waits is lost (it was within the limit; journald is failing).
    private func giveUpPending() {
        if case .journal = destination { logger.outputLinesDropped += pending.count }
        pending.removeAll()
        if finished { close() } else { readSource?.setEnabled(.on) }
    }

    private func close() {
        if case .journal(let journal) = destination { journal.cancelWait(self) }
        writeSource = nil
        writeEnd?.close()
        writeEnd = nil
        let closed = self.closed
        self.closed = nil
        closed?(self)
    }
}
