/// `inboxctl metrics`: what `status.json` says, as Prometheus metrics (`PrometheusText`). Each part of the status is a
/// section of its own that writes its families; a part the status gains later is one more section in `text`.
public enum StatusMetrics {
    /// The metrics of a running agent's status, `nowUSec` being the reader's wall clock.
    public static func text(_ status: AgentStatus, nowUSec: Int64) -> String {
        var text = PrometheusText()
        agent(status, nowUSec: nowUSec, into: &text)
        deliveries(status.metrics, into: &text)
        queue(status, into: &text)
        if let cluster = status.cluster { self.cluster(cluster, nowUSec: nowUSec, into: &text) }
        return text.text
    }

    /// What is written when no agent runs, so that a collector's file does not keep the last counts as if current.
    public static func notRunning() -> String {
        var text = PrometheusText()
        up(0, into: &text)
        return text.text
    }

    private static func up(_ value: Int, into text: inout PrometheusText) {
        text.family("inboxd_up", .gauge, help: "Whether the agent runs (1) or not (0), as its status file says.",
                    value: String(value))
    }

    /// The agent itself: up, when it started (counters count from then) and how old its status file is.
    private static func agent(_ status: AgentStatus, nowUSec: Int64, into text: inout PrometheusText) {
        up(1, into: &text)
        text.family("inboxd_start_time_seconds", .gauge,
                    help: "When the agent started, in seconds since the epoch; its counters start from zero then.",
                    value: PrometheusText.seconds(status.startedAtUSec))
        text.family("inboxd_status_age_seconds", .gauge,
                    help: "How long ago the agent wrote the status file these metrics are read from.",
                    value: PrometheusText.seconds(max(0, nowUSec - status.writtenAtUSec)))
    }

    /// The dispatcher's counters and histograms (`DeliveryMetrics`).
    private static func deliveries(_ metrics: DeliveryMetrics, into text: inout PrometheusText) {
        let handlers = metrics.handlers.sorted { $0.key < $1.key }
        text.family("inboxd_deliveries_total", .counter,
                    help: "Deliveries that ended, by handler and outcome (retry: an attempt to be tried again), "
                        + "since the agent started.",
                    handlers.flatMap { handler, counts in
            DeliveryMetrics.Outcome.allCases.map { outcome in
                PrometheusText.Sample([("handler", handler), ("outcome", outcome.rawValue)], String(counts[outcome]))
            }
        })
        text.family("inboxd_attempts_total", .counter, help: "Handler attempts started, by handler, since the agent started.",
                    handlers.map { handler, counts in PrometheusText.Sample([("handler", handler)], String(counts.attempts)) })
        text.histogram("inboxd_queue_latency_seconds",
                       help: "Time from a delivery's queueing to its handler's start, since the agent started.",
                       [([], metrics.queueLatency)])
        text.histogram("inboxd_handler_run_seconds",
                       help: "How long handlers ran, from an attempt's start to its end, since the agent started.",
                       [([], metrics.runDuration)])
    }

    /// What the agent holds now.
    private static func queue(_ status: AgentStatus, into text: inout PrometheusText) {
        let gauges: [(String, String, Int)] = [
            ("inboxd_queued", "Deliveries waiting for their handler to start.", status.queued),
            ("inboxd_running", "Deliveries whose handler runs.", status.inFlight.count),
            ("inboxd_retrying", "Deliveries waiting for their next attempt.", status.retrying.count),
            ("inboxd_failed_files", "Files in failed/.", status.failed),
            ("inboxd_unhandled_files", "Files in unhandled/.", status.unhandled),
            ("inboxd_pending_files", "Files in pending/, waiting for a person's choice of handler.", status.pending),
            ("inboxd_resident_instances", "Running instances of resident handlers.", status.instances.count),
        ]
        for (name, help, value) in gauges { text.family(name, .gauge, help: help, value: String(value)) }
    }

    /// The cluster, as this agent's children last saw it (`ClusterStatus`): the connection, what waits here, and per
    /// handler the stream's deliveries.
    private static func cluster(_ cluster: ClusterStatus, nowUSec: Int64, into text: inout PrometheusText) {
        let name = [("cluster", cluster.name)]
        text.family("inboxd_cluster_connected", .gauge,
                    help: "Whether this agent's cluster children are connected to a NATS server (1) or not (0).",
                    [PrometheusText.Sample(name, cluster.state?.connected == true ? "1" : "0")])
        text.family("inboxd_cluster_to_publish", .gauge,
                    help: "Files in this host's outbox, not yet acknowledged by the cluster.",
                    [PrometheusText.Sample(name, String(cluster.toPublish))])
        text.family("inboxd_cluster_from_cluster", .gauge,
                    help: "Deliveries from the cluster this host holds (queued, running, to be answered).",
                    [PrometheusText.Sample(name, String(cluster.fromCluster))])
        let handlers = (cluster.state?.handlers ?? []).sorted { $0.handler < $1.handler }
        text.family("inboxd_cluster_pending", .gauge,
                    help: "Deliveries waiting in the cluster's stream, by handler.",
                    handlers.map { PrometheusText.Sample(name + [("handler", $0.handler)], String($0.pending)) })
        text.family("inboxd_cluster_in_flight", .gauge,
                    help: "Deliveries handed out by the cluster and not yet answered, by handler.",
                    handlers.map { PrometheusText.Sample(name + [("handler", $0.handler)], String($0.inFlight ?? 0)) })
        text.family("inboxd_cluster_redelivered", .gauge,
                    help: "Deliveries the cluster handed out more than once, by handler (its consumer's count).",
                    handlers.map { PrometheusText.Sample(name + [("handler", $0.handler)], String($0.redelivered)) })
        let hosts = cluster.state?.hosts ?? []
        let silent = cluster.silentHosts(now: nowUSec).count
        text.family("inboxd_cluster_hosts", .gauge,
                    help: "Hosts with a presence entry in the cluster, by whether they still report.",
                    [PrometheusText.Sample(name + [("state", "reporting")], String(hosts.count - silent)),
                     PrometheusText.Sample(name + [("state", "silent")], String(silent))])
    }
}
