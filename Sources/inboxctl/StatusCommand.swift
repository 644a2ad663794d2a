import InboxCore
import InboxSystem

/// `inboxctl status [--json]`: what the agent is doing, from the status file it keeps in its runtime directory.
/// `inboxctl status FILE|ID`: what became of one of this user's files (`SenderView`).
enum StatusCommand: InboxctlCommand {
    static let name = "status"
    static let summary = "Show what the agent is doing"
    static let usage = "inboxctl status [FILE|ID] [--cluster] [--json] [--runtime-dir DIR] [agent options]"

    static let help = """
        OVERVIEW: Show what the agent is doing.

        Reads status.json, which the agent keeps current in its runtime directory (written
        atomically): the Inboxes it watches and any that are missing, the queue, the deliveries in flight (handler, file,
        age, attempt), the files in failed/ and unhandled/, whether handlers are sandboxed
        with Landlock, content sniffing, and when the registrations were last loaded. Exits 1
        when the agent is not running.

        With FILE or ID, what became of one of your own files: a name you sent (the path 'inboxctl
        send' printed will do) or its delivery id, as 'inboxctl list --mine' lists them: queued,
        waiting for a retry (and when the next attempt is due), running, done, failed, unhandled or
        refused, with the reason. Exits 1 when no such file of yours is known.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE|ID>               One of your files, by name or delivery id

        With --cluster, the cluster the agent takes part in ([Cluster] in inboxd.conf), as its
        children last saw it: the connection, what waits on this host, per handler the deliveries
        waiting in the stream and handed out (in flight) and the hosts that work for it (a handler
        no host works for is marked), and the hosts present, those that stopped reporting marked.
        Exits 1 when the agent takes part in no cluster.

        OPTIONS:
          --cluster               Show the cluster
          --json                  Print the status file as the agent wrote it
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.flag("--json"), .flag("--cluster")], agentOptions: true,
                                        positionals: .atMostOne)

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let resolved = parsed.agent.resolve() else { return 1 }
        if let query = parsed.positionals.first { return file(query, resolved, json: parsed.flag("--json")) }
        guard let (bytes, status) = read(resolved, command: "inboxctl status") else { return 1 }
        if parsed.flag("--cluster") {
            guard let cluster = status.cluster else {
                Inboxctl.write("inboxctl: inboxd (pid \(status.pid)) takes part in no cluster (no [Cluster] in its "
                               + "inboxd.conf)\n", to: 2)
                return 1
            }
            if parsed.flag("--json") {
                Inboxctl.write(cluster.json + "\n", to: 1)
            } else {
                Inboxctl.write(renderCluster(cluster, now: WallClock.now), to: 1)
            }
            return 0
        }
        if parsed.flag("--json") {
            Inboxctl.write(String(decoding: bytes, as: UTF8.self), to: 1)
            return 0
        }
        Inboxctl.write(render(status, now: WallClock.now), to: 1)
        return 0
    }

    /// The running agent's status file, as written and as read; nil once stderr says why there is none (no status
    /// file, not JSON, or its agent is gone), for exit status 1. `command` is named in the other instance's hint.
    static func read(_ resolved: AgentOptions.Resolved, command: String) -> (bytes: [UInt8], status: AgentStatus)? {
        let path = resolved.settings.runtimeDirectory + "/" + AgentStatus.fileName, hint = resolved.hint(command)
        let bytes: [UInt8]
        switch readBounded(path, limit: 4 << 20) {
        case .success(let read): bytes = read
        case .failure(let error):
            Inboxctl.write("inboxd is not running (no status file: \(path): \(error))\n" + hint, to: 2)
            return nil
        }
        let status: AgentStatus
        switch AgentStatus.parse(bytes) {
        case .success(let value): status = value
        case .failure(let error):
            Inboxctl.write("inboxctl: \(path) is not valid JSON: \(error)\n", to: 2)
            return nil
        }
        let pid = status.pid
        guard pid > 0, Signals.processExists(pid) else {
            Inboxctl.write("inboxd (pid \(pid)) is not running; \(path) is left from it\n" + hint, to: 2)
            return nil
        }
        return (bytes, status)
    }

    /// `status FILE|ID`: one of this user's files, each that the name or id matches.
    static func file(_ query: String, _ resolved: AgentOptions.Resolved, json: Bool) -> CInt {
        let command = "inboxctl status " + LogCommand.quoted(query)
        guard let view = SenderView.read(resolved, command: command) else { return 1 }
        let matches = view.files.filter { $0.matches(query) }
        guard !matches.isEmpty else {
            var message = "inboxctl: no file or delivery '\(query)' of yours is known (\(SenderView.whose(resolved)))"
            // Still in a drop Inbox under that name: the agent has not taken it (yet), or left it there.
            let name = query.split(separator: "/").last.map(String.init) ?? query
            if let inbox = resolved.settings.inboxes.first(where: { inbox in
                (try? Directory(searchOnly: inbox)).flatMap { try? $0.status(of: Array(name.utf8)) } != nil
            }) {
                message += "; \(inbox)/\(name) is in the Inbox, not taken by the agent (yet)"
            }
            Inboxctl.write(message + "\n" + resolved.hint(command), to: 2)
            return 1
        }
        if json {
            Inboxctl.write(SenderView.json(view, files: matches, instance: resolved.choice.instance), to: 1)
            return 0
        }
        let now = WallClock.now
        Inboxctl.write(matches.map { SenderView.detail($0, now: now) }.joined(separator: "\n"), to: 1)
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
        for inbox in status.crossMountInboxes {
            lines.append(field("Warning", "\(inbox) is on another mount than \(status.stateDirectory): its files are "
                               + "copied, not moved; links and FIFOs are left in place"))
        }
        lines.append(field("Sandbox", status.landlockABI > 0 ? "Landlock ABI \(status.landlockABI)"
                                                             : "no Landlock (permissions and the after-exit check only)"))
        if !status.contentSniffing {
            lines.append(field("Sniffing", "off (ContentSniffing=no)"))
        } else if let sniffer = status.sniffer {
            lines.append(field("Sniffing", "libmagic \(sniffer.libmagic) (pid \(sniffer.pid)) after "
                               + "\(sniffer.ruleSections) shared-mime-info rules (first \(sniffer.rulesExtent) bytes)"))
            lines.append(field("Sniff cost", SniffPath.allCases.map { path in
                let tally = sniffer.costs[path]
                return "\(path.rawValue) \(tally.files)" + (tally.files == 0 ? "" : " (\(tally.meanMicroseconds) µs each)")
            }.joined(separator: ", ")))
        }
        let loadedAt = status.registrationsLoadedAtUSec
        lines.append(field("Registrations", "\(status.registrations), loaded \(timestamp(loadedAt)) "
                           + "(\(duration(now - loadedAt)) ago)"))
        lines.append(field("Queue", "\(status.queued) waiting, \(status.inFlight.count) running"
                           + (status.retrying.isEmpty ? "" : ", \(status.retrying.count) waiting for a retry")))
        if !status.inFlight.isEmpty {
            let rows = status.inFlight.map { run -> [String] in
                [run.handler, run.file, duration(run.ageUSec + sinceWritten), String(run.attempt), String(run.pid)]
            }
            lines += table(header: ["HANDLER", "FILE", "RUNNING", "ATTEMPT", "PID"], rows: rows).map { "  " + $0 }
        }
        if !status.retrying.isEmpty {
            let rows = status.retrying.map { waiting -> [String] in
                [waiting.handler, waiting.file, String(waiting.attempt), nextAttempt(waiting.nextAttemptUSec, now: now),
                 waiting.reason]
            }
            lines += table(header: ["HANDLER", "FILE", "ATTEMPT", "NEXT ATTEMPT", "REASON"], rows: rows).map { "  " + $0 }
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
        if status.pending > 0 {
            lines.append(field("pending/", "\(status.pending) waiting for a choice of handler (inboxctl list pending)"))
        }
        if status.leftInPlace > 0 {
            lines.append(field("Left in place", "\(status.leftInPlace) (cannot be moved aside: inboxctl list failed)"))
        }
        if let cluster = status.cluster { lines.append(field("Cluster", clusterSummary(cluster))) }
        lines += status.limits.lines.map { field($0.name, $0.value) }
        lines += status.stalls.lines.map { field($0.name, $0.value) }
        lines.append(field("As of", "\(timestamp(written)) (\(duration(sinceWritten)) ago)"))
        return lines.joined(separator: "\n") + "\n"
    }

    /// "office as worker-1 (work): connected to nats://10.0.0.5:4222; 3 to publish" — one line for `status`.
    static func clusterSummary(_ cluster: ClusterStatus) -> String {
        var text = "\(cluster.name) as \(cluster.host) (\(cluster.roles.map(\.rawValue).joined(separator: ", "))): "
        if let state = cluster.state {
            text += state.connected ? "connected to \(state.server ?? "a server")"
                : "unreachable" + (state.error.map { " (\($0))" } ?? "")
        } else {
            text += "not connected yet"
        }
        if cluster.toPublish > 0 { text += "; \(cluster.toPublish) to publish" }
        if cluster.fromCluster > 0 { text += "; \(cluster.fromCluster) from the cluster" }
        return text + " (inboxctl status --cluster)"
    }

    /// `status --cluster`: the connection, per handler the stream's deliveries and who serves them, the hosts.
    static func renderCluster(_ cluster: ClusterStatus, now: Int64) -> String {
        var lines = ["Cluster \(cluster.name), this host \(cluster.host) ("
                     + cluster.roles.map(\.rawValue).joined(separator: ", ") + ")"]
        let state = cluster.state
        lines.append(field("Connection", state.map { $0.connected ? "connected to \($0.server ?? "a server")"
                                         : "unreachable" + ($0.error.map { ": \($0)" } ?? "") } ?? "not connected yet"))
        lines.append(field("Here", "\(cluster.toPublish) to publish, \(cluster.fromCluster) from the cluster"))
        let handlers = (state?.handlers ?? []).sorted { $0.handler < $1.handler }
        if handlers.isEmpty {
            lines.append(field("Handlers", "none in the stream"))
        } else {
            let rows = handlers.map { handler -> [String] in
                let hosts = cluster.hosts(serving: handler.handler, now: now)
                return [handler.handler, String(handler.pending), handler.inFlight.map(String.init) ?? "-",
                        String(handler.redelivered),
                        hosts.isEmpty ? (handler.hasConsumer ? "none reporting" : "none (no host works for it)")
                                      : hosts.joined(separator: " ")]
            }
            lines += table(header: ["HANDLER", "PENDING", "IN FLIGHT", "REDELIVERED", "HOSTS"], rows: rows)
                .map { "  " + $0 }
        }
        let hosts = (state?.hosts ?? []).sorted { ($0.host, $0.roles.map(\.rawValue).joined()) < ($1.host, $1.roles.map(\.rawValue).joined()) }
        if !hosts.isEmpty {
            lines.append(field("Hosts", "\(hosts.count)"))
            let rows = hosts.map { host -> [String] in
                let silent = now - host.lastSeenUSec > ClusterStatus.silenceUSec
                return [host.host, host.roles.map(\.rawValue).joined(separator: ","), host.version,
                        String(host.inFlight), duration(now - host.lastSeenUSec) + " ago"
                            + (silent ? " (stopped reporting)" : "")]
            }
            lines += table(header: ["HOST", "ROLE", "VERSION", "IN FLIGHT", "LAST SEEN"], rows: rows).map { "  " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// "2026-11-30 17:30:12 UTC (in 4.2 s)", or "(due now)" once the time has passed.
    static func nextAttempt(_ at: Int64, now: Int64) -> String {
        timestamp(at) + (at > now ? " (in \(duration(at - now)))" : " (due now)")
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
