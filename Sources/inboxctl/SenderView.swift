import InboxCore
import InboxSystem

/// A sender's view of their own files (`inboxctl list --mine`, `inboxctl status FILE|ID`): the agent's
/// `senders/<uid>.json` for this user, which only this user can read (docs/design.md, What senders see).
enum SenderView {
    /// This user's view in the instance `resolved` looks at; nil after saying why not (the instance does not run, or
    /// its file cannot be read). No file yet is an empty view: nothing of this user's is known.
    static func read(_ resolved: AgentOptions.Resolved, command: String) -> SenderStatus? {
        let me = CurrentProcess.effectiveUserID
        guard resolved.choice.running else {
            Inboxctl.write("inboxctl: inboxd is not running, so nothing of yours is known to it "
                           + "(no agent in \(resolved.settings.runtimeDirectory))\n" + resolved.hint(command), to: 2)
            return nil
        }
        let path = resolved.settings.runtimeDirectory + "/" + SenderStatus.directoryName + "/" + SenderStatus.fileName(me)
        switch readBounded(path, limit: 4 << 20) {
        case .success(let bytes):
            switch SenderStatus.parse(bytes) {
            case .success(let view): return view
            case .failure(let error):
                Inboxctl.write("inboxctl: \(path) is not valid JSON: \(error)\n", to: 2)
                return nil
            }
        case .failure(let error) where error.errno == .noSuchFile:
            return SenderStatus(uid: me)
        case .failure(let error):
            Inboxctl.write("inboxctl: cannot read what became of your files: \(path): \(error)\n", to: 2)
            return nil
        }
    }

    /// "the system instance (uid 65534)": whose files, where.
    static func whose(_ resolved: AgentOptions.Resolved) -> String {
        "uid \(CurrentProcess.effectiveUserID), \(resolved.choice.instance.title)"
    }

    /// What a file's reason column says: its reason, and for a retry when the next attempt is due.
    static func reason(_ file: SenderStatus.File, now: Int64) -> String {
        var text = file.reason ?? ""
        if let next = file.nextAttemptUSec {
            text += (text.isEmpty ? "" : "; ") + "next attempt " + StatusCommand.nextAttempt(next, now: now)
        }
        return text.isEmpty ? "-" : text
    }

    /// How long ago a file reached its state, "-" when not known.
    static func since(_ file: SenderStatus.File, now: Int64) -> String {
        file.sinceUSec > 0 ? StatusCommand.duration(now - file.sinceUSec) + " ago" : "-"
    }

    /// One file, as `inboxctl status FILE|ID` shows it.
    static func detail(_ file: SenderStatus.File, now: Int64) -> String {
        var lines = ["\(shownName(file)): \(file.state.phrase)" + (file.isPackage ? " (package)" : "")]
        func field(_ name: String, _ value: String) { lines.append("  " + (name + ":").padding(to: 15) + value) }
        if !file.deliveryID.isEmpty { field("Delivery", file.deliveryID) }
        if let handler = file.handler { field("Handler", handler) }
        if file.attempt > 0 { field("Attempt", String(file.attempt)) }
        if file.sinceUSec > 0 {
            field("Since", StatusCommand.timestamp(file.sinceUSec) + " (\(StatusCommand.duration(now - file.sinceUSec)) ago)")
        }
        if let next = file.nextAttemptUSec { field("Next attempt", StatusCommand.nextAttempt(next, now: now)) }
        if let reason = file.reason { field("Reason", reason) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ view: SenderStatus, files: [SenderStatus.File], instance: AgentInstance) -> String {
        var shown = view
        shown.files = files
        let text = shown.json()
        // The agent's own document, with the instance it came from first.
        return "{\"instance\":\(JSON.quote(instance.rawValue))," + text.dropFirst()
    }

    /// A file's name as listed: a package document's with a trailing '/'.
    static func shownName(_ file: SenderStatus.File) -> String { file.isPackage ? file.name + "/" : file.name }
}
