import Glibc
import InboxCore

extension Agent {
    /// Writes `status.json` in the runtime directory atomically (temporary file, then rename); `inboxctl status`
    /// reads it. Ages are as of `writtenAtUSec` (wall clock, microseconds since the epoch).
    func writeStatusFile() {
        guard let runtime = try? Directory.create(path: settings.runtimeDirectory, mode: 0o755) else { return }
        let now = EventLoop.now()
        // Wall-clock times, so that a reader can tell how old the file and what it says are.
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        let realtime = Int64(clock.tv_sec) * 1_000_000 + Int64(clock.tv_nsec) / 1000
        let inFlight = running.values.sorted { $0.started < $1.started }.map { run in
            "{\"handler\":\(JSON.quote(run.delivery.handler)),\"file\":\(JSON.quote(run.delivery.fileName)),"
                + "\"deliveryID\":\(JSON.quote(run.delivery.id)),\"attempt\":\(run.delivery.attempts),"
                + "\"pid\":\(run.pid),\"ageUSec\":\((now - run.started).microseconds)}"
        }
        let text = "{\"pid\":\(getpid()),\"phase\":\(JSON.quote(String(describing: phase))),"
            + "\"inboxes\":[\(settings.inboxes.map(JSON.quote).joined(separator: ","))],"
            + "\"stateDirectory\":\(JSON.quote(settings.stateDirectory)),"
            + "\"queued\":\(queue.count),\"inFlight\":[\(inFlight.joined(separator: ","))],"
            + "\"failed\":\(count(failed)),\"unhandled\":\(count(unhandled)),"
            + "\"landlock\":\(landlockABI > 0),\"landlockABI\":\(landlockABI),\"registrations\":\(registrations.registrations.count),"
            + "\"registrationsLoadedAtUSec\":\(realtime - Int64((now - registrationsLoadedAt).microseconds)),"
            + "\"contentSniffing\":\(settings.contentSniffing),"
            + "\"sniffer\":\(sniffer.map { "{\"pid\":\($0.process.pid),\"libmagic\":\(JSON.quote($0.version))}" } ?? "null"),"
            + "\"writtenAtUSec\":\(realtime)}\n"
        let temporary = ".status.json.tmp"
        let fd = openat(runtime.descriptor.rawValue, temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { return }
        let failure = Array(text.utf8).withUnsafeBytes { FileDescriptor(rawValue: fd).write(all: $0) }
        _ = close(fd)
        if failure == nil { _ = renameat(runtime.descriptor.rawValue, temporary, runtime.descriptor.rawValue, "status.json") }
    }

    private func count(_ directory: Directory) -> Int {
        (try? directory.entries().filter { !FileNames.isHidden($0) }.count) ?? 0
    }
}
