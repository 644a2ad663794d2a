import Glibc
import InboxCore

/// Each sender's view of their own files (docs/design.md, What senders see): `senders/<uid>.json` in the runtime
/// directory, a `SenderStatus` that only that uid can read. The outcomes come from the journal entries about files
/// (`Logger.observer`): every outcome, wherever it is decided (a handler's end, a refusal at intake, a bound), is one
/// such entry with the sender's uid, so this is their one reader and no decision is made twice. An entry about a
/// package document says so (`INBOX_PACKAGE=1`), and its file is marked as one. The live states are
/// the dispatcher's, taken when the files are written: with the status file, a few times a second at most, and only
/// the files whose contents changed.
///
/// The directory is the agent's, mode 0711: no one else can write in it, or list it to learn who sent anything. Each
/// file is written atomically (a temporary, then rename) with mode 0400 and its sender as owner; a user's own agent
/// writes only its own user's file (it cannot give a file away).
final class SenderViews {
    private let runtimeDirectory: String
    private let isRoot: Bool
    private let me: UInt32
    private var ledger = SenderLedger()
    /// What each uid's file says now (without the time of writing), so that an unchanged view is not written again.
    private var written: [UInt32: SenderStatus] = [:]
    /// The uids that had live files at the last write: when those end, their files are written once more.
    private var hadLive: Set<UInt32> = []
    /// Wall-clock time minus the event loop's clock, taken once: the dispatcher's times become stable wall-clock
    /// times (taken at each write instead, they would differ by microseconds and every view would look changed).
    private let wallClockOffset = WallClock.now - Int64(EventLoop.now().microseconds)

    /// The live files by uid (`Dispatcher.senderFiles`).
    var live: (_ wallClockOffset: Int64) -> [UInt32: [SenderStatus.File]] = { _ in [:] }
    /// An outcome was recorded: the files should be written soon.
    var changed: () -> Void = {}

    init(runtimeDirectory: String, isRoot: Bool = CurrentProcess.isRoot, me: UInt32 = CurrentProcess.effectiveUserID) {
        self.runtimeDirectory = runtimeDirectory
        self.isRoot = isRoot
        self.me = me
    }

    /// One journal entry about a file: recorded when it is an outcome and names its sender.
    func observe(_ event: JournalEvent, message: String, fields: JournalFields) {
        let state: SenderStatus.State
        switch event {
        case .finished: state = .done
        case .failed, .violation: state = .failed
        case .unhandled: state = .unhandled
        case .rejected: state = .refused
        default: return
        }
        var values: [String: String] = [:]
        for (key, value) in fields { if let value { values[key] = value } }
        guard let uid = values["INBOX_SOURCE_UID"].flatMap({ UInt32($0) }) else { return }
        var reason = values["INBOX_REASON"]
        if state == .unhandled {
            reason = values["INBOX_REQUESTED_HANDLER"].map { "no handler \($0) (its sender's choice) is registered" }
                ?? "no handler for \(values["INBOX_CONTENT_TYPE"] ?? "its type")"
        } else if state == .refused && reason == nil {
            reason = message  // a link moved aside, or left in place: the entry's message says which and why
        }
        // The name it was sent as where the entry has it (a refusal names the drop Inbox path), else where it lies.
        let path = values["INBOX_FILE"] ?? values["INBOX_MOVED_TO"] ?? ""
        let name = path.split(separator: "/").last.map(String.init) ?? path
        ledger.record(.init(deliveryID: values["INBOX_DELIVERY_ID"] ?? "", name: name, state: state,
                            handler: state == .refused ? values["INBOX_REQUESTED_HANDLER"] : values["INBOX_HANDLER"],
                            reason: state == .done ? nil : reason, attempt: values["INBOX_ATTEMPT"].flatMap { Int($0) } ?? 0,
                            sinceUSec: WallClock.now, isPackage: values["INBOX_PACKAGE"] == "1"),
                      uid: uid)
        changed()
    }

    /// What a previous run left in failed/ and unhandled/, by sender, read once at start from each file's own
    /// attributes (the delivery record and the failure reason). At most `limit` entries a directory are read: past
    /// that the oldest outcomes are the ledger's to forget anyway.
    func recover(_ state: StateDirectories, limit: Int = 4096) {
        for (directory, kind) in [(state.failed, SenderStatus.State.failed), (state.unhandled, .unhandled)] {
            guard let directory, let names = try? directory.entries() else { continue }
            for name in names.filter({ !FileNames.isHidden($0) }).prefix(limit) {
                // A package document is held whole: its directory carries the records a file does.
                guard case .opened(let file) = directory.openHeld(name) else { continue }
                defer { file.descriptor.close() }
                let attributes = ExtendedAttributes(file.descriptor)
                guard let delivery = AgentAttribute.delivery(attributes) else { continue }
                let reason = attributes.readString(AgentAttribute.failure, limit: 4096)
                    ?? (kind == .unhandled ? "no handler for its type" : "no failure recorded")
                let since = Int64(file.status.st_ctim.tv_sec) * 1_000_000
                ledger.record(.init(deliveryID: delivery.id, name: displayName(name), state: kind, reason: reason,
                                    sinceUSec: since, isPackage: EntryKind(mode: file.status.st_mode) == .directory),
                              uid: delivery.sourceUID)
            }
        }
    }

    /// Writes the file of every sender whose view changed.
    func write() {
        let live = live(wallClockOffset)
        let uids = ledger.takeChanged().union(live.keys).union(hadLive)
        hadLive = Set(live.keys)
        guard !uids.isEmpty else { return }
        guard let runtime = try? Directory.create(path: runtimeDirectory, mode: 0o755),
              let directory = try? runtime.subdirectory(SenderStatus.directoryName, mode: 0o711) else { return }
        let now = WallClock.now
        for uid in uids where isRoot || uid == me {
            var view = ledger.view(of: uid, live: live[uid] ?? [])
            guard view != written[uid] else { continue }
            written[uid] = view
            view.writtenAtUSec = now
            try? directory.writeFile(SenderStatus.fileName(uid), bytes: Array(view.json().utf8), mode: 0o400,
                                     owner: isRoot ? uid : nil)
        }
    }

    /// The views of an agent that stops describe nothing that runs.
    func removeAll() {
        guard let runtime = try? Directory(path: runtimeDirectory) else { return }
        runtime.removeTree(Array(SenderStatus.directoryName.utf8))
    }
}
