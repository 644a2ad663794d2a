import CNats
import InboxSystem

/// A libnats call that failed: what was asked, libnats's status, the JetStream error code when the server gave one,
/// and the words of `nats_GetLastError` (the server's own, such as `Authorization Violation`, when it refused).
/// Never a crash: every failure of the cluster layer ends as one of these.
public struct NatsError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is, for callers that act on it.
    public enum Kind: Sendable, Equatable {
        /// Nothing answered in time (a request, a fetch, a flush).
        case timeout
        /// No server could be reached at any of the URLs.
        case noServer
        /// The server refused the credentials.
        case authorization
        /// TLS failed: the handshake, the certificate, or one side wants TLS and the other does not.
        case tls
        /// What was asked for does not exist (a stream, a consumer, a message, a key).
        case notFound
        /// The connection is closed, or was lost.
        case connectionClosed
        /// A setting libnats refused before anything was sent (a file it cannot read, a bad URL).
        case invalidSetting
        /// Anything else, the server's JetStream errors among them.
        case other
    }

    /// What was being done: `connect to nats://127.0.0.1:4222`, `publish to inboxd.office.deliver.com.example.notes`.
    public let operation: String
    /// libnats's status code.
    public let status: Int32
    /// libnats's text for the status (`natsStatus_GetText`): `Authentication Violation`, `Timeout`.
    public let statusText: String
    /// The JetStream API error code (`10058`: stream name already in use), 0 when there is none.
    public let jetStreamCode: Int
    /// `nats_GetLastError`'s text, which carries the server's words; empty when libnats had none.
    public let detail: String

    /// One sentence: the operation, then the detail (or the status's text when there is no detail).
    public var description: String {
        var text = "\(operation): \(detail.isEmpty ? statusText : detail)"
        if jetStreamCode != 0 { text += " [JetStream error \(jetStreamCode)]" }
        return text
    }

    /// Whether trying again later may succeed: no server, a timeout, a connection lost, or no responders (nothing
    /// listens on the subject yet, such as a stream not made yet). A refusal by the server is not.
    public var isTransient: Bool {
        switch kind {
        case .timeout, .noServer, .connectionClosed: true
        default: natsStatus(UInt32(bitPattern: status)) == NATS_NO_RESPONDERS
        }
    }

    /// The kind of failure, from the status.
    public var kind: Kind {
        switch natsStatus(UInt32(bitPattern: status)) {
        case NATS_TIMEOUT: .timeout
        case NATS_NO_SERVER: .noServer
        case NATS_CONNECTION_AUTH_FAILED, NATS_NOT_PERMITTED: .authorization
        case NATS_SSL_ERROR, NATS_SECURE_CONNECTION_WANTED, NATS_SECURE_CONNECTION_REQUIRED: .tls
        case NATS_NOT_FOUND: .notFound
        case NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED, NATS_STALE_CONNECTION: .connectionClosed
        case NATS_INVALID_ARG, NATS_ADDRESS_MISSING, NATS_INVALID_SUBJECT, NATS_INVALID_TIMEOUT, NATS_SYS_ERROR: .invalidSetting
        default: jetStreamCode == 10037 || jetStreamCode == 10059 || jetStreamCode == 10014 ? .notFound : .other
        }
    }

    /// A setting refused on this side before libnats was asked (`.invalidSetting`), with words of ours.
    public init(operation: String, refusal detail: String) {
        self.init(operation: operation, status: NATS_INVALID_ARG, detail: detail)
    }

    /// An error made from this side, with a status of libnats's choosing and words of ours.
    init(operation: String, status: natsStatus, jetStreamCode: Int = 0, detail: String) {
        self.operation = operation
        self.status = Int32(bitPattern: status.rawValue)
        self.statusText = sys_natsStatus_GetText(status)
        self.jetStreamCode = jetStreamCode
        self.detail = detail
    }

    /// The same failure, said of another operation (an answer whose flush failed is that answer's failure).
    func named(_ operation: String) -> NatsError {
        NatsError(operation: operation, status: status, statusText: statusText, jetStreamCode: jetStreamCode, detail: detail)
    }

    /// An error from all its parts.
    private init(operation: String, status: Int32, statusText: String, jetStreamCode: Int, detail: String) {
        self.operation = operation
        self.status = status
        self.statusText = statusText
        self.jetStreamCode = jetStreamCode
        self.detail = detail
    }

    /// The error of the call that just returned `status` on this thread: libnats's last error text with it.
    static func last(_ operation: String, _ status: natsStatus, jetStreamCode: jsErrCode = jsErrCode(0)) -> NatsError {
        let (_, text) = sys_nats_GetLastError()
        return NatsError(operation: operation, status: status, jetStreamCode: Int(jetStreamCode.rawValue),
                         detail: Self.trimmed(text ?? ""))
    }

    /// libnats's text without the source location it starts with (`(conn.c:1905): `) and trailing white space.
    static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        if text.hasPrefix("("), let close = text.firstIndex(of: ")"), text[text.index(after: close)...].hasPrefix(": "),
           text[..<close].contains(".c:") {
            text = text[text.index(close, offsetBy: 3)...]
        }
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return String(text)
    }
}

/// C strings that live as long as the pool: what libnats's configuration structs point at during a call. Made with
/// Swift's own allocation, freed when the pool goes.
final class CStringPool {
    /// Every string handed out, to free.
    private var strings: [UnsafeMutablePointer<CChar>] = []
    /// Every array of strings handed out, to free.
    private var arrays: [UnsafeMutablePointer<UnsafePointer<CChar>?>] = []

    /// An empty pool.
    init() {}

    /// Frees every copy: nothing libnats was given may be used after the pool.
    deinit {
        strings.forEach { $0.deallocate() }
        arrays.forEach { $0.deallocate() }
    }

    /// `text` as a NUL-terminated copy.
    func string(_ text: String) -> UnsafePointer<CChar> {
        let bytes = Array(text.utf8)
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (index, byte) in bytes.enumerated() { copy[index] = CChar(bitPattern: byte) }
        copy[bytes.count] = 0
        strings.append(copy)
        return UnsafePointer(copy)
    }

    /// `texts` as an array of copies, as `const char **` with its count alongside.
    func array(_ texts: [String]) -> UnsafeMutablePointer<UnsafePointer<CChar>?> {
        let array = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(texts.count, 1))
        for (index, text) in texts.enumerated() { array[index] = string(text) }
        if texts.isEmpty { array[0] = nil }
        arrays.append(array)
        return array
    }
}

extension Duration {
    /// Whole milliseconds, at least 1: what libnats takes for timeouts and delays (0 would mean none, or is refused).
    var natsMilliseconds: Int64 { max(1, microsecondsClamped / 1000) }

    /// Nanoseconds, as JetStream takes durations (Go's time.Duration): AckWait, the duplicate window, a max age.
    var natsNanoseconds: Int64 {
        let (value, overflow) = microsecondsClamped.multipliedReportingOverflow(by: 1000)
        return overflow ? .max : value
    }
}
