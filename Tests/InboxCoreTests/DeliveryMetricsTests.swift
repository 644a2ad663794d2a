import Testing
@testable import InboxCore

@Suite("The dispatcher's counters and histograms")
struct DeliveryMetricsTests {
    typealias Outcome = DeliveryMetrics.Outcome

    /// One thing the dispatcher sees, fed to a lifecycle and to the metrics as `Dispatcher.perform` feeds them.
    enum Step: Sendable {
        /// A slot was free and its handler started (an attempt, 3 ms after its queueing).
        case started
        /// A slot was free but its handler could not be started.
        case startFailed
        /// The handler ended after 2 s; `violation` when it changed its copy.
        case exited(DeliveryOutcome, violation: String? = nil)
        case tampered, retryDue, handlerRemoved, fileGone, drain, timeout, grace
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var maxAttempts = 3
        let steps: [Step]
        let counts: [Outcome: Int]
        let attempts: Int
        /// Attempts that ran and ended (the run histogram's count).
        let runs: Int
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "handled at the first attempt", steps: [.started, .exited(.exited(0))],
             counts: [.handled: 1], attempts: 1, runs: 1),
        Case(name: "a retry, then handled",
             steps: [.started, .exited(.exited(1)), .retryDue, .started, .exited(.exited(0))],
             counts: [.retry: 1, .handled: 1], attempts: 2, runs: 2),
        Case(name: "given up after its only attempt", maxAttempts: 1, steps: [.started, .exited(.exited(1))],
             counts: [.failed: 1], attempts: 1, runs: 1),
        Case(name: "a handler that could not start: a retry, no attempt, no run", steps: [.startFailed],
             counts: [.retry: 1], attempts: 0, runs: 0),
        Case(name: "a changed copy", steps: [.started, .exited(.exited(0), violation: "size 1 → 0")],
             counts: [.violated: 1], attempts: 1, runs: 1),
        Case(name: "another writer before the start", steps: [.tampered],
             counts: [.withdrawn: 1], attempts: 0, runs: 0),
        Case(name: "its handler removed while queued", steps: [.handlerRemoved],
             counts: [.released: 1], attempts: 0, runs: 0),
        Case(name: "the file gone before its start", steps: [.fileGone],
             counts: [.released: 1], attempts: 0, runs: 0),
        Case(name: "a drain during a retry wait", steps: [.started, .exited(.exited(1)), .drain],
             counts: [.retry: 1, .released: 1], attempts: 1, runs: 1),
        Case(name: "killed by the drain: kept for the next start",
             steps: [.started, .drain, .exited(.signaled(15))],
             counts: [.released: 1], attempts: 1, runs: 1),
        Case(name: "a failed batch goes again alone",
             steps: [.started, .exited(.batchFailed(.exited(1))), .started, .exited(.exited(0))],
             counts: [.retry: 1, .handled: 1], attempts: 2, runs: 2),
        Case(name: "a late timer after the end counts nothing", maxAttempts: 1,
             steps: [.started, .timeout, .exited(.signaled(15)), .grace, .timeout],
             counts: [.failed: 1], attempts: 1, runs: 1),
    ]

    /// Runs the steps as the dispatcher does: `listed` until the first action after the lifecycle ended.
    static func play(_ steps: [Step], maxAttempts: Int, into metrics: inout DeliveryMetrics, handler: String = "h") {
        var lifecycle = DeliveryLifecycle(policy: RetryPolicy(maxAttempts: maxAttempts))
        var listed = true
        func settle(_ action: DeliveryLifecycle.Action, duration: Duration? = nil) {
            metrics.settled(action, lifecycle: lifecycle, listed: listed, handler: handler, duration: duration)
            if lifecycle.hasEnded { listed = false }
        }
        for step in steps {
            switch step {
            case .started:
                guard case .launch = lifecycle.start() else { Issue.record("did not start"); return }
                metrics.attemptStarted(handler, queuedFor: .milliseconds(3))
            case .startFailed:
                _ = lifecycle.start()
                settle(lifecycle.startFailed("no such file"), duration: .microseconds(50))
            case .exited(let outcome, let violation):
                settle(lifecycle.exited(outcome, violation: violation), duration: .seconds(2))
            case .tampered: settle(lifecycle.tampered("W"))
            case .retryDue: settle(lifecycle.retryDue())
            case .handlerRemoved: settle(lifecycle.handlerRemoved())
            case .fileGone: settle(lifecycle.fileGone())
            case .drain: settle(lifecycle.drain())
            case .timeout: settle(lifecycle.timeoutPassed())
            case .grace: settle(lifecycle.graceExpired())
            }
        }
    }

    @Test(arguments: cases)
    func countsOneDelivery(_ test: Case) {
        var metrics = DeliveryMetrics()
        Self.play(test.steps, maxAttempts: test.maxAttempts, into: &metrics)
        let row = metrics.handlers["h"] ?? DeliveryMetrics.Counts()
        for outcome in Outcome.allCases {
            #expect(row[outcome] == test.counts[outcome] ?? 0, "\(outcome)")
        }
        #expect(row.attempts == test.attempts)
        #expect(metrics.queueLatency.count == test.attempts)
        #expect(metrics.queueLatency.sumUSec == Int64(test.attempts) * 3_000)
        #expect(metrics.runDuration.count == test.runs)
        #expect(metrics.runDuration.sumUSec == Int64(test.runs) * 2_000_000)
    }

    /// Each value and the bucket (index into the counts, the last +Inf) it falls in: a bound holds its own value.
    static let buckets: [(Int64, Int)] = [
        (0, 0), (-5, 0), (1_000, 0), (1_001, 1), (2_500, 1), (59_999_999, 14), (60_000_000, 14), (60_000_001, 15),
        (.max, 15),
    ]

    @Test(arguments: buckets)
    func aValueFallsInTheFirstBucketThatHoldsIt(_ value: Int64, _ bucket: Int) {
        var histogram = DeliveryMetrics.Histogram(boundsUSec: DeliveryMetrics.queueLatencyBounds)
        histogram.observe(value)
        #expect(histogram.counts.firstIndex(of: 1) == bucket)
        #expect(histogram.count == 1 && histogram.sumUSec == max(0, value))
    }

    @Test func cumulativeCountsEndWithTheCount() {
        var histogram = DeliveryMetrics.Histogram(boundsUSec: [10, 20, 30])
        for value: Int64 in [5, 10, 15, 25, 25, 100, .max] { histogram.observe(value) }
        #expect(histogram.counts == [2, 1, 2, 2])
        #expect(histogram.cumulativeCounts == [2, 3, 5, 7])
        #expect(histogram.count == 7)
        #expect(histogram.sumUSec == .max, "the sum saturates")
    }

    @Test func handlersPastTheLimitAreCountedAsOther() {
        var metrics = DeliveryMetrics(handlerLimit: 2)
        for handler in ["a", "b", "c", "a", "d"] {
            Self.play([.started, .exited(.exited(0))], maxAttempts: 3, into: &metrics, handler: handler)
        }
        #expect(metrics.handlers.keys.sorted() == ["a", "b", "other"])
        #expect(metrics.handlers["a"]?.handled == 2 && metrics.handlers["b"]?.handled == 1)
        #expect(metrics.handlers["other"]?.handled == 2 && metrics.handlers["other"]?.attempts == 2)
    }

    @Test func aThousandHandlersAndMoreStayBounded() {
        var metrics = DeliveryMetrics()
        for index in 0..<5_000 { metrics.attemptStarted("org.example.h\(index)", queuedFor: .zero) }
        #expect(metrics.handlers.count == DeliveryMetrics.defaultHandlerLimit + 1)
        #expect(metrics.handlers[DeliveryMetrics.otherHandler]?.attempts == 5_000 - DeliveryMetrics.defaultHandlerLimit)
    }

    @Test func writtenAndReadBackInTheStatus() throws {
        var status = AgentStatusTests.sample
        status.startedAtUSec = 1_763_999_000_000_000
        Self.play([.started, .exited(.exited(1)), .retryDue, .started, .exited(.exited(0))], maxAttempts: 3,
                  into: &status.metrics, handler: "org.example.\"quoted\"")
        Self.play([.tampered], maxAttempts: 3, into: &status.metrics, handler: "org.example.b")
        let text = status.json()
        #expect(JSON.validate(Array(text.utf8)) == nil)
        #expect(text.contains(#"{"handler":"org.example.b","attempts":0,"handled":0,"retry":0,"failed":0,"#
                              + #""violated":0,"withdrawn":1,"released":0}"#), "\(text)")
        let read = try AgentStatus.parse(Array(text.utf8)).get()
        #expect(read == status)
        #expect(read.metrics.queueLatency.count == 2 && read.metrics.runDuration.sumUSec == 4_000_000)
    }

    /// What an older agent wrote, or a member that does not fit together, reads as no counts.
    static let tolerated: [String] = [
        #"{"pid":1}"#,
        #"{"pid":1,"metrics":null}"#,
        #"{"pid":1,"metrics":{"handlers":[{"attempts":3}],"queueLatency":{"boundsUSec":[1,2],"counts":[1]}}}"#,
        #"{"pid":1,"metrics":{"queueLatency":{"boundsUSec":[2,1],"counts":[0,0,0]},"runDuration":"x"}}"#,
        #"{"pid":1,"metrics":{"queueLatency":{"boundsUSec":[1],"counts":[-1,0]}}}"#,
    ]

    @Test(arguments: tolerated)
    func missingOrMalformedMetricsReadAsNone(_ text: String) throws {
        let status = try AgentStatus.parse(Array(text.utf8)).get()
        #expect(status.metrics == DeliveryMetrics())
        #expect(status.startedAtUSec == 0)
    }

    @Test func anotherAgentsBucketsAreKept() throws {
        let text = #"{"metrics":{"runDuration":{"boundsUSec":[5,50],"counts":[1,2,3],"sumUSec":700}}}"#
        let metrics = try AgentStatus.parse(Array(text.utf8)).get().metrics
        #expect(metrics.runDuration.boundsUSec == [5, 50] && metrics.runDuration.cumulativeCounts == [1, 3, 6])
        #expect(metrics.runDuration.sumUSec == 700)
    }
}
