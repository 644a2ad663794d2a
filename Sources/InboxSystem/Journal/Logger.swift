import Glibc
import InboxCore

/// Where log entries go: structured to journald, or as text lines on stderr when there is none.
public enum LogTarget: String, Sendable {
    case auto, journal, stderr

    /// journald's native socket, where the agent sends its entries and its handlers' output. `INBOXD_JOURNAL_SOCKET`
    /// puts a stand-in elsewhere, for tests only (a journal socket that stops reading: docs/design.md, Journal).
    static let journalSocket = CurrentProcess.environmentVariables["INBOXD_JOURNAL_SOCKET"] ?? "/run/systemd/journal/socket"

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
    /// The agent's own entries to journald (with target journal): never waited on.
    private let journal: AgentJournal?
    /// Handlers' output lines dropped while journald did not read (`OutputRelay`).
    var outputLinesDropped = 0

    /// What journald did not read in time: entries that waited, entries and output lines dropped.
    public var stalls: ReaderStalls {
        var stalls = ReaderStalls()
        stalls.journalDelayed = journal?.delayed ?? 0
        stalls.journalDropped = journal?.dropped ?? 0
        stalls.outputLinesDropped = outputLinesDropped
        return stalls
    }

    public init(target: LogTarget, threshold: LogPriority = .info, identifier: String = "inboxd",
                standardError: StandardErrorKind = .current) {
        self.standardError = standardError
        self.target = target.resolved(stderr: standardError)
        self.threshold = threshold
        self.identifier = identifier
        journal = self.target == .journal ? AgentJournal(path: LogTarget.journalSocket) : nil
        journal?.recovered = { [unowned self] lasted, delayed, dropped in
            let tenths = Int((lasted / .milliseconds(100)).rounded())
            // A short wait in a burst is journald catching up: said at debug; a long one, or a loss, is worth a line.
            self.log(dropped > 0 ? .warning : lasted >= .seconds(1) ? .notice : .debug,
                     "journald did not read for \(tenths / 10).\(tenths % 10) s: \(delayed) entries waited, "
                     + "\(dropped) were dropped", fields: ["INBOX_JOURNAL_DELAYED": String(delayed),
                                                         "INBOX_JOURNAL_DROPPED": String(dropped)])
        }
    }

    /// Entries that find journald's queue full wait for room through `loop` (never in a blocking send).
    public func attach(to loop: EventLoop) { journal?.attach(to: loop) }

    /// At exit: what still waits for journald is given a second, then dropped.
    public func finish() { journal?.finish() }

    /// Whether entries reach the journal and nothing of them a terminal: the case where an error that ends the
    /// agent, and the line saying it is ready, must be said on stderr too.
    private var stderrSeesNothing: Bool { target == .journal && standardError != .journalStream }

    /// An error that stops the agent: logged, and also on stderr when entries go to the journal, so that whoever
    /// started it in a terminal or a script sees why it is gone.
    public func fatal(_ message: String) {
        log(.error, message)
        journal?.finish()
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
        if let journal {
            switch journal.send(entry.bytes) {
            case .sent, .delayed, .dropped:
                if journalDown {
                    journalDown = false
                    writeLine("the journal answers again; logging there", [])
                }
                return
            case .failed(let error):
                if !journalDown {
                    journalDown = true
                    writeLine("the journal does not answer (\(error)); logging to stderr until it is back", [])
                }
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

/// One journal entry in journald's native protocol (systemd.journal-fields(7)), built in one buffer and sent as one
/// datagram: `KEY=value` and a newline per field, or, for a value with a newline in it, the key, a newline, the value's
/// length as 64-bit little-endian, the value and a newline (as sd_journal_sendv(3) writes it).
struct JournalEntry {
    private(set) var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(512)
    }

    mutating func append(_ key: String, _ value: String) {
        bytes.append(contentsOf: key.utf8)
        let utf8 = value.utf8
        if utf8.contains(10) {
            bytes.append(10)
            withUnsafeBytes(of: UInt64(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
        } else {
            bytes.append(UInt8(ascii: "="))
        }
        bytes.append(contentsOf: utf8)
        bytes.append(10)
    }
}
