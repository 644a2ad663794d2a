/// What the agent's print job (`inboxd --print-job`, started for a `Print=` registration) says of itself: one JSON
/// object per line on its stdout, which the agent reads (`PrintLauncher`) and turns into journal entries and the
/// attempt's outcome. Bounded like any message from another process: a line longer than `maximumLine` or a member of
/// the wrong kind is not a report, and text is cut at `maximumText`.
public enum PrintReport: Sendable, Hashable {
    /// The job was created and its document sent: `job` is `QUEUE-ID`; `format` the MIME type sent; `converted` the
    /// generator that made it a PDF first, if one did.
    case submitted(job: String, format: String, converted: String?)
    /// The job ended or stopped being followed: its IPP `job-state` name, pages printed, `job-state-reasons` and the
    /// printer's last message.
    case ended(state: String, pages: Int?, reasons: [String], message: String?)
    /// The destination could not take it now (stopped, holding the job, not accepting, no server): try again later.
    case deferred(String)
    /// It cannot be printed, or its job was canceled or aborted: a failed attempt.
    case failed(String)

    /// The state of a job the server no longer knows (it ended and was purged, `PreserveJobHistory No`): done, though
    /// how it ended is not known.
    public static let purged = "purged"

    /// Whether an `ended` state lets the delivery be done.
    public static func isDone(_ state: String) -> Bool { state == "completed" || state == purged }

    public static let maximumLine = 8192
    public static let maximumText = 1024

    /// One report from one line (its newline removed); nil when it is none.
    public static func parse(_ line: [UInt8]) -> PrintReport? {
        guard line.count <= maximumLine, case .success(let value) = JSONValue.parse(line), case .object = value,
              let event = value["event"]?.string else { return nil }
        func text(_ key: String) -> String? {
            value[key]?.string.map { String($0.unicodeScalars.prefix(maximumText).map(Character.init)) }
        }
        switch event {
        case "submitted":
            guard let job = text("job"), let format = text("format") else { return nil }
            return .submitted(job: job, format: format, converted: text("converted"))
        case "ended":
            guard let state = text("state") else { return nil }
            let reasons = (value["reasons"]?.array ?? []).prefix(32).compactMap(\.string)
                .map { String($0.unicodeScalars.prefix(256).map(Character.init)) }
            return .ended(state: state, pages: value["pages"]?.int, reasons: reasons, message: text("message"))
        case "deferred": return text("reason").map(PrintReport.deferred)
        case "failed": return text("reason").map(PrintReport.failed)
        default: return nil
        }
    }

    /// The line that `parse` reads back, newline included.
    public var line: String {
        let members: [(String, String)]
        switch self {
        case .submitted(let job, let format, let converted):
            members = [("event", JSON.quote("submitted")), ("job", JSON.quote(job)), ("format", JSON.quote(format)),
                       ("converted", converted.map(JSON.quote) ?? "null")]
        case .ended(let state, let pages, let reasons, let message):
            members = [("event", JSON.quote("ended")), ("state", JSON.quote(state)),
                       ("pages", pages.map(String.init) ?? "null"),
                       ("reasons", "[" + reasons.map(JSON.quote).joined(separator: ",") + "]"),
                       ("message", message.map(JSON.quote) ?? "null")]
        case .deferred(let reason):
            members = [("event", JSON.quote("deferred")), ("reason", JSON.quote(reason))]
        case .failed(let reason):
            members = [("event", JSON.quote("failed")), ("reason", JSON.quote(reason))]
        }
        return "{" + members.map { JSON.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}\n"
    }
}
