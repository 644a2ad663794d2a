import CCups

/// Why a document could not be printed; `description` is the sentence shown after the file's name.
public enum PrintError: Error, Sendable, CustomStringConvertible {
    /// No CUPS server answers (CUPS_SERVER, client.conf, else the local socket): libcups's own words.
    case unreachable(String)
    /// No such destination, or none named and no default.
    case noDestination(String)
    /// The queue is stopped (cupsdisable) or refuses jobs (cupsreject): its name and what it says of itself.
    case stopped(destination: String, reasons: [String], message: String?)
    case notAccepting(destination: String, message: String?)
    /// The destination does not take this document format (and there is no converter to one it takes).
    case unsupportedFormat(destination: String, format: String)
    /// The server refused or failed a request: the operation and `cupsLastErrorString()`.
    case request(operation: String, message: String)
    /// The server no longer knows the job: it ended and was purged (`PreserveJobHistory No`), so how it ended is not
    /// known.
    case jobGone(Int32)
    /// Reading the document failed.
    case system(SystemError)

    public var description: String {
        switch self {
        case .unreachable(let message): "no CUPS server answers (\(message))"
        case .noDestination(let message): message
        case .stopped(let destination, let reasons, let message):
            "\(destination) is stopped" + Self.said(message, reasons) + "; `cupsenable \(destination)` starts it again"
        case .notAccepting(let destination, let message):
            "\(destination) does not accept jobs" + Self.said(message, []) + "; `cupsaccept \(destination)` lets it"
        case .unsupportedFormat(let destination, let format): "\(destination) does not take \(format) documents"
        case .request(let operation, let message): "\(operation) failed: \(message)"
        case .jobGone(let id): "the server keeps no record of job \(id) (PreserveJobHistory No): it ended, how is not known"
        case .system(let error): "\(error)"
        }
    }

    private static func said(_ message: String?, _ reasons: [String]) -> String {
        let reasons = reasons.filter { $0 != "none" }
        var parts: [String] = []
        if let message, !message.isEmpty { parts.append(message) }
        if !reasons.isEmpty { parts.append(reasons.joined(separator: ", ")) }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }

    /// The error libcups recorded last: `unreachable` when it could not connect, else a failed `operation`.
    static func last(_ operation: String) -> PrintError {
        let status = sys_cupsLastError()
        let message = sys_cupsLastErrorString()
        if status == IPP_STATUS_ERROR_SERVICE_UNAVAILABLE { return .unreachable(message) }
        return .request(operation: operation, message: message)
    }
}
