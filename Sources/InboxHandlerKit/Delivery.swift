import InboxCore

/// One file delivered to a resident handler: what a launched handler reads as JSON on stdin, and the Inbox copy as
/// an open read-only descriptor. Answer it once with `finish`; an instance that exits leaves its unanswered
/// deliveries to be tried again.
public final class Delivery {
    /// How it went, with the meaning of a launched handler's exit status.
    public enum Result: String, Sendable {
        /// Handled (exit 0): the agent removes the Inbox copy if it is still there.
        case done
        /// Try again later (exit 75).
        case retry
        /// Failed (any other status): tried again up to the agent's limit, then kept in failed/.
        case failed
    }

    /// The delivery id the answer names.
    public let id: String
    /// The Inbox copy: its path, name and file:// URL.
    public let path: String
    public let name: String
    public let url: String
    /// The document is a package (a directory delivered whole): `descriptor` is the directory, opened
    /// `O_RDONLY|O_DIRECTORY`, to list with fdopendir(3) and read entries from with openat(2); `read` does not apply.
    public let isPackage: Bool
    /// Its UTI and conformance chain, the UTI first.
    public let contentType: String
    public let contentTypes: [String]
    /// What the sender claimed (`user.inbox.source-app`), and the uid the agent saw own the dropped file.
    public let sourceApplication: String?
    public let sourceUID: UInt32?
    /// The host the file arrived at, when it came through a cluster (`INBOX_SOURCE_HOST`); nil for a local one.
    public let sourceHost: String?
    /// The annotation as JSON text, nil when there is none.
    public let annotation: String?
    /// 1 for the first attempt; `redelivered` when an earlier one may have done part of the work.
    public let attempt: Int
    public let redelivered: Bool
    /// Where to copy what the handler keeps.
    public let documents: String
    /// The message as it came (JSON).
    public let json: [UInt8]
    /// The Inbox copy, open read-only (-1 when the message carried none). Closed by `finish`.
    public private(set) var descriptor: Int32
    private let connection: InboxConnection
    private var answered = false

    init?(_ value: JSONValue, raw: [UInt8], file: Int32, connection: InboxConnection) {
        guard let id = value["deliveryID"]?.string, let path = value["file"]?.string else { return nil }
        self.id = id
        self.path = path
        name = value["name"]?.string ?? path.split(separator: "/").last.map(String.init) ?? path
        url = value["url"]?.string ?? "file://" + path
        isPackage = value["package"]?.bool ?? false
        contentType = value["contentType"]?.string ?? "public.data"
        contentTypes = value["contentTypes"]?.array?.compactMap(\.string) ?? [contentType]
        sourceApplication = value["sourceApplication"]?.string
        sourceUID = value["sourceUID"]?.int.flatMap(UInt32.init(exactly:))
        sourceHost = value["sourceHost"]?.string
        annotation = value["annotation"].flatMap { $0 == .null ? nil : $0.jsonText }
        attempt = value["attempt"]?.int ?? 1
        redelivered = value["redelivered"]?.bool ?? false
        documents = value["documents"]?.string ?? ""
        json = raw
        descriptor = file
        self.connection = connection
    }

    deinit { if descriptor >= 0 { sys_close(descriptor) } }

    /// The whole file, read through the descriptor (up to `limit` bytes).
    public func read(limit: Int = 1 << 30) throws -> [UInt8] {
        guard descriptor >= 0 else { throw InboxError(description: "delivery \(id) came without a descriptor") }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while result.count < limit {
            let count = chunk.withUnsafeMutableBytes { sys_read(descriptor, $0) }
            if count < 0 && sys_errno() == 4 { continue }
            if count < 0 { throw InboxError(description: "read \(path): \(sys_strerror(sys_errno()))") }
            if count == 0 { break }
            result += chunk[..<min(count, limit - result.count)]
        }
        return result
    }

    /// Answers the delivery, once (a second answer is ignored here, as the agent would), and closes the descriptor.
    public func finish(_ result: Result, reason: String = "") {
        guard !answered else { return }
        answered = true
        if descriptor >= 0 {
            sys_close(descriptor)
            descriptor = -1
        }
        var answer = "{\"deliveryID\":" + JSON.quote(id) + ",\"result\":\"" + result.rawValue + "\""
        if !reason.isEmpty { answer += ",\"reason\":" + JSON.quote(reason) }
        _ = connection.send(answer + "}")
    }
}

extension JSONValue {
    /// The value written back as JSON text.
    var jsonText: String {
        switch self {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case .string(let text): JSON.quote(text)
        case .array(let items): "[" + items.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { JSON.quote($0.key) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
        }
    }
}
