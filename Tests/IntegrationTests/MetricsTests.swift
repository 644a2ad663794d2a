import Foundation
import Testing

/// `inboxctl metrics` against a real agent: what it counted, in a format a Prometheus scraper reads, and the file it
/// writes for node_exporter's textfile collector.
@Suite(.serialized)
struct MetricsTests {
    func metrics(_ world: AgentHarness, _ extra: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.inboxctl.path, ["metrics", "--runtime-dir", world.runtime.path, "--state", world.state.path,
                                         "--inbox", world.inbox.path, "--handlers", world.handlers.path] + extra)
    }

    /// The value of the sample written exactly `series` (name and labels), if there is one.
    static func value(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.dropFirst(series.count + 1)) }
    }

    @Test func countsByHandlerAndOutcome() throws {
        let world = try AgentHarness()
        let good = "test.metrics-good.\(world.tag)", bad = "test.metrics-bad.\(world.tag)"
        try world.register(good, contentTypes: "public.plain-text")
        try world.register(bad, contentTypes: "public.png", exit: 1)
        let began = Date().timeIntervalSince1970
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        for index in 1...3 { try world.drop("note\(index).txt", contents: Array("text \(index)".utf8)) }
        for index in 1...2 { try world.drop("photo\(index).png", contents: pngBytes(width: 2, height: UInt32(index))) }

        let handled = #"inboxd_deliveries_total{handler="\#(good)",outcome="handled"}"#
        let failed = #"inboxd_deliveries_total{handler="\#(bad)",outcome="failed"}"#
        var text = ""
        try waitUntil("the metrics count 3 handled and 2 failed") {
            let result = try metrics(world)
            text = result.stdout
            return result.status == 0 && Self.value(text, handled) == 3 && Self.value(text, failed) == 2
                && Self.value(text, "inboxd_running") == 0
        }
        #expect(Self.check(text) == nil, "\(Self.check(text) ?? "")\n\(text)")
        for outcome in ["retry", "failed", "violated", "withdrawn", "released"] {
            #expect(Self.value(text, #"inboxd_deliveries_total{handler="\#(good)",outcome="\#(outcome)"}"#) == 0)
        }
        for outcome in ["handled", "retry", "violated", "withdrawn", "released"] {
            #expect(Self.value(text, #"inboxd_deliveries_total{handler="\#(bad)",outcome="\#(outcome)"}"#) == 0)
        }
        #expect(Self.value(text, #"inboxd_attempts_total{handler="\#(good)"}"#) == 3)
        #expect(Self.value(text, #"inboxd_attempts_total{handler="\#(bad)"}"#) == 2)
        // Every attempt started once after its queueing, and ran once.
        #expect(Self.value(text, "inboxd_queue_latency_seconds_count") == 5)
        #expect(Self.value(text, #"inboxd_queue_latency_seconds_bucket{le="+Inf"}"#) == 5)
        #expect(Self.value(text, "inboxd_handler_run_seconds_count") == 5)
        #expect((Self.value(text, "inboxd_handler_run_seconds_sum") ?? 0) > 0)
        #expect(Self.value(text, "inboxd_up") == 1)
        #expect(Self.value(text, "inboxd_failed_files") == 2)
        #expect(Self.value(text, "inboxd_queued") == 0 && Self.value(text, "inboxd_retrying") == 0)
        #expect(Self.value(text, "inboxd_unhandled_files") == 0 && Self.value(text, "inboxd_pending_files") == 0)
        let started = Self.value(text, "inboxd_start_time_seconds") ?? 0
        #expect(started >= began.rounded(.down) - 1 && started <= Date().timeIntervalSince1970, "\(started)")
        #expect((Self.value(text, "inboxd_status_age_seconds") ?? -1) >= 0)

        // --output: a whole new file put in place by rename, mode 0644; a reader of the old one keeps the old one.
        let directory = world.root.appendingPathComponent("textfile")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("inboxd.prom")
        try "old\n".write(to: file, atomically: false, encoding: .utf8)
        let old = try FileHandle(forReadingFrom: file)
        defer { try? old.close() }
        let written = try metrics(world, ["--output", file.path])
        #expect(written.status == 0 && written.stdout.isEmpty && written.stderr.isEmpty, "\(written.stderr)")
        let contents = try String(contentsOf: file, encoding: .utf8)
        #expect(Self.check(contents) == nil && Self.value(contents, handled) == 3, "\(contents)")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        #expect(String(decoding: old.readDataToEndOfFile(), as: UTF8.self) == "old\n")
        #expect(world.contents(of: directory) == ["inboxd.prom"], "no temporary is left")

        // No agent: exit 1 as `inboxctl status`, and the file no longer shows the last counts.
        world.stop()
        let stopped = try metrics(world, ["--output", file.path])
        #expect(stopped.status == 1)
        #expect(stopped.stderr.hasPrefix("inboxd is not running"), "\(stopped.stderr)")
        let down = try String(contentsOf: file, encoding: .utf8)
        #expect(Self.value(down, "inboxd_up") == 0 && Self.check(down) == nil && !down.contains(good), "\(down)")
        #expect(try metrics(world).status == 1)
    }

    @Test func usageHelpAndCompletion() throws {
        let result = try run(Binaries.inboxctl.path, ["metrics", "--outptu", "x"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            Error: unknown option '--outptu'; did you mean '--output'?
            Usage: inboxctl metrics [--output FILE] [--runtime-dir DIR] [agent options]
              See 'inboxctl help metrics'.

            """)
        let directory = try run(Binaries.inboxctl.path, ["metrics", "--output", "/tmp/"])
        #expect(directory.status == 2 && directory.stderr.hasPrefix("Error: '--output' needs a file name, not '/tmp/'\n"))
        let help = try run(Binaries.inboxctl.path, ["help", "metrics"])
        let flag = try run(Binaries.inboxctl.path, ["metrics", "--help"])
        #expect(help.status == 0 && flag.status == 0 && help.stdout == flag.stdout)
        #expect(help.stdout.hasPrefix("OVERVIEW: Print the agent's metrics for Prometheus."))
        #expect(try CompletionTests.complete(["inboxctl", "met"]) == ["metrics"])
        #expect(try CompletionTests.complete(["inboxctl", "metrics", "--out"]) == ["--output"])
    }

    /// What the text format requires, as a scraper reads it; nil when it holds, else the first line that breaks it:
    /// each family's HELP then TYPE once, before its samples, which follow together; every other line a sample
    /// `name{labels} value` of the family declared last.
    static func check(_ text: String) -> String? {
        guard text.hasSuffix("\n") else { return "no final newline" }
        var types: [String: String] = [:], help: String?, current: String?
        for line in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let words = line.split(separator: " ").map(String.init)
            if line.hasPrefix("# HELP ") {
                guard words.count >= 4, types[words[2]] == nil else { return line }
                help = words[2]
            } else if line.hasPrefix("# TYPE ") {
                guard words.count == 4, words[2] == help, types[words[2]] == nil,
                      ["counter", "gauge", "histogram"].contains(words[3]) else { return line }
                types[words[2]] = words[3]
                current = words[2]
            } else {
                let pattern = #/([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (\S+)/#
                guard let match = line.wholeMatch(of: pattern), let family = current else { return line }
                let name = String(match.1), value = String(match.5)
                let names = types[family] == "histogram" ? ["_bucket", "_sum", "_count"].map { family + $0 } : [family]
                guard names.contains(name), value == "+Inf" || Double(value) != nil else { return line }
            }
        }
        return nil
    }
}
