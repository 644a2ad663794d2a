import Glibc

/// Where log entries go: structured to journald, or as text lines on stderr when there is none.
public enum LogTarget: String, Sendable {
    case auto, journal, stderr

    /// `auto` picks the journal when journald's native socket exists.
    public func resolved() -> LogTarget {
        guard self == .auto else { return self }
        let socket = try? FileSystem.status("/run/systemd/journal/socket", followingLinks: false)
        return socket.map { ($0.st_mode & S_IFMT) == S_IFSOCK } == true ? .journal : .stderr
    }
}

/// The agent's one logger: a message, a priority, an event kind and `INBOX_*` fields.
public final class Logger {
    public let target: LogTarget
    public let threshold: LogPriority
    public let identifier: String
    private var streams: [String: HandlerOutputStream] = [:]

    public init(target: LogTarget, threshold: LogPriority = .info, identifier: String = "inboxd") {
        self.target = target.resolved()
        self.threshold = threshold
        self.identifier = identifier
    }

    public func isEnabled(_ priority: LogPriority) -> Bool { priority >= threshold }

    /// Writes one entry. Field names are the journal's (`INBOX_FILE`, `CONFIG_LINE`, ...).
    public func log(_ priority: LogPriority, _ message: String, event: JournalEvent? = nil,
                    fields: KeyValuePairs<String, String?> = [:]) {
        guard isEnabled(priority) else { return }
        write(priority, message, event: event, fields: fields)
    }

    /// The same with fields built up in code (a delivery's common fields and those of one event).
    public func log(_ priority: LogPriority, _ message: String, event: JournalEvent? = nil,
                    fields: [(key: String, value: String?)]) {
        guard isEnabled(priority) else { return }
        write(priority, message, event: event, fields: fields)
    }

    private func write<Fields: Sequence>(_ priority: LogPriority, _ message: String, event: JournalEvent?, fields: Fields)
    where Fields.Element == (key: String, value: String?) {
        var entry = JournalEntry()
        entry.append("MESSAGE", message)
        entry.append("PRIORITY", priority.digit)
        entry.append("SYSLOG_IDENTIFIER", identifier)
        if let event {
            entry.append("MESSAGE_ID", event.messageID)
            if event.isDeliveryEvent { entry.append("INBOX_EVENT", event.rawValue) }
        }
        for (key, value) in fields { if let value { entry.append(key, value) } }
        if target == .journal && entry.send() { return }
        var details: [(String, String)] = []
        for (key, value) in fields {
            if let value, key.hasPrefix("INBOX_") || key.hasPrefix("CONFIG_") { details.append((key, value)) }
        }
        if let event, event.isDeliveryEvent { details.insert(("INBOX_EVENT", event.rawValue), at: 0) }
        writeLine(message, details)
    }

    private func writeLine(_ message: String, _ details: [(String, String)]) {
        var line = "\(identifier): \(message)"
        if !details.isEmpty {
            line += " [" + details.map { "\($0.0)=\($0.1)" }.joined(separator: " ") + "]"
        }
        line += "\n"
        FileDescriptor.standardError.write(all: line)
    }

    /// Where a handler's stdout and stderr go (an `OutputRelay` writes them there): a journal stream under the
    /// handler's identifier, shared by all its runs and non-blocking (the agent must never wait for journald), or
    /// the agent's own stderr without a journal. Each relay holds on to the stream it was given, so a reset (after
    /// a journald restart) never closes one still being written.
    public func outputStream(for handler: String) -> HandlerOutputStream {
        if let stream = streams[handler] { return stream }
        if target == .journal {
            let result = sys_sd_journal_stream_fd(handler, CInt(LogPriority.info.rawValue), 0)
            if result >= 0 {
                let fd = FileDescriptor(rawValue: result)
                // sd_journal_stream_fd(3) makes it without FD_CLOEXEC; handlers never get it (they write to a pipe).
                try? fd.setCloseOnExec()
                try? fd.setNonBlocking()
                let stream = HandlerOutputStream(fd, owned: true)
                streams[handler] = stream
                return stream
            }
        }
        return HandlerOutputStream(.standardError, owned: false)
    }

    /// Drops the cached streams, e.g. after journald restarted and the socket broke; each is closed once the
    /// relays still writing to it are done.
    public func resetStreams() {
        streams.removeAll()
    }
}

/// A handler's journal stream (or the agent's stderr), closed when the logger and every relay using it let go.
public final class HandlerOutputStream {
    public let descriptor: FileDescriptor
    private let owned: Bool

    init(_ descriptor: FileDescriptor, owned: Bool) {
        self.descriptor = descriptor
        self.owned = owned
    }

    deinit { if owned { descriptor.close() } }
}

/// One journal entry as `KEY=value` fields in one buffer, sent with one sd_journal_sendv(3).
struct JournalEntry {
    private var bytes: [UInt8] = []
    private var ranges: [Range<Int>] = []

    init() {
        bytes.reserveCapacity(512)
        ranges.reserveCapacity(16)
    }

    mutating func append(_ key: String, _ value: String) {
        let start = bytes.count
        bytes.append(contentsOf: key.utf8)
        bytes.append(UInt8(ascii: "="))
        bytes.append(contentsOf: value.utf8)
        ranges.append(start..<bytes.count)
    }

    /// false when journald could not take it (no socket, or the message was refused).
    mutating func send() -> Bool {
        let ranges = ranges
        return bytes.withUnsafeMutableBytes { buffer in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: ranges.count) { iov in
                for (index, range) in ranges.enumerated() {
                    iov[index] = iovec(iov_base: buffer.baseAddress! + range.lowerBound, iov_len: range.count)
                }
                return sys_sd_journal_sendv(iov.baseAddress!, CInt(ranges.count)) >= 0
            }
        }
    }
}
