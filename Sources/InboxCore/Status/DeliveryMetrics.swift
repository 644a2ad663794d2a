/// What the dispatcher counts while the agent runs, as `status.json` carries it under `"metrics"` and
/// `inboxctl metrics` prints it: deliveries ended by handler and outcome, attempts started by handler, the time from a
/// delivery's queueing to its handler's start and how long handlers ran. Every event is O(1); memory is bounded by
/// `handlerLimit` rows and the fixed buckets. Counted since the agent started: a restart starts again from zero.
public struct DeliveryMetrics: Sendable, Hashable {
    /// How a delivery (or one attempt of it) ended, as the `outcome` label says it.
    public enum Outcome: String, Sendable, CaseIterable {
        /// Handled: the Inbox copy was removed.
        case handled
        /// An attempt failed and will be tried again (after RetryDelaySec=, alone after a failed batch, or at the
        /// next start when the timer could not be set).
        case retry
        /// Given up on: in failed/.
        case failed
        /// Its handler changed the copy it may only read and delete: in failed/ as evidence.
        case violated
        /// Another process opened the copy for writing: in failed/, not the handler's doing.
        case withdrawn
        /// Left for someone else: routed again, gone before its handler started, or kept for the next start.
        case released

        init(_ end: DeliveryLifecycle.End) {
            switch end {
            case .handled: self = .handled
            case .failed: self = .failed
            case .violated: self = .violated
            case .withdrawn: self = .withdrawn
            case .released: self = .released
            }
        }
    }

    /// One handler's counters.
    public struct Counts: Sendable, Hashable {
        public var attempts = 0
        public var handled = 0
        public var retry = 0
        public var failed = 0
        public var violated = 0
        public var withdrawn = 0
        public var released = 0

        public init() {}

        public subscript(outcome: Outcome) -> Int {
            get {
                switch outcome {
                case .handled: handled
                case .retry: retry
                case .failed: failed
                case .violated: violated
                case .withdrawn: withdrawn
                case .released: released
                }
            }
            set {
                switch outcome {
                case .handled: handled = newValue
                case .retry: retry = newValue
                case .failed: failed = newValue
                case .violated: violated = newValue
                case .withdrawn: withdrawn = newValue
                case .released: released = newValue
                }
            }
        }
    }

    /// Observations in fixed buckets, each bucket's own count (not cumulative): `counts[i]` holds the values at most
    /// `boundsUSec[i]` and above the bound before it; the last count is the values above every bound (+Inf).
    public struct Histogram: Sendable, Hashable {
        /// Upper bounds in microseconds, ascending.
        public let boundsUSec: [Int64]
        public private(set) var counts: [Int]
        public private(set) var sumUSec: Int64 = 0

        public init(boundsUSec: [Int64]) {
            precondition(zip(boundsUSec, boundsUSec.dropFirst()).allSatisfy { $0 < $1 }, "bounds not ascending")
            self.boundsUSec = boundsUSec
            counts = Array(repeating: 0, count: boundsUSec.count + 1)
        }

        /// Values observed.
        public var count: Int { counts.reduce(0, +) }

        /// The counts as Prometheus gives them: each bucket with every one below it, the last one `count`.
        public var cumulativeCounts: [Int] {
            var total = 0
            return counts.map { total += $0; return total }
        }

        /// Counts one value; a negative one (a clock that went back) as zero. Linear over the few fixed bounds.
        public mutating func observe(_ microseconds: Int64) {
            let value = max(0, microseconds)
            counts[boundsUSec.firstIndex { value <= $0 } ?? boundsUSec.count] += 1
            let (sum, overflow) = sumUSec.addingReportingOverflow(value)
            sumUSec = overflow ? .max : sum
        }

        /// `{"boundsUSec":[...],"counts":[...],"sumUSec":N}`.
        public var json: String {
            "{\"boundsUSec\":[\(boundsUSec.map(String.init).joined(separator: ","))],"
                + "\"counts\":[\(counts.map(String.init).joined(separator: ","))],\"sumUSec\":\(sumUSec)}"
        }

        /// Reads what `json` wrote, with the writer's bounds; nil when it is missing or does not fit together.
        init?(_ value: JSONValue?) {
            guard let bounds = value?["boundsUSec"]?.array?.compactMap(\.int),
                  let counts = value?["counts"]?.array?.compactMap(\.int), counts.count == bounds.count + 1,
                  zip(bounds, bounds.dropFirst()).allSatisfy({ $0 < $1 }), counts.allSatisfy({ $0 >= 0 }) else {
                return nil
            }
            boundsUSec = bounds.map(Int64.init)
            self.counts = counts
            sumUSec = Int64(max(0, value?["sumUSec"]?.int ?? 0))
        }
    }

    /// Queue latency buckets, in seconds: 1 ms to a minute.
    public static let queueLatencyBounds: [Int64] = [
        1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
        1_000_000, 2_500_000, 5_000_000, 10_000_000, 30_000_000, 60_000_000,
    ]
    /// Handler run buckets, in seconds: 10 ms to ten minutes.
    public static let runDurationBounds: [Int64] = [
        10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
        30_000_000, 60_000_000, 120_000_000, 300_000_000, 600_000_000,
    ]
    /// Handlers are few (one per registration), but a table a reload after reload can add to is bounded all the same.
    public static let defaultHandlerLimit = 1024
    /// The row that counts the handlers past the limit.
    public static let otherHandler = "other"

    /// Rows by handler identifier; at most `handlerLimit` of them and `otherHandler`.
    public private(set) var handlers: [String: Counts] = [:]
    /// From a delivery's queueing (first, or again after its retry was due) to its handler's start.
    public private(set) var queueLatency = Histogram(boundsUSec: DeliveryMetrics.queueLatencyBounds)
    /// How long each attempt's handler ran, from its start to its exit (or its answer).
    public private(set) var runDuration = Histogram(boundsUSec: DeliveryMetrics.runDurationBounds)
    public let handlerLimit: Int

    public init(handlerLimit: Int = DeliveryMetrics.defaultHandlerLimit) {
        self.handlerLimit = handlerLimit
    }

    /// The row a handler is counted in: its own, or `otherHandler` once the table is full.
    private func row(_ handler: String) -> String {
        handlers[handler] != nil || handlers.count < handlerLimit ? handler : Self.otherHandler
    }

    /// An attempt's handler started, `queuedFor` after its delivery was queued.
    public mutating func attemptStarted(_ handler: String, queuedFor: Duration) {
        handlers[row(handler), default: Counts()].attempts += 1
        queueLatency.observe(queuedFor.microsecondsClamped)
    }

    /// The dispatcher carried out `action` for a delivery whose lifecycle is now `lifecycle`; `listed` says the
    /// dispatcher still held it (an ended lifecycle is counted once, the first time), `duration` how long the attempt
    /// ran when the action answers its end.
    public mutating func settled(_ action: DeliveryLifecycle.Action, lifecycle: DeliveryLifecycle, listed: Bool,
                                 handler: String, duration: Duration?) {
        if let outcome = Self.outcome(of: action, lifecycle: lifecycle, listed: listed) {
            handlers[row(handler), default: Counts()][outcome] += 1
        }
        if let duration, Self.ran(action) { runDuration.observe(duration.microsecondsClamped) }
    }

    /// What an action counts as: the delivery's end, a retry, or nothing (a signal, a timer, a late report).
    public static func outcome(of action: DeliveryLifecycle.Action, lifecycle: DeliveryLifecycle,
                               listed: Bool) -> Outcome? {
        if case .ended(let end) = lifecycle.state { return listed ? Outcome(end) : nil }
        switch action {
        case .retry, .requeueAlone: return .retry
        default: return nil
        }
    }

    /// Whether an action answers the end of an attempt whose handler ran (not one that could not be started).
    static func ran(_ action: DeliveryLifecycle.Action) -> Bool {
        let outcome: DeliveryOutcome?
        switch action {
        case .complete(let ended), .retry(_, let ended), .reportViolation(_, let ended), .requeueAlone(let ended):
            outcome = ended
        case .fail(_, let ended), .withdraw(_, let ended):
            outcome = ended
        case .keepForNextStart:
            return true
        case .launch, .reroute, .signal, .enqueue, .cancelRetry, .none:
            return false
        }
        guard let outcome else { return false }
        if case .spawnFailed = outcome { return false }
        return true
    }

    /// The `"metrics"` member's value: handlers sorted by identifier.
    public var json: String {
        let rows = handlers.sorted { $0.key < $1.key }.map { handler, counts in
            "{\"handler\":\(JSON.quote(handler)),\"attempts\":\(counts.attempts),"
                + Outcome.allCases.map { "\"\($0.rawValue)\":\(counts[$0])" }.joined(separator: ",") + "}"
        }
        return "{\"handlers\":[\(rows.joined(separator: ","))],"
            + "\"queueLatency\":\(queueLatency.json),\"runDuration\":\(runDuration.json)}"
    }

    /// Reads what `json` wrote; what is missing or malformed is empty, so an older agent's file reads as no counts.
    public init(_ value: JSONValue?) {
        self.init()
        for row in value?["handlers"]?.array ?? [] {
            guard let handler = row["handler"]?.string else { continue }
            var counts = Counts()
            counts.attempts = max(0, row["attempts"]?.int ?? 0)
            for outcome in Outcome.allCases { counts[outcome] = max(0, row[outcome.rawValue]?.int ?? 0) }
            handlers[handler] = counts
        }
        if let histogram = Histogram(value?["queueLatency"]) { queueLatency = histogram }
        if let histogram = Histogram(value?["runDuration"]) { runDuration = histogram }
    }
}
