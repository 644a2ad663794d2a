import Testing
@testable import InboxCore

@Suite("The Prometheus text format and the status as metrics")
struct PrometheusTextTests {
    static let labelValues: [(String, String)] = [
        ("org.example.ocr", "org.example.ocr"),
        ("", ""),
        (#"a\b"#, #"a\\b"#),
        (#"say "hi""#, #"say \"hi\""#),
        ("two\nlines", #"two\nlines"#),
        ("\\\n\"", #"\\\n\""#),
        ("tab\there, é, \u{0}", "tab\there, é, \u{0}"),
    ]

    @Test(arguments: labelValues)
    func labelValuesAreEscaped(_ value: String, _ escaped: String) {
        #expect(PrometheusText.escapeLabelValue(value) == escaped)
    }

    @Test func helpEscapesBackslashAndNewlineButNotQuotes() {
        #expect(PrometheusText.escapeHelp("a \"b\" \\ c\nd") == #"a "b" \\ c\nd"#)
    }

    static let secondsCases: [(Int64, String)] = [
        (0, "0"), (1, "0.000001"), (1_000, "0.001"), (2_500, "0.0025"), (1_000_000, "1"), (2_500_000, "2.5"),
        (60_000_000, "60"), (3_210_000, "3.21"), (1_764_000_000_123_456, "1764000000.123456"), (-1_500_000, "-1.5"),
        (.max, "9223372036854.775807"), (.min, "-9223372036854.775808"),
    ]

    @Test(arguments: secondsCases)
    func microsecondsAreWrittenAsExactSeconds(_ microseconds: Int64, _ text: String) {
        #expect(PrometheusText.seconds(microseconds) == text)
    }

    static let nameCases: [(String, Bool, Bool)] = [
        ("inboxd_up", true, true), ("_x:y", true, false), ("a1", true, true), ("1a", false, false), ("", false, false),
        ("a-b", false, false), ("é", false, false),
    ]

    @Test(arguments: nameCases)
    func metricAndLabelNames(_ name: String, _ metric: Bool, _ label: Bool) {
        #expect(PrometheusText.isName(name, colons: true) == metric)
        #expect(PrometheusText.isName(name, colons: false) == label)
    }

    @Test func aFamilyIsDeclaredOnceBeforeItsSamples() {
        var text = PrometheusText()
        text.family("x_total", .counter, help: "Xs.", [
            PrometheusText.Sample([("handler", "a"), ("outcome", "handled")], "1"),
            PrometheusText.Sample([("handler", "b\"")], "2"),
        ])
        text.family("y", .gauge, help: "Y.", value: "0")
        text.family("z", .gauge, help: "No samples yet.", [])
        #expect(text.text == """
            # HELP x_total Xs.
            # TYPE x_total counter
            x_total{handler="a",outcome="handled"} 1
            x_total{handler="b\\""} 2
            # HELP y Y.
            # TYPE y gauge
            y 0
            # HELP z No samples yet.
            # TYPE z gauge

            """)
    }

    @Test func histogramBucketsAreCumulativeAndEndWithInf() {
        var histogram = DeliveryMetrics.Histogram(boundsUSec: [1_000, 2_500, 1_000_000])
        for value: Int64 in [500, 1_000, 2_000, 3_000_000, 250_000] { histogram.observe(value) }
        var text = PrometheusText()
        text.histogram("lat_seconds", help: "L.", [([], histogram), ([("handler", "h")], histogram)])
        #expect(text.text == """
            # HELP lat_seconds L.
            # TYPE lat_seconds histogram
            lat_seconds_bucket{le="0.001"} 2
            lat_seconds_bucket{le="0.0025"} 3
            lat_seconds_bucket{le="1"} 4
            lat_seconds_bucket{le="+Inf"} 5
            lat_seconds_sum 3.2535
            lat_seconds_count 5
            lat_seconds_bucket{handler="h",le="0.001"} 2
            lat_seconds_bucket{handler="h",le="0.0025"} 3
            lat_seconds_bucket{handler="h",le="1"} 4
            lat_seconds_bucket{handler="h",le="+Inf"} 5
            lat_seconds_sum{handler="h"} 3.2535
            lat_seconds_count{handler="h"} 5

            """)
    }

    static var status: AgentStatus {
        var status = AgentStatusTests.sample
        status.startedAtUSec = 1_764_000_000_000_000
        status.pending = 4
        status.instances = [AgentStatus.Instance(handler: "r", pid: 9, inFlight: 1, served: 2, ageUSec: 5)]
        for (handler, steps) in [("org.example.b", [DeliveryMetricsTests.Step.started, .exited(.exited(0))]),
                                 ("org.example.a", [.started, .exited(.exited(1)), .retryDue, .started, .exited(.exited(0))]),
                                 ("we\"ird\nname", [.tampered])] {
            DeliveryMetricsTests.play(steps, maxAttempts: 3, into: &status.metrics, handler: handler)
        }
        return status
    }

    @Test func theStatusAsMetrics() {
        let text = StatusMetrics.text(Self.status, nowUSec: Self.status.writtenAtUSec + 1_500_000)
        let lines = text.split(separator: "\n").map(String.init)
        for expected in [
            "inboxd_up 1", "inboxd_start_time_seconds 1764000000", "inboxd_status_age_seconds 1.5",
            #"inboxd_deliveries_total{handler="org.example.a",outcome="handled"} 1"#,
            #"inboxd_deliveries_total{handler="org.example.a",outcome="retry"} 1"#,
            #"inboxd_deliveries_total{handler="org.example.b",outcome="failed"} 0"#,
            #"inboxd_deliveries_total{handler="we\"ird\nname",outcome="withdrawn"} 1"#,
            #"inboxd_attempts_total{handler="org.example.a"} 2"#,
            #"inboxd_queue_latency_seconds_bucket{le="0.0025"} 0"#,
            #"inboxd_queue_latency_seconds_bucket{le="0.005"} 3"#,
            #"inboxd_queue_latency_seconds_bucket{le="+Inf"} 3"#,
            "inboxd_queue_latency_seconds_sum 0.009", "inboxd_queue_latency_seconds_count 3",
            #"inboxd_handler_run_seconds_bucket{le="2.5"} 3"#, "inboxd_handler_run_seconds_count 3",
            "inboxd_queued 3", "inboxd_running 1", "inboxd_retrying 1", "inboxd_failed_files 1",
            "inboxd_unhandled_files 2", "inboxd_pending_files 4", "inboxd_resident_instances 1",
        ] {
            #expect(lines.contains(expected), "\(expected) in\n\(text)")
        }
        #expect(Self.check(text) == nil)
        // Sorted by handler, every outcome of each.
        let rows = lines.filter { $0.hasPrefix("inboxd_deliveries_total{") }
        #expect(rows.count == 3 * DeliveryMetrics.Outcome.allCases.count)
        #expect(rows.first?.hasPrefix(#"inboxd_deliveries_total{handler="org.example.a",outcome="handled"}"#) == true)
    }

    @Test func anAgentWithoutCountsIsStillWellFormed() {
        var status = AgentStatus()
        status.writtenAtUSec = 10
        let text = StatusMetrics.text(status, nowUSec: 5)
        #expect(Self.check(text) == nil)
        #expect(text.contains("inboxd_status_age_seconds 0\n"), "a reader's clock behind the agent's is no age")
        #expect(text.contains("# TYPE inboxd_deliveries_total counter\n# HELP inboxd_attempts_total"))
    }

    @Test func noAgent() {
        #expect(StatusMetrics.notRunning() == """
            # HELP inboxd_up Whether the agent runs (1) or not (0), as its status file says.
            # TYPE inboxd_up gauge
            inboxd_up 0

            """)
    }

    /// What the format requires of a document, as a scraper reads it: every family's HELP then TYPE once, before its
    /// samples, which follow together; every sample `name{labels} value` of a declared family. Nil when it holds,
    /// else the first line that breaks it.
    static func check(_ text: String) -> String? {
        guard text.hasSuffix("\n") else { return "no final newline" }
        var declared: [String: String] = [:], current: String?, finished: Set<String> = []
        var lastHelp: String?
        for line in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let words = line.split(separator: " ", maxSplits: 3).map(String.init)
            if line.hasPrefix("# HELP ") {
                guard words.count >= 3, declared[words[2]] == nil else { return line }
                lastHelp = words[2]
            } else if line.hasPrefix("# TYPE ") {
                guard words.count == 4, words[2] == lastHelp, declared[words[2]] == nil,
                      ["counter", "gauge", "histogram"].contains(words[3]) else { return line }
                if let current { finished.insert(current) }
                declared[words[2]] = words[3]
                current = words[2]
            } else {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                guard let family = current, !finished.contains(family) else { return line }
                let suffixes = declared[family] == "histogram" ? ["_bucket", "_sum", "_count"] : [""]
                guard suffixes.contains(where: { family + $0 == name }) else { return line }
                var rest = line.dropFirst(name.count)
                if rest.hasPrefix("{") {
                    guard let close = rest.lastIndex(of: "}") else { return line }
                    rest = rest[rest.index(after: close)...]
                }
                guard rest.hasPrefix(" "), rest.dropFirst() == "+Inf" || Double(rest.dropFirst()) != nil else { return line }
            }
        }
        return nil
    }
}
