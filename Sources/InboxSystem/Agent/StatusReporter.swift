import Glibc
import InboxCore

/// Says what the agent is doing: `STATUS=` to the service manager and `status.json` (an `AgentStatus`, written
/// atomically) in the runtime directory for `inboxctl status`. During a burst, updates are coalesced to a few a second.
final class StatusReporter {
    private let loop: EventLoop
    private let notifier: ServiceNotifier
    private let runtimeDirectory: String
    private var timer: EventSource?
    /// The status as of now: `now` on the event loop's clock, `wallClockUSec` the same moment as wall-clock time.
    var snapshot: (_ now: Duration, _ wallClockUSec: Int64) -> AgentStatus = { _, _ in AgentStatus() }
    /// "Watching 1 inbox; 3 queued, 2 running"
    var line: () -> String = { "" }

    static let fileName = "status.json"

    init(loop: EventLoop, notifier: ServiceNotifier, runtimeDirectory: String) {
        self.loop = loop
        self.notifier = notifier
        self.runtimeDirectory = runtimeDirectory
    }

    /// Updates both within a quarter second.
    func updateSoon() {
        guard timer == nil else { return }
        timer = try? loop.addTimer(after: .milliseconds(250), accuracy: .milliseconds(50)) { [unowned self] in
            self.timer = nil
            self.notifier.status(self.line())
            self.writeFile()
        }
    }

    /// Writes `status.json` now: a temporary file, then rename.
    func writeFile() {
        guard let runtime = try? Directory.create(path: runtimeDirectory, mode: 0o755) else { return }
        let wallClock = Self.realtimeMicroseconds()
        var status = snapshot(EventLoop.now(), wallClock)
        status.writtenAtUSec = wallClock
        let temporary = ".status.json.tmp"
        let fd = openat(runtime.descriptor.rawValue, temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { return }
        let failure = Array(status.json().utf8).withUnsafeBytes { FileDescriptor(rawValue: fd).write(all: $0) }
        _ = close(fd)
        if failure == nil { _ = renameat(runtime.descriptor.rawValue, temporary, runtime.descriptor.rawValue, Self.fileName) }
    }

    /// A status file left behind would describe an agent that is gone.
    func removeFile() {
        if let runtime = try? Directory(path: runtimeDirectory) { runtime.remove(Array(Self.fileName.utf8)) }
    }

    /// Wall-clock time, so that a reader can tell how old the file and what it says are.
    static func realtimeMicroseconds() -> Int64 {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        return Int64(clock.tv_sec) * 1_000_000 + Int64(clock.tv_nsec) / 1000
    }
}
