import Glibc

/// Where log entries go: structured to journald, or as text lines on stderr when there is none.
public enum LogTarget: String, Sendable {
    case auto, journal, stderr

    /// journald's native socket; sd_journal_sendv(3) sends there.
    static let journalSocket = "/run/systemd/journal/socket"

    /// `auto` follows systemd's convention (sd_journal_stream_fd(3), systemd.exec(5) on `JOURNAL_STREAM`): the journal
    /// when stderr is already a journal stream, or when it is no terminal (a service, a pipe); a terminal gets the
    /// lines. Either way only when journald's socket exists: without it there is nothing to send to.
    public func resolved(stderr: StandardErrorKind = .current) -> LogTarget {
        guard self == .auto else { return self }
        let socket = try? FileSystem.status(Self.journalSocket, followingLinks: false)
        guard socket.map({ ($0.st_mode & S_IFMT) == S_IFSOCK }) == true else { return .stderr }
        return stderr == .terminal ? .stderr : .journal
    }
}

/// What the agent's stderr is: the journal stream the service manager connected it to, a terminal, or anything else.
public enum StandardErrorKind: Sendable {
    case journalStream, terminal, other

    /// fd 2 of this process. `JOURNAL_STREAM` is `DEVICE:INODE` of the stream systemd connected; it counts only
    /// while fd 2 is still that very socket (a child that inherits the variable may have its stderr redirected).
    public static var current: StandardErrorKind {
        let stream = CurrentProcess.environmentVariables["JOURNAL_STREAM"]
        if let stream, let st = try? FileDescriptor.standardError.status(), stream == "\(st.st_dev):\(st.st_ino)" {
            return .journalStream
        }
        return sys_isatty(2) == 1 ? .terminal : .other
    }
}

/// The agent's one logger: a message, a priority, an event kind and `INBOX_*` fields.
public final class Logger {
    public let target: LogTarget
    public let threshold: LogPriority
    public let identifier: String
    /// What fd 2 is: when it is the journal stream, whatever is said on stderr is in the journal already.
    public let standardError: StandardErrorKind
    /// journald's native socket for handlers' output, shared by their relays; replaced when journald restarts.
    private var handlerJournal: HandlerJournal?
    private var lastFailedJournalConnect: Duration?
    /// Where journald listens for handlers' output (a test's stand-in elsewhere).
    var handlerJournalPath = LogTarget.journalSocket
    /// Set while journald does not take entries (stopped, restarting): they go to stderr, said once each way.
    private var journalDown = false

    public init(target: LogTarget, threshold: LogPriority = .info, identifier: String = "inboxd",
                standardError: StandardErrorKind = .current) {
        self.standardError = standardError
        self.target = target.resolved(stderr: standardError)
        self.threshold = threshold
        self.identifier = identifier
    }

    /// Whether entries reach the journal and nothing of them a terminal: the case where an error that ends the
    /// agent, and the line saying it is ready, must be said on stderr too.
    private var stderrSeesNothing: Bool { target == .journal && standardError != .journalStream }

    /// An error that stops the agent: logged, and also on stderr when entries go to the journal, so that whoever
    /// started it in a terminal or a script sees why it is gone.
    public func fatal(_ message: String) {
        log(.error, message)
        if stderrSeesNothing && !journalDown { writeLine(message, []) }
    }

    /// One line on stderr, not an entry: what a person who started the agent by hand needs to hear (that it is
    /// ready, where its entries go). Not written when stderr is the journal stream, where it would be noise.
    public func announce(_ line: String) {
        guard standardError != .journalStream else { return }
        writeLine(line, [])
    }

    public func isEnabled(_ priority: LogPriority) -> Bool { priority >= threshold }

    /// Told of every entry about a file (`JournalEvent.isDeliveryEvent`) as it is written: the senders' view
    /// (`SenderViews`) is made of these entries, so every outcome, wherever it is decided, reaches it.
    public var observer: ((JournalEvent, _ message: String, JournalFields) -> Void)?

    /// Writes one entry. Field names are the journal's (`INBOX_FILE`, `CONFIG_LINE`, ...).
    public func log(_ priority: LogPriority, _ message: String, event: JournalEvent? = nil,
                    fields: KeyValuePairs<String, String?> = [:]) {
        guard isEnabled(priority) else { return }
        if let observer, let event, event.isDeliveryEvent { observer(event, message, fields.map { ($0.key, $0.value) }) }
        write(priority, message, event: event, fields: fields)
    }

    /// The same with fields built up in code (a delivery's common fields and those of one event).
    public func log(_ priority: LogPriority, _ message: String, event: JournalEvent? = nil,
                    fields: [(key: String, value: String?)]) {
        guard isEnabled(priority) else { return }
        if let observer, let event, event.isDeliveryEvent { observer(event, message, fields) }
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
        if target == .journal {
            let result = entry.send()
            if result >= 0 {
                if journalDown {
                    journalDown = false
                    writeLine("the journal answers again; logging there", [])
                }
                return
            }
            if !journalDown {
                journalDown = true
                writeLine("the journal does not answer (\(Errno(rawValue: -result))); logging to stderr until it is back", [])
            }
        }
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

    /// Where a handler's stdout and stderr go (an `OutputRelay` writes them there): journald's native socket, one
    /// entry per line (`HandlerJournal`), or the agent's own stderr without a journal.
    func handlerOutput() -> OutputRelay.Destination {
        guard target == .journal else { return .stream(.standardError) }
        if let handlerJournal { return .journal(handlerJournal) }
        return handlerJournal(replacing: nil).map { .journal($0) } ?? .stream(.standardError)
    }

    /// A new connection to journald in place of `failed` (journald restarted: it listens on a new socket), shared by
    /// every relay; nil while it cannot be made (then output goes to stderr). After a connection failed, the next is
    /// tried a second later at the earliest.
    func handlerJournal(replacing failed: HandlerJournal?) -> HandlerJournal? {
        if let handlerJournal, handlerJournal !== failed { return handlerJournal }
        let now = EventLoop.now()
        if let last = lastFailedJournalConnect, now - last < .seconds(1) { return nil }
        handlerJournal = HandlerJournal(path: handlerJournalPath)
        lastFailedJournalConnect = handlerJournal == nil ? now : nil
        return handlerJournal
    }
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

    /// sd_journal_sendv(3)'s result: negative errno when journald could not take it (no socket, nobody listening on
    /// it, or the message was refused).
    mutating func send() -> CInt {
        let ranges = ranges
        return bytes.withUnsafeMutableBytes { buffer in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: ranges.count) { iov in
                for (index, range) in ranges.enumerated() {
                    iov[index] = iovec(iov_base: buffer.baseAddress! + range.lowerBound, iov_len: range.count)
                }
                return sys_sd_journal_sendv(iov.baseAddress!, CInt(ranges.count))
            }
        }
    }
}
