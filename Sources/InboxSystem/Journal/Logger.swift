import Glibc

/// Where log entries go: structured to journald, or as text lines on stderr when there is none.
public enum LogTarget: String, Sendable {
    case auto, journal, stderr

    /// `auto` picks the journal when journald's native socket exists.
    public func resolved() -> LogTarget {
        guard self == .auto else { return self }
        var st = stat()
        let present = lstat("/run/systemd/journal/socket", &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK
        return present ? .journal : .stderr
    }
}

/// The agent's one logger: a message, a priority, an event kind and `INBOX_*` fields.
public final class Logger {
    public let target: LogTarget
    public let threshold: LogPriority
    public let identifier: String
    private var streams: [String: FileDescriptor] = [:]

    public init(target: LogTarget, threshold: LogPriority = .info, identifier: String = "inboxd") {
        self.target = target.resolved()
        self.threshold = threshold
        self.identifier = identifier
    }

    deinit { for fd in streams.values { fd.close() } }

    public func isEnabled(_ priority: LogPriority) -> Bool { priority >= threshold }

    /// Writes one entry. Field names are the journal's (`INBOX_FILE`, `CONFIG_LINE`, ...).
    public func log(_ priority: LogPriority, _ message: String, event: JournalEvent? = nil,
                    fields: KeyValuePairs<String, String?> = [:]) {
        guard isEnabled(priority) else { return }
        var entries: [(String, String)] = []
        entries.reserveCapacity(fields.count + 5)
        entries.append(("MESSAGE", message))
        entries.append(("PRIORITY", String(priority.rawValue)))
        entries.append(("SYSLOG_IDENTIFIER", identifier))
        if let event {
            entries.append(("MESSAGE_ID", event.messageID))
            if event.isDeliveryEvent { entries.append(("INBOX_EVENT", event.rawValue)) }
        }
        for (key, value) in fields { if let value { entries.append((key, value)) } }
        switch target {
        case .journal:
            if !sendToJournal(entries) { writeLine(message, entries) }
        case .stderr, .auto:
            writeLine(message, entries)
        }
    }

    private func sendToJournal(_ entries: [(String, String)]) -> Bool {
        let strings = entries.map { "\($0.0)=\($0.1)" }
        return withIOVectors(strings) { iov in sys_sd_journal_sendv(iov.baseAddress!, CInt(iov.count)) >= 0 }
    }

    private func writeLine(_ message: String, _ entries: [(String, String)]) {
        var line = "\(identifier): \(message)"
        let details = entries.filter { $0.0.hasPrefix("INBOX_") || $0.0.hasPrefix("CONFIG_") }
        if !details.isEmpty {
            line += " [" + details.map { "\($0.0)=\($0.1)" }.joined(separator: " ") + "]"
        }
        line += "\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = sys_write(2, UnsafeRawBufferPointer(rebasing: buffer[offset...]))
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { break }
            }
        }
    }

    /// A descriptor for a handler's stdout and stderr: a journal stream under the handler's
    /// identifier, shared by all its runs, or the agent's own stderr without a journal.
    /// The logger keeps ownership; callers must not close it.
    public func outputStream(for handler: String) -> FileDescriptor {
        if let fd = streams[handler] { return fd }
        var fd = FileDescriptor(rawValue: 2)
        if target == .journal {
            let result = sys_sd_journal_stream_fd(handler, CInt(LogPriority.info.rawValue), 0)
            if result >= 0 {
                _ = fcntl(result, F_SETFD, FD_CLOEXEC)
                fd = FileDescriptor(rawValue: result)
            }
        }
        if fd.rawValue != 2 { streams[handler] = fd }
        return fd
    }

    /// Drops a cached stream, e.g. after journald restarted and the socket broke.
    public func resetStreams() {
        for fd in streams.values { fd.close() }
        streams.removeAll()
    }
}

/// Builds `iovec`s over one contiguous UTF-8 copy of the strings for the length of `body`.
func withIOVectors<R>(_ strings: [String], _ body: (UnsafeBufferPointer<iovec>) -> R) -> R {
    var storage: [UInt8] = []
    var ranges: [Range<Int>] = []
    ranges.reserveCapacity(strings.count)
    for string in strings {
        let start = storage.count
        storage.append(contentsOf: string.utf8)
        ranges.append(start..<storage.count)
    }
    return storage.withUnsafeMutableBytes { bytes in
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: ranges.count) { iov in
            for (index, range) in ranges.enumerated() {
                iov[index] = iovec(iov_base: bytes.baseAddress! + range.lowerBound, iov_len: range.count)
            }
            return body(UnsafeBufferPointer(iov))
        }
    }
}
