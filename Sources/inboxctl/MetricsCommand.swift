import InboxCore
import InboxSystem

/// `inboxctl metrics [--output FILE]`: the agent's counters and gauges from its status file, in the Prometheus text
/// format (`StatusMetrics`), for node_exporter's textfile collector or anything that reads it.
enum MetricsCommand: InboxctlCommand {
    static let name = "metrics"
    static let summary = "Print the agent's metrics for Prometheus"
    static let usage = "inboxctl metrics [--output FILE] [--runtime-dir DIR] [agent options]"

    static let help = """
        OVERVIEW: Print the agent's metrics for Prometheus.

        Reads status.json, as 'inboxctl status' does, and prints it in the Prometheus text format
        (version 0.0.4): deliveries ended by handler and outcome (handled, retry, failed, violated,
        withdrawn, released), attempts started by handler, histograms of the time from a delivery's
        queueing to its handler's start and of how long handlers ran, and gauges of what is queued,
        running, waiting for a retry, in failed/, unhandled/ and pending/, and of resident instances.
        Counters start from zero when the agent starts (inboxd_start_time_seconds says when). Exits 1
        when the agent is not running.

        With --output, the metrics replace FILE whole (written to a hidden temporary name beside it,
        mode 0644, then renamed), so node_exporter's textfile collector never reads a part of it; when
        the agent is not running, FILE says only inboxd_up 0. Nothing is printed.

        USAGE: \(usage)

        OPTIONS:
          --output FILE           Write the metrics to FILE, atomically (mode 0644)
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.value("--output")], agentOptions: true, positionals: .none)

    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if let output = parsed.value("--output"), place(output) == nil {
            throw UsageError(message: "'--output' needs a file name, not '\(output)'", token: output, suggestion: nil)
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let resolved = parsed.agent.resolve() else { return 1 }
        let output = parsed.value("--output")
        guard let (_, status) = StatusCommand.read(resolved, command: "inboxctl metrics") else {
            // The last counts would otherwise stay in the collector's file as if the agent still ran.
            if let output { _ = write(StatusMetrics.notRunning(), to: output) }
            return 1
        }
        let text = StatusMetrics.text(status, nowUSec: WallClock.now)
        guard let output else {
            Inboxctl.write(text, to: 1)
            return 0
        }
        return write(text, to: output) ? 0 : 1
    }

    /// `FILE` as its directory and its name; nil when it names no file ("", "dir/", "..").
    static func place(_ path: String) -> (directory: String, name: String)? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard !name.isEmpty, name != ".", name != ".." else { return nil }
        let directory = String(path.dropLast(name.count))
        return (directory.isEmpty ? "." : directory == "/" ? "/" : String(directory.dropLast()), name)
    }

    /// Replaces the file atomically (`Directory.writeFile`); says why not on stderr.
    private static func write(_ text: String, to path: String) -> Bool {
        guard let (directory, name) = place(path) else { return false }
        do {
            try Directory(path: directory).writeFile(name, bytes: Array(text.utf8), mode: 0o644)
            return true
        } catch {
            Inboxctl.write("inboxctl: cannot write \(path): \(error)\n", to: 2)
            return false
        }
    }
}
