import InboxCore
import InboxSystem

/// `inboxctl retry ID|--all`: moves a file from failed/ or unhandled/ back into the drop Inbox, where the agent
/// takes it as a new arrival.
enum RetryCommand: InboxctlCommand {
    static let name = "retry"
    static let summary = "Send a failed or unhandled file to its handler again"
    static let usage = "inboxctl retry ID|--all [--json]"

    static let help = """
        OVERVIEW: Send a failed or unhandled file to its handler again.

        The file is moved back into the drop Inbox (to a hidden name, then into place), without
        the agent's failure attributes, so the agent takes it as a new arrival with a new delivery
        id. ID is a file name in failed/ or unhandled/ (failed/NAME or unhandled/NAME when both
        hold one), or a delivery id (32 hex digits, as in the journal's INBOX_DELIVERY_ID).
        --all retries everything in failed/; unhandled/ is left alone, as the agent dispatches
        it by itself once a registration for its type appears. A package document (a directory)
        goes back whole, the same way.

        USAGE: \(usage)

        ARGUMENTS:
          <ID>                    A file name in failed/ or unhandled/, or a delivery id

        OPTIONS:
          --all                   Retry every file in failed/
          --inbox DIR             The drop Inbox (default: the agent's first Inbox)
          --json                  Print one JSON document: where each file went, or why not
        \(AgentOptions.help(omitting: ["--inbox"]))
          -h, --help              Show help information

        """

    static let options = CommandOptions([.flag("--all"), .value("--inbox"), .flag("--json")], agentOptions: true,
                                        positionals: .atMostOne)

    /// The usage errors that the options one by one cannot show.
    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        let all = parsed.flag("--all")
        if all == !parsed.positionals.isEmpty {
            throw UsageError(message: all ? "give either ID or --all, not both" : "missing ID (or --all)")
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        let all = parsed.flag("--all"), id = parsed.positionals.first, inbox = parsed.value("--inbox")
        let json = parsed.flag("--json")
        guard let resolved = parsed.agent.resolve() else { return 1 }
        let settings = resolved.settings, hint = resolved.hint("inboxctl retry")
        guard let held = HeldFiles(state: settings.stateDirectory, hint: hint) else { return 1 }
        guard let target = settings.openDropInbox(inbox, hint: hint) else { return 1 }
        let files: [HeldFiles.Entry]
        if all {
            files = held.entries(in: held.failed)
            if files.isEmpty {
                Inboxctl.write("inboxctl: nothing in \(held.failed?.path ?? StateDirectories.paths(of: settings.stateDirectory).failed)\n"
                               + hint, to: 2)
                if json { Inboxctl.write(#"{"retried":[],"failed":[]}"# + "\n", to: 1) }
                return 0
            }
        } else {
            guard let found = held.find(id ?? "", gone: { expiry(of: $0, state: settings.stateDirectory) }) else { return 1 }
            files = found
        }
        var status: CInt = 0
        var retried: [String] = [], failed: [String] = []
        var bound: [String: Directory] = [:]
        for entry in files {
            let from = entry.directory.child(entry.name)
            // A file of a bound Inbox ([Inbox] Handler=) goes back to that Inbox, so that its binding still holds.
            var into = target
            if inbox == nil, let path = recordedBoundInbox(entry, settings) {
                if bound[path] == nil { bound[path] = settings.openDropInbox(path) }
                into = bound[path] ?? target
            }
            switch retry(entry, into: into, limits: settings.packageLimits) {
            case .success(let path):
                if !json { Inboxctl.write("\(from) -> \(path)\n", to: 1) }
                retried.append(JSONText.object([("from", JSON.quote(from)), ("to", JSON.quote(path))]))
            case .failure(let error):
                Inboxctl.write("inboxctl: cannot retry \(from): \(error)\n", to: 2)
                failed.append(JSONText.object([("from", JSON.quote(from)), ("error", JSON.quote(error.description))]))
                status = 1
            }
        }
        if json {
            Inboxctl.write(JSONText.object([("retried", "[" + retried.joined(separator: ",") + "]"),
                                            ("failed", "[" + failed.joined(separator: ",") + "]")]) + "\n", to: 1)
        }
        return status
    }

    /// The bound Inbox the agent recorded on the file (`AgentAttribute.inbox`), if it is still one of the configured
    /// bound Inboxes.
    static func recordedBoundInbox(_ entry: HeldFiles.Entry, _ settings: AgentSettings) -> String? {
        guard !settings.bindings.isEmpty, case .opened(let file) = entry.directory.openHeld(Array(entry.name.utf8)) else {
            return nil
        }
        defer { file.descriptor.close() }
        let path = ExtendedAttributes(file.descriptor).readString(AgentAttribute.inbox, limit: 4096)
        return path.flatMap { settings.bindings[$0] != nil ? $0 : nil }
    }

    /// What the journal says of an entry `id` names (a delivery id, or a name in failed/ or unhandled/) that the agent
    /// removed after its KeepFailedSec=/KeepUnhandledSec=; nil when it has no such entry.
    static func expiry(of id: String, state: String) -> String? {
        let paths = StateDirectories.paths(of: state)
        var matches: [[String]] = []
        if let delivery = AgentAttribute.validDeliveryID(id.lowercased()) { matches.append(["INBOX_DELIVERY_ID=\(delivery)"]) }
        if !id.isEmpty, !id.hasPrefix("."), id.split(separator: "/").count <= 2 {
            let name = id.hasPrefix("failed/") || id.hasPrefix("unhandled/") ? String(id.split(separator: "/")[1]) : id
            if !id.hasPrefix("unhandled/") { matches.append(["INBOX_FILE=\(paths.failed)/\(name)"]) }
            if !id.hasPrefix("failed/") { matches.append(["INBOX_FILE=\(paths.unhandled)/\(name)"]) }
        }
        let event = ["SYSLOG_IDENTIFIER=inboxd", "MESSAGE_ID=\(JournalEvent.expired.messageID)"]
        for match in matches {
            guard let entry = JournalSearch.latest(matching: event + match, fields: [
                "INBOX_FILE", "INBOX_DELIVERY_ID", "INBOX_KEPT_IN", "INBOX_KEEP_SETTING"]) else { continue }
            let place = entry["INBOX_KEPT_IN"].map { "\($0)/" } ?? "failed/ and unhandled/"
            let setting = entry["INBOX_KEEP_SETTING"] ?? "their Keep*Sec="
            let file = entry["INBOX_FILE"].map { " (\($0))" } ?? ""
            let story = entry["INBOX_DELIVERY_ID"].map { "inboxctl log --delivery \($0)" } ?? "journalctl \(match[0])"
            return "\(id) is gone: entries of \(place) are removed after \(setting), and this one\(file) was; "
                + "what became of it: \(story)"
        }
        return nil
    }

    /// Clears the agent's failure record, gives the file back to its sender, and moves it into the Inbox:
    /// first to a hidden name, then into place.
    static func retry(_ entry: HeldFiles.Entry, into inbox: Directory, limits: PackageLimits) -> Result<String, SystemError> {
        let name = Array(entry.name.utf8)
        let file: OpenedFile
        switch entry.directory.openHeld(name) {
        case .opened(let opened): file = opened
        case .gone: return .failure(SystemError("open", path: entry.directory.child(entry.name), errno: .noSuchFile))
        case .refused(let kind):
            return .failure(SystemError("open (a \(kind.rawValue), not a regular file)", path: entry.directory.child(entry.name),
                                        errno: .invalidArgument))
        case .failed(let error): return .failure(error)
        }
        defer { file.descriptor.close() }
        // A package document goes back whole, the same way; a directory that is no package stays: the agent would
        // only move it aside again.
        if file.isDirectory && !file.isPackage {
            return .failure(SystemError("retry (a directory that is no package document: the agent moved it aside "
                                        + "and would again; inboxctl discard removes it)",
                                        path: entry.directory.child(entry.name), errno: .isDirectory))
        }
        let attributes = ExtendedAttributes(file.descriptor)
        // The agent strips its own attributes from a new arrival anyway; removing these here means a file that
        // sits in the Inbox before the agent runs again carries no stale failure.
        for key in [AgentAttribute.failure, AgentAttribute.attempts, AgentAttribute.started] { attributes.remove(key) }
        // As root the agent owns what it holds: give the file back to its sender, whose uid the agent recorded,
        // so the new arrival is not taken as sent by root (INBOX_SOURCE_UID).
        if CurrentProcess.effectiveUserID == 0, let uid = AgentAttribute.delivery(attributes)?.sourceUID,
           uid != file.status.st_uid {
            if file.isDirectory { giveBack(file, to: uid, limits: limits) } else { try? file.descriptor.chown(uid: uid, gid: .max) }
        }
        // Metadata in a sidecar goes back with the file: written beside the name it takes, before it appears.
        var sidecar: [UInt8]?
        if case .read(let bytes) = entry.directory.readSidecar(of: name, owner: file.status.st_uid) { sidecar = bytes }
        let hidden = ".inboxctl-retry-" + SendCommand.randomHex(12)
        // On another filesystem than the state directory, the file is copied to the hidden name (synced), then the
        // very file that was copied is removed.
        let moved: String
        switch file.isDirectory ? transferPackage(entry, file, to: inbox, as: hidden, limits: limits)
            : entry.directory.transfer(name, file: file, to: inbox, preferred: hidden).map({ $0.copy?.close(); return $0.name }) {
        case .success(let name): moved = name
        case .failure(let error): return .failure(error)
        }
        switch inbox.publish(Array(moved.utf8), preferred: FileNames.sanitized(name), sidecar: sidecar) {
        case .success(let placed):
            entry.directory.removeSidecar(of: name)
            return .success(inbox.child(placed))
        case .failure(let error):
            return .failure(SystemError("renameat2", path: inbox.child(moved), errno: error))
        }
    }

    /// Every entry of a package becomes its sender's again (their own document, private to them), through the
    /// descriptors of the very entries checked; a tree that no longer passes the check keeps its entries as they are,
    /// and only its directory, which names its sender to the agent, is given back.
    private static func giveBack(_ package: OpenedFile, to uid: UInt32, limits: PackageLimits) {
        if case .success(let manifest) = PackageTree.check(package.descriptor, limits: limits) {
            _ = PackageTree.handOver(package.descriptor, manifest: manifest, owner: uid, group: nil,
                                     fileMode: 0o600, directoryMode: 0o700)
        } else {
            try? package.descriptor.chown(uid: uid, gid: .max)
        }
    }

    /// A package renamed to `hidden` in the Inbox; on another filesystem copied there (`PackageTree.copy`, synced),
    /// then the very tree that was copied removed.
    private static func transferPackage(_ entry: HeldFiles.Entry, _ package: OpenedFile, to inbox: Directory,
                                        as hidden: String, limits: PackageLimits) -> Result<String, SystemError> {
        let name = Array(entry.name.utf8), path = entry.directory.child(entry.name)
        switch entry.directory.move(name, to: inbox, as: Array(hidden.utf8)) {
        case nil:
            return .success(hidden)
        case .crossDevice?:
            switch PackageTree.copy(package.descriptor, into: inbox, as: Array(hidden.utf8), limits: limits) {
            case .success:
                guard let error = PackageTree.remove(name, in: entry.directory) else { return .success(hidden) }
                _ = PackageTree.remove(Array(hidden.utf8), in: inbox)
                return .failure(SystemError("remove", path: path, errno: error))
            case .failure(.refused(let refusal)):
                _ = PackageTree.remove(Array(hidden.utf8), in: inbox)
                return .failure(SystemError("copy (the package \(refusal.reason))", path: path, errno: .crossDevice))
            case .failure(.failed(let error)):
                _ = PackageTree.remove(Array(hidden.utf8), in: inbox)
                return .failure(error)
            }
        case let error?:
            return .failure(SystemError("renameat2", path: path, errno: error))
        }
    }
}
