/// What became of one sender's files, as the agent writes it to `senders/<uid>.json` in its runtime directory (owned
/// by that uid, readable by it alone) and `inboxctl list --mine` and `inboxctl status FILE|ID` read it back: the
/// sender's view of lpq/lpstat. One schema, encoded and decoded here; times are wall-clock microseconds.
public struct SenderStatus: Sendable, Hashable {
    /// The directory in the runtime directory that holds one file per sender uid.
    public static let directoryName = "senders"

    /// The file of `uid` in that directory.
    public static func fileName(_ uid: UInt32) -> String { "\(uid).json" }

    /// Where a file is in its course.
    public enum State: String, Sendable, CaseIterable {
        /// Moved to its handler's container; waiting for a slot.
        case queued
        /// Its last attempt failed; the next is due at `nextAttemptUSec`.
        case retrying
        /// Its handler has it now.
        case running
        /// Its handler handled it (a bounded memory of recent ones).
        case done
        /// Given up on: kept in failed/ with the reason.
        case failed
        /// No handler takes its type (yet): kept in unhandled/.
        case unhandled
        /// The agent would not deliver it (a link, a sender's choice it may not make, a bound): failed/ or left in
        /// place, with the reason.
        case refused

        /// How `inboxctl` says it.
        public var phrase: String {
            switch self {
            case .queued: "queued"
            case .retrying: "waiting for a retry"
            case .running: "running"
            case .done: "done"
            case .failed: "failed"
            case .unhandled: "unhandled"
            case .refused: "refused"
            }
        }
    }

    /// One file of the sender's.
    public struct File: Sendable, Hashable {
        /// The delivery's id (`INBOX_DELIVERY_ID`); empty for an entry the agent never took (a link moved aside).
        public var deliveryID: String
        /// Its name where it lies now (its handler's Inbox, failed/, unhandled/), usually the name it was sent as.
        public var name: String
        public var state: State
        public var handler: String?
        /// Why it is where it is (failed, unhandled, refused, retrying).
        public var reason: String?
        /// The attempt that runs, or that failed last; 0 before the first.
        public var attempt: Int
        /// When it reached this state; 0 when not known (queued and running are as of the file's writing).
        public var sinceUSec: Int64
        /// For `retrying`: when the next attempt is due.
        public var nextAttemptUSec: Int64?
        /// A package document (a directory sent whole); `"package":true` in the file, absent for a file.
        public var isPackage = false

        public init(deliveryID: String, name: String, state: State, handler: String? = nil, reason: String? = nil,
                    attempt: Int = 0, sinceUSec: Int64 = 0, nextAttemptUSec: Int64? = nil, isPackage: Bool = false) {
            self.isPackage = isPackage
            self.deliveryID = deliveryID
            self.name = name
            self.state = state
            self.handler = handler
            self.reason = reason
            self.attempt = attempt
            self.sinceUSec = sinceUSec
            self.nextAttemptUSec = nextAttemptUSec
        }

        /// Whether `query` names this file: its delivery id (any case), or its name (a path's last component).
        public func matches(_ query: String) -> Bool {
            if !deliveryID.isEmpty && query.lowercased() == deliveryID { return true }
            let last = query.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? query
            return !last.isEmpty && last == name
        }
    }

    public var uid: UInt32 = 0
    /// Live files first (running, retrying, queued), then outcomes, the latest first.
    public var files: [File] = []
    /// How many live files there were beyond those listed (a burst: each is listed only up to a bound).
    public var moreLive: Int = 0
    public var writtenAtUSec: Int64 = 0

    public init(uid: UInt32 = 0, files: [File] = [], moreLive: Int = 0) {
        self.uid = uid
        self.files = files
        self.moreLive = moreLive
    }

    /// The file's text: one JSON object and a newline.
    public func json() -> String {
        let files = files.map { file in
            "{\"deliveryID\":\(JSON.quote(file.deliveryID)),\"name\":\(JSON.quote(file.name)),"
                + "\"state\":\(JSON.quote(file.state.rawValue)),"
                + "\"handler\":\(file.handler.map(JSON.quote) ?? "null"),\"reason\":\(file.reason.map(JSON.quote) ?? "null"),"
                + "\"attempt\":\(file.attempt),\"sinceUSec\":\(file.sinceUSec),"
                + "\"nextAttemptUSec\":\(file.nextAttemptUSec.map { String($0) } ?? "null")"
                + (file.isPackage ? ",\"package\":true}" : "}")
        }
        return "{\"uid\":\(uid),\"files\":[\(files.joined(separator: ","))],\"moreLive\":\(moreLive),"
            + "\"writtenAtUSec\":\(writtenAtUSec)}\n"
    }

    /// Reads a file's text; a missing or mistyped member takes its default, an entry of an unknown state is skipped.
    public static func parse(_ bytes: [UInt8]) -> Result<SenderStatus, JSONError> {
        let value: JSONValue
        switch JSONValue.parse(bytes) {
        case .success(let parsed): value = parsed
        case .failure(let error): return .failure(error)
        }
        var status = SenderStatus(uid: UInt32(clamping: value["uid"]?.int ?? 0))
        status.files = (value["files"]?.array ?? []).compactMap { file in
            guard let state = file["state"]?.string.flatMap(State.init(rawValue:)) else { return nil }
            return File(deliveryID: file["deliveryID"]?.string ?? "", name: file["name"]?.string ?? "?", state: state,
                        handler: file["handler"]?.string, reason: file["reason"]?.string,
                        attempt: file["attempt"]?.int ?? 0, sinceUSec: Int64(file["sinceUSec"]?.int ?? 0),
                        nextAttemptUSec: file["nextAttemptUSec"]?.int.map(Int64.init),
                        isPackage: file["package"]?.bool ?? false)
        }
        status.moreLive = value["moreLive"]?.int ?? 0
        status.writtenAtUSec = Int64(value["writtenAtUSec"]?.int ?? 0)
        return .success(status)
    }
}

/// The agent's bounded memory of what became of each sender's files, by uid: the outcomes (done, failed, unhandled,
/// refused), at most `perSender` each, the latest kept, for at most `senders` uids, the least recently changed
/// forgotten first. Live states (queued, running, retrying) are not kept here: they are the dispatcher's, taken when a
/// file is written. Which uids changed since they were last written is kept too.
public struct SenderLedger: Sendable {
    public let perSender: Int
    public let senders: Int
    private var outcomes: [UInt32: [SenderStatus.File]] = [:]
    /// Uids by their last change, oldest first (for forgetting).
    private var order: [UInt32] = []
    public private(set) var changed: Set<UInt32> = []

    public init(perSender: Int = 100, senders: Int = 1024) {
        self.perSender = perSender
        self.senders = senders
    }

    /// Records an outcome: it replaces an earlier one of the same delivery (or, without an id, of the same name).
    public mutating func record(_ file: SenderStatus.File, uid: UInt32) {
        var files = outcomes[uid] ?? []
        files.removeAll { file.deliveryID.isEmpty ? $0.deliveryID.isEmpty && $0.name == file.name
                                                  : $0.deliveryID == file.deliveryID }
        files.insert(file, at: 0)
        if files.count > perSender { files.removeLast(files.count - perSender) }
        outcomes[uid] = files
        if order.last != uid {
            order.removeAll { $0 == uid }
            order.append(uid)
        }
        if order.count > senders {
            let forgotten = order.removeFirst()
            outcomes[forgotten] = nil
            changed.remove(forgotten)
        }
        changed.insert(uid)
    }

    /// The outcomes of `uid`, the latest first.
    public func outcomes(of uid: UInt32) -> [SenderStatus.File] { outcomes[uid] ?? [] }

    /// The uids whose outcomes changed since the last call.
    public mutating func takeChanged() -> Set<UInt32> {
        defer { changed = [] }
        return changed
    }

    /// One sender's view: its live files (at most `liveLimit`, the rest counted), then its outcomes that no live entry
    /// supersedes (a file sent again after it failed is live again).
    public func view(of uid: UInt32, live: [SenderStatus.File], liveLimit: Int = 200) -> SenderStatus {
        let listed = Array(live.prefix(liveLimit))
        let liveIDs = Set(live.map(\.deliveryID))
        let past = outcomes(of: uid).filter { $0.deliveryID.isEmpty || !liveIDs.contains($0.deliveryID) }
        return SenderStatus(uid: uid, files: listed + past, moreLive: live.count - listed.count)
    }
}
