/// What runs, counted the way the limits count it, and whether one more attempt of a given kind may start: the
/// dispatcher's one record of running deliveries by handler and kind (its counts are read from here).
///
/// - A process of its own (`process`, `alone`, `unit`) counts against the agent's `MaxConcurrent=` and its handler's
///   process limit (the handler's `MaxConcurrent=`, else the agent's).
/// - A batch's file counts against its handler's capacity, processes × `BatchSize=`; the batch launcher starts at most
///   the handler's process limit of batch processes, which the agent's limit does not count.
/// - A handler's files that go alone after a failed batch and its batch processes share that handler's process limit:
///   each file waiting for or in a batch may be a process of its own (a batch of one), so up to the limit of them
///   count as processes.
/// - A resident delivery counts against `Instances=` × `MaxInFlight=` only.
public struct LaunchSlots: Sendable, Hashable {
    /// The agent's MaxConcurrent=.
    public let maxProcesses: Int
    /// Running attempts with a process of their own, of every handler.
    public private(set) var processes = 0
    /// Running attempts of every kind.
    public private(set) var running = 0
    private var handlers: [String: Use] = [:]

    private struct Use: Sendable, Hashable {
        var own = 0
        var shared = 0
    }

    public init(maxProcesses: Int) {
        self.maxProcesses = max(1, maxProcesses)
    }

    /// Whether an attempt of `kind` of `registration`'s handler may start now.
    public func admits(_ kind: LaunchKind, of registration: HandlerRegistration) -> Bool {
        let use = handlers[registration.identifier] ?? Use()
        let limit = processLimit(of: registration)
        switch kind {
        case .process, .unit, .print:
            return processes < maxProcesses && use.own < limit
        case .alone:
            return processes < maxProcesses && use.own + min(use.shared, limit) < limit
        case .batch:
            return use.shared < limit * registration.batchSize && use.own + min(use.shared + 1, limit) <= limit
        case .resident:
            return use.shared < registration.instances * registration.maxInFlight
        }
    }

    /// The handler's process limit: its MaxConcurrent=, else the agent's.
    public func processLimit(of registration: HandlerRegistration) -> Int {
        max(1, registration.maxConcurrent ?? maxProcesses)
    }

    /// An attempt of `kind` of `handler` started.
    public mutating func take(_ kind: LaunchKind, handler: String) {
        change(kind, handler: handler, by: 1)
    }

    /// An attempt of `kind` of `handler` ended (the kind it started as).
    public mutating func release(_ kind: LaunchKind, handler: String) {
        change(kind, handler: handler, by: -1)
    }

    /// Running attempts of `handler`.
    public func running(of handler: String) -> Int {
        handlers[handler].map { $0.own + $0.shared } ?? 0
    }

    private mutating func change(_ kind: LaunchKind, handler: String, by delta: Int) {
        var use = handlers[handler] ?? Use()
        if kind.ownsProcess {
            use.own += delta
            processes += delta
        } else {
            use.shared += delta
        }
        running += delta
        precondition(use.own >= 0 && use.shared >= 0, "an attempt of \(handler) released that was never taken")
        handlers[handler] = use.own == 0 && use.shared == 0 ? nil : use
    }
}
