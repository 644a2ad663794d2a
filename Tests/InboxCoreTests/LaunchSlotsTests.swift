import Testing
@testable import InboxCore

/// Every launch kind against every limit: the one decision of how an attempt runs, and what it counts against.
@Suite("Launch kinds and the limits they count against")
struct LaunchSlotsTests {
    /// The handlers of the tables: a plain one, one with MaxConcurrent=, a `%F` one (BatchSize=4), the same with
    /// MaxConcurrent=2, a resident one (Instances=2, MaxInFlight=3), a `Unit=` one.
    static func registration(_ name: String) -> HandlerRegistration {
        let exec = try! ExecCommand(parsing: name.hasPrefix("batch") ? "/bin/h %F" : "/bin/h %f")
        var registration = HandlerRegistration(identifier: name, exec: exec, path: "/etc/inboxd/handlers.d/\(name).handler")
        switch name {
        case "plain": break
        case "capped": registration.maxConcurrent = 2
        case "batch": registration.batchSize = 4
        case "batch-capped":
            registration.batchSize = 4
            registration.maxConcurrent = 2
        case "resident":
            registration.activation = .resident
            registration.instances = 2
            registration.maxInFlight = 3
        case "unit": registration.unit = try! UnitTemplate(parsing: "photo-import@.service")
        case "print": registration.printer = try! PrintQueue(parsing: "office")
        default: fatalError("no handler \(name) in the table")
        }
        return registration
    }

    @Test(arguments: [
        ("plain", false, LaunchKind.process), ("plain", true, .process),
        ("capped", false, .process),
        ("batch", false, .batch), ("batch", true, .alone),
        ("resident", false, .resident), ("resident", true, .resident),
        ("unit", false, .unit), ("unit", true, .unit),
        ("print", false, .print), ("print", true, .print),
    ])
    func theKindComesFromTheRegistrationAndTheDelivery(handler: String, alone: Bool, kind: LaunchKind) {
        #expect(LaunchKind(Self.registration(handler), alone: alone) == kind)
    }

    /// One case: what already runs (handler, kind, how many), the agent's MaxConcurrent=, and whether one more of
    /// `kind` of `handler` may start.
    struct Case: Sendable, CustomTestStringConvertible {
        let running: [(String, LaunchKind, Int)]
        let agent: Int
        let handler: String
        let kind: LaunchKind
        let admitted: Bool
        let line: Int
        var testDescription: String { "line \(line): \(kind) of \(handler)" }

        init(_ running: [(String, LaunchKind, Int)], agent: Int = 4, _ handler: String, _ kind: LaunchKind,
             _ admitted: Bool, line: Int = #line) {
            self.running = running
            self.agent = agent
            self.handler = handler
            self.kind = kind
            self.admitted = admitted
            self.line = line
        }
    }

    static let cases: [Case] = [
        // A process of its own: the agent's limit and the handler's.
        Case([], "plain", .process, true),
        Case([("plain", .process, 3)], "plain", .process, true),
        Case([("plain", .process, 4)], "plain", .process, false),
        Case([("unit", .unit, 2), ("plain", .process, 2)], "plain", .process, false),
        Case([("capped", .process, 1)], "capped", .process, true),
        Case([("capped", .process, 2)], "capped", .process, false),
        Case([("plain", .process, 3)], "capped", .process, true),
        Case([("plain", .process, 4)], "capped", .process, false),
        Case([("capped", .process, 2)], agent: 1, "plain", .process, false),
        // Units are processes too (the service manager's).
        Case([("plain", .process, 3)], "unit", .unit, true),
        Case([("plain", .process, 4)], "unit", .unit, false),
        Case([("batch", .alone, 4)], "unit", .unit, false),
        // A file alone after its batch failed: a process like any, whatever BatchSize= × MaxConcurrent= allows.
        Case([("batch", .alone, 3)], "batch", .alone, true),
        Case([("batch", .alone, 4)], "batch", .alone, false),
        Case([("plain", .process, 4)], "batch", .alone, false),
        Case([("batch-capped", .alone, 2)], "batch-capped", .alone, false),
        Case([("batch-capped", .alone, 1)], "batch-capped", .alone, true),
        Case([("batch", .alone, 4)], agent: 64, "batch", .alone, true),
        // ... and it shares its handler's process limit with the batches: a file in a batch may be a process.
        Case([("batch", .batch, 3)], "batch", .alone, true),
        Case([("batch", .batch, 4)], "batch", .alone, false),
        Case([("batch", .batch, 16)], "batch", .alone, false),
        Case([("batch-capped", .batch, 1), ("batch-capped", .alone, 1)], "batch-capped", .alone, false),
        // Batch files: the handler's capacity, processes × BatchSize=, and not the agent's process count.
        Case([], "batch", .batch, true),
        Case([("plain", .process, 4)], "batch", .batch, true),
        Case([("batch", .batch, 15)], "batch", .batch, true),
        Case([("batch", .batch, 16)], "batch", .batch, false),
        Case([("batch-capped", .batch, 7)], "batch-capped", .batch, true),
        Case([("batch-capped", .batch, 8)], "batch-capped", .batch, false),
        Case([("batch", .batch, 4)], agent: 1, "batch", .batch, false),
        Case([("batch", .batch, 3)], agent: 1, "batch", .batch, true),
        // Batch processes and alone ones together stay within the handler's process limit.
        Case([("batch", .alone, 3), ("batch", .batch, 2)], "batch", .batch, false),
        Case([("batch", .alone, 3)], "batch", .batch, true),
        Case([("batch", .alone, 4)], "batch", .batch, false),
        Case([("batch-capped", .alone, 1), ("batch-capped", .batch, 1)], "batch-capped", .batch, false),
        // Resident deliveries: Instances= × MaxInFlight=, and nothing else.
        Case([("plain", .process, 4)], "resident", .resident, true),
        Case([("resident", .resident, 5)], "resident", .resident, true),
        Case([("resident", .resident, 6)], "resident", .resident, false),
        Case([("resident", .resident, 6)], "plain", .process, true),
        Case([("resident", .resident, 6)], "batch", .batch, true),
        // Other handlers' shared deliveries count against nobody else.
        Case([("batch", .batch, 16)], "batch-capped", .batch, true),
        Case([("batch", .batch, 16)], "plain", .process, true),
    ]

    @Test(arguments: cases)
    func oneMoreStartsOnlyWithinEveryLimitOfItsKind(_ test: Case) {
        var slots = LaunchSlots(maxProcesses: test.agent)
        for (handler, kind, count) in test.running {
            for _ in 0..<count { slots.take(kind, handler: handler) }
        }
        #expect(slots.admits(test.kind, of: Self.registration(test.handler)) == test.admitted)
    }

    @Test func countsFollowWhatStartsAndEnds() {
        var slots = LaunchSlots(maxProcesses: 4)
        for kind in LaunchKind.allCases { slots.take(kind, handler: "h") }
        #expect(slots.running == 6 && slots.processes == 4 && slots.running(of: "h") == 6)
        for kind in LaunchKind.allCases { slots.release(kind, handler: "h") }
        #expect(slots.running == 0 && slots.processes == 0 && slots.running(of: "h") == 0)
        #expect(slots == LaunchSlots(maxProcesses: 4))
    }

    /// Every kind meets its limit after a bounded number of starts, under every agent limit: none escapes.
    @Test(arguments: LaunchKind.allCases, [1, 2, 4, 64])
    func noKindStartsWithoutBound(kind: LaunchKind, agent: Int) {
        let handler = switch kind {
        case .process: "plain"
        case .alone, .batch: "batch"
        case .resident: "resident"
        case .unit: "unit"
        case .print: "print"
        }
        let registration = Self.registration(handler)
        var slots = LaunchSlots(maxProcesses: agent)
        var started = 0
        while slots.admits(kind, of: registration) && started < 10_000 {
            slots.take(kind, handler: handler)
            started += 1
        }
        let bound = switch kind {
        case .process, .alone, .unit, .print: agent
        case .batch: agent * 4
        case .resident: 6
        }
        #expect(started == bound)
        #expect(slots.processes == (kind.ownsProcess ? bound : 0))
    }
}
