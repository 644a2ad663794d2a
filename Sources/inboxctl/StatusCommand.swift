import InboxCore
import InboxSystem

/// `inboxctl status [--json]`: what the agent is doing, from the status file it keeps in its runtime directory.
enum StatusCommand: InboxctlCommand {
    static let name = "status"
    static let summary = "Show what the agent is doing"
    static let usage = "inboxctl status [--json] [--runtime-dir DIR] [agent options]"

    static let help = """
        OVERVIEW: Show what the agent is doing.

        Reads status.json, which the agent keeps current in its runtime directory (written
        atomically): the Inboxes it watches and any that are missing, the queue, the deliveries in flight (handler, file,
        age, attempt), the files in failed/ and unhandled/, whether handlers are sandboxed
        with Landlock, content sniffing, and when the registrations were last loaded. Exits 1
        when the agent is not running.

        USAGE: \(usage)

        OPTIONS:
          --json                  Print the status file as the agent wrote it
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.flag("--json")], agentOptions: true, positionals: .none)

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let settings = parsed.agent.settings() else { return 1 }
        let path = settings.runtimeDirectory + "/" + AgentStatus.fileName
        let bytes: [UInt8]
        switch readBounded(path, limit: 4 << 20) {
        case .success(let read): bytes = read
        case .failure(let error):
            Inboxctl.write("inboxd is not running (no status file: \(path): \(error))\n", to: 2)
            return 1
        }
        let status: AgentStatus
        switch AgentStatus.parse(bytes) {
        case .success(let value): status = value
        case .failure(let error):
            Inboxctl.write("inboxctl: \(path) is not valid JSON: \(error)\n", to: 2)
            return 1
        }
        let pid = status.pid
        guard pid > 0, Signals.processExists(pid) else {
            Inboxctl.write("inboxd (pid \(pid)) is not running; \(path) is left from it\n", to: 2)
            return 1
        }
        if parsed.flag("--json") {
            Inboxctl.write(String(decoding: bytes, as: UTF8.self), to: 1)
            return 0
        }
        Inboxctl.write(render(status, now: WallClock.now), to: 1)
        return 0
    }

    /// The status as a person reads it.
    static func render(_ status: AgentStatus, now: Int64) -> String {
        let written = status.writtenAtUSec == 0 ? now : status.writtenAtUSec
        let sinceWritten = max(0, now - written)
        var lines: [String] = []
        lines.append("inboxd (pid \(status.pid)) \(status.phase)")
        lines.append(field("Inboxes", status.inboxes.isEmpty ? "none" : status.inboxes.joined(separator: " ")))
        if !status.missingInboxes.isEmpty {
            lines.append(field("Missing", status.missingInboxes.joined(separator: " ")
                               + " (gone: nothing is taken until it is back)"))
        }
        lines.append(field("State", status.stateDirectory))
        lines.append(field("Sandbox", status.landlockABI > 0 ? "Landlock ABI \(status.landlockABI)"
                                                             : "no Landlock (permissions and the after-exit check only)"))
        if !status.contentSniffing {
            lines.append(field("Sniffing", "off (ContentSniffing=no)"))
        } else if let sniffer = status.sniffer {
            lines.append(field("Sniffing", "libmagic \(sniffer.libmagic) (pid \(sniffer.pid))"))
        }
        let loadedAt = status.registrationsLoadedAtUSec
        lines.append(field("Registrations", "\(status.registrations), loaded \(timestamp(loadedAt)) "
                           + "(\(duration(now - loadedAt)) ago)"))
        lines.append(field("Queue", "\(status.queued) waiting, \(status.inFlight.count) running"))
        if !status.inFlight.isEmpty {
            let rows = status.inFlight.map { run -> [String] in
                [run.handler, run.file, duration(run.ageUSec + sinceWritten), String(run.attempt), String(run.pid)]
            }
            lines += table(header: ["HANDLER", "FILE", "RUNNING", "ATTEMPT", "PID"], rows: rows).map { "  " + $0 }
        }
        if !status.instances.isEmpty {
            lines.append(field("Resident", "\(status.instances.count) instance\(status.instances.count == 1 ? "" : "s")"))
            let rows = status.instances.map { instance -> [String] in
                [instance.handler, String(instance.pid), String(instance.inFlight), String(instance.served),
                 duration(instance.ageUSec + sinceWritten) + (instance.stopping ? " (stopping)" : "")]
            }
            lines += table(header: ["HANDLER", "PID", "IN FLIGHT", "SERVED", "AGE"], rows: rows).map { "  " + $0 }
        }
        lines.append(field("failed/", String(status.failed)))
        lines.append(field("unhandled/", String(status.unhandled)))
        lines += status.limits.lines.map { field($0.name, $0.value) }
        lines.append(field("As of", "\(timestamp(written)) (\(duration(sinceWritten)) ago)"))
        return lines.joined(separator: "\n") + "\n"
    }

    private static func field(_ name: String, _ value: String) -> String {
        (name.isEmpty ? "" : name + ":").padding(to: 16) + value
    }

    /// Left-aligned columns, two spaces apart.
    static func table(header: [String], rows: [[String]]) -> [String] {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { $0.offset == row.count - 1 ? $0.element : $0.element.padding(to: widths[$0.offset]) }
                .joined(separator: "  ")
        }
    }

    /// "850 ms", "3.2 s", "4 min 5 s", "2 h 3 min".
    static func duration(_ microseconds: Int64) -> String {
        let value = max(0, microseconds)
        if value < 1_000_000 { return "\(value / 1000) ms" }
        if value < 60_000_000 { return "\(value / 1_000_000).\(value / 100_000 % 10) s" }
        let seconds = value / 1_000_000
        if seconds < 3600 { return "\(seconds / 60) min \(seconds % 60) s" }
        return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }

    /// UTC, to the second: "2026-11-30 17:30:12 UTC".
    static func timestamp(_ microseconds: Int64) -> String {
        let time = WallClock.utcComponents(microseconds)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(time.year)-\(two(time.month))-\(two(time.day)) "
            + "\(two(time.hour)):\(two(time.minute)):\(two(time.second)) UTC"
    }
}
