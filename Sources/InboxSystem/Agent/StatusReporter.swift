import InboxCore

/// Says what the agent is doing: `STATUS=` to the service manager and `status.json` (an `AgentStatus`, written
/// atomically) in the runtime directory for `inboxctl status`, and with it each sender's view (`SenderViews`). During a
/// burst, updates are coalesced to a few a second.
final class StatusReporter {
    private let loop: EventLoop
    private let notifier: ServiceNotifier
    private let runtimeDirectory: String
    private let update: DeferredAction
    /// Each sender's view of their files, written with the status file.
    let senders: SenderViews
    /// The status as of now: `now` on the event loop's clock, `wallClockUSec` the same moment as wall-clock time.
    var snapshot: (_ now: Duration, _ wallClockUSec: Int64) -> AgentStatus = { _, _ in AgentStatus() }
    /// "Watching 1 inbox; 3 queued, 2 running"
    var line: () -> String = { "" }

    init(loop: EventLoop, notifier: ServiceNotifier, runtimeDirectory: String) {
        self.loop = loop
        self.notifier = notifier
        self.runtimeDirectory = runtimeDirectory
        senders = SenderViews(runtimeDirectory: runtimeDirectory)
        update = DeferredAction(loop: loop, after: .milliseconds(250), accuracy: .milliseconds(50))
        update.action = { [unowned self] in
            self.notifier.status(self.line())
            self.writeFile()
        }
    }

    /// Updates both within a quarter second.
    func updateSoon() { update.schedule() }

    /// Writes `status.json` now: a temporary file, then rename. Wall-clock times, so that a reader can tell how old
    /// the file and what it says are.
    func writeFile() {
        guard let runtime = try? Directory.create(path: runtimeDirectory, mode: 0o755) else { return }
        let wallClock = WallClock.now
        var status = snapshot(EventLoop.now(), wallClock)
        status.writtenAtUSec = wallClock
        try? runtime.writeFile(AgentStatus.fileName, bytes: Array(status.json().utf8), mode: 0o644)
        senders.write()
    }

    /// A status file left behind would describe an agent that is gone.
    func removeFile() {
        if let runtime = try? Directory(path: runtimeDirectory) { runtime.remove(Array(AgentStatus.fileName.utf8)) }
        senders.removeAll()
    }
}
