import Foundation
import Glibc
@testable import InboxCore
@testable import InboxSystem
import Testing

/// The dispatcher in process, through a fake launcher, on a real event loop and real container files: scheduling
/// order, the limits of every launch kind, timeouts, drain, reload and retry waits, in milliseconds.
@Suite(.serialized) struct DispatcherTests {
    typealias World = DispatcherWorld

    /// One limits case: the handler, the agent's MaxConcurrent=, how many files; how many start at once and as what.
    struct LimitCase: Sendable, CustomTestStringConvertible {
        let registration: HandlerRegistration
        let agent: Int
        let files: Int
        let startsAtOnce: Int
        let kind: LaunchKind
        var testDescription: String { "\(registration.identifier), agent \(agent): \(startsAtOnce) of \(files) as \(kind)" }
    }

    static let limitCases: [LimitCase] = [
        LimitCase(registration: World.handler("plain"), agent: 3, files: 10, startsAtOnce: 3, kind: .process),
        LimitCase(registration: World.handler("capped", maxConcurrent: 2), agent: 8, files: 10, startsAtOnce: 2,
                  kind: .process),
        LimitCase(registration: World.handler("capped-high", maxConcurrent: 10), agent: 3, files: 10, startsAtOnce: 3,
                  kind: .process),
        // Batch files: processes × BatchSize=, not the agent's process count.
        LimitCase(registration: World.handler("batch", batchSize: 4), agent: 2, files: 20, startsAtOnce: 8, kind: .batch),
        LimitCase(registration: World.handler("batch-capped", batchSize: 4, maxConcurrent: 1), agent: 4, files: 20,
                  startsAtOnce: 4, kind: .batch),
        // A unit instance per attempt: a process, the service manager's.
        LimitCase(registration: World.handler("unit", unit: true), agent: 2, files: 5, startsAtOnce: 2, kind: .unit),
        LimitCase(registration: World.handler("unit-capped", maxConcurrent: 1, unit: true), agent: 4, files: 5,
                  startsAtOnce: 1, kind: .unit),
        // Resident deliveries: Instances= × MaxInFlight= (1 × 3).
        LimitCase(registration: World.handler("resident", resident: true), agent: 1, files: 10, startsAtOnce: 3,
                  kind: .resident),
    ]

    @Test(arguments: limitCases)
    func everyKindStartsOnlyWhatItsLimitsAllow(_ test: LimitCase) throws {
        let world = try World([test.registration], maxConcurrent: test.agent)
        for index in 0..<test.files { try world.deliver("f\(index)", to: test.registration.identifier) }
        world.dispatcher.launchReady()
        #expect(world.launcher.starts.count == test.startsAtOnce)
        #expect(world.launcher.starts.allSatisfy { $0.kind == test.kind })
        #expect(world.dispatcher.runningCount == test.startsAtOnce)
        #expect(world.dispatcher.queuedCount == test.files - test.startsAtOnce)
        // Each end lets exactly one more start, until all are done.
        while let next = world.launcher.running.first {
            next.finish(.exited(0))
            #expect(world.launcher.running.count == min(test.startsAtOnce, test.files - world.ended.count))
        }
        #expect(world.launcher.starts.count == test.files && world.ended.count == test.files)
        #expect(world.dispatcher.isIdle && world.dispatcher.retryingCount == 0)
        #expect((0..<test.files).allSatisfy { !world.inboxHas("f\($0)", of: test.registration.identifier) })
    }

    /// A failed batch's files go again alone: each a process, and so within the agent's MaxConcurrent=, however
    /// many files the handler's batch capacity holds.
    @Test func theFilesOfAFailedBatchRunAloneWithinTheAgentsLimit() throws {
        let world = try World([World.handler("batch", batchSize: 8)], maxConcurrent: 2)
        for index in 0..<12 { try world.deliver("f\(index)", to: "batch") }
        world.dispatcher.launchReady()
        #expect(world.launcher.starts.count == 12 && world.launcher.starts.allSatisfy { $0.kind == .batch })
        for attempt in world.launcher.running { attempt.finish(.batchFailed(.exited(1))) }
        let alone = world.launcher.running
        #expect(alone.count == 2 && alone.allSatisfy { $0.kind == .alone && $0.delivery.attempt == 1 })
        #expect(world.dispatcher.queuedCount == 10)
        var most = 0
        while let next = world.launcher.running.first {
            most = max(most, world.launcher.running.count)
            next.finish(.exited(0))
        }
        #expect(most == 2 && world.ended.count == 12 && world.launcher.starts.count == 24)
    }

    /// Per handler, files start in arrival order; across handlers, the oldest whose handler has room.
    @Test func filesStartInArrivalOrderPerHandler() throws {
        let world = try World([World.handler("a", maxConcurrent: 1), World.handler("b", maxConcurrent: 1)])
        for name in ["a1", "b1", "a2", "a3", "b2", "b3"] { try world.deliver(name, to: String(name.first!)) }
        world.dispatcher.launchReady()
        #expect(world.launcher.starts.map(\.name) == ["a1", "b1"])
        world.launcher.starts[0].finish(.exited(0))
        world.launcher.starts[1].finish(.exited(0))
        world.launcher.starts[2].finish(.exited(0))
        #expect(world.launcher.starts.map(\.name) == ["a1", "b1", "a2", "b2", "a3"])
        while let next = world.launcher.running.first { next.finish(.exited(0)) }
        #expect(world.launcher.starts.filter { $0.name.hasPrefix("b") }.map(\.name) == ["b1", "b2", "b3"])
        #expect(world.ended.map(\.name) == ["a1", "b1", "a2", "b2", "a3", "b3"])
    }

    /// How a start that does not run ends: refused → failed/ at once; failed to start → a retry; neither leaves
    /// anything running or counted.
    @Test(arguments: [(FakeLauncher.Answer.refuse("no Landlock"), true), (.fail("exec failed"), false)])
    func aStartThatDoesNotRunIsNotCounted(answer: FakeLauncher.Answer, endsAtOnce: Bool) throws {
        let world = try World([World.handler("h", maxConcurrent: 1)], retry: RetryPolicy(maxAttempts: 3, retryDelay: .seconds(60)))
        world.launcher.answer = { _ in answer }
        try world.deliver("one", to: "h")
        try world.deliver("two", to: "h")
        world.dispatcher.launchReady()
        #expect(world.launcher.starts.isEmpty && world.dispatcher.runningCount == 0)
        #expect(world.dispatcher.queuedCount == 0)
        #expect(world.ended.count == (endsAtOnce ? 2 : 0))
        #expect(world.dispatcher.retryingCount == (endsAtOnce ? 0 : 2))
        #expect(world.failedHas("one") == endsAtOnce && world.inboxHas("one", of: "h") == !endsAtOnce)
    }

    /// What the copy's owner finds when an attempt starts, and what becomes of the delivery: nothing starts and
    /// nothing stays counted unless the copy is the file intake placed, unchanged and open for nobody's writing.
    enum CopyCase: String, CaseIterable, Sendable {
        case intact, vanished, symlink, changedSincePlaced, heldOpenForWriting
    }

    @Test(arguments: CopyCase.allCases)
    func anAttemptStartsOnlyOnTheCopyThatWasPlaced(_ test: CopyCase) throws {
        let world = try World([World.handler("h")])
        var writer: FileHandle?
        try world.deliver("file", to: "h") { path in
            var st = stat()
            guard stat(path, &st) == 0 else { throw POSIXError(.EIO) }
            switch test {
            case .intact: break
            case .vanished: unlink(path)
            case .symlink:
                unlink(path)
                symlink("/etc/passwd", path)
            case .changedSincePlaced:
                try Data("file, and more".utf8).write(to: URL(fileURLWithPath: path))
            case .heldOpenForWriting:
                writer = FileHandle(forWritingAtPath: path)
            }
            return FileIdentity(st)
        }
        defer { try? writer?.close() }
        world.dispatcher.launchReady()
        let started = test == .intact
        #expect(world.launcher.starts.count == (started ? 1 : 0))
        #expect(world.dispatcher.runningCount == (started ? 1 : 0) && world.dispatcher.queuedCount == 0)
        #expect(world.ended.count == (started ? 0 : 1) && world.dispatcher.retryingCount == 0)
        // Moved aside or withdrawn into failed/; a vanished one is simply gone.
        #expect(world.failedHas("file") == [.symlink, .changedSincePlaced, .heldOpenForWriting].contains(test))
        #expect(world.inboxHas("file", of: "h") == started)
        if started {
            world.launcher.starts[0].finish(.exited(0))
            #expect(world.ended.count == 1 && !world.inboxHas("file", of: "h") && world.dispatcher.isIdle)
        }
    }

    /// TimeoutSec= passed: SIGTERM, then SIGKILL after the grace; the exit counts as a timeout.
    @Test func aTimedOutHandlerIsToldToStopThenKilled() throws {
        let world = try World([World.handler("slow", timeout: .milliseconds(30))],
                              retry: RetryPolicy(maxAttempts: 1), killGrace: .milliseconds(40))
        world.launcher.onStop = { [unowned world] attempt, signal in
            if signal == .kill {
                attempt.finish(.signaled(SIGKILL))
                world.exit()
            }
        }
        try world.deliver("file", to: "slow")
        world.dispatcher.launchReady()
        #expect(try world.run())
        let attempt = try #require(world.launcher.starts.first)
        #expect(attempt.stops.map(\.0) == [.terminate, .kill])
        #expect(attempt.stops[0].1 - attempt.started >= .milliseconds(30))
        #expect(attempt.stops[1].1 - attempt.stops[0].1 >= .milliseconds(40))
        #expect(world.ended.count == 1 && world.failedHas("file"))
        #expect(world.dispatcher.isIdle)
    }

    /// A handler that ends at its SIGTERM is never sent SIGKILL.
    @Test func aHandlerThatStopsAtTheTimeoutIsNotKilled() throws {
        let world = try World([World.handler("slow")], retry: RetryPolicy(maxAttempts: 2, retryDelay: .seconds(60)),
                              defaultTimeout: .milliseconds(20), killGrace: .milliseconds(20))
        var pastTheGrace: EventSource?
        world.launcher.onStop = { [unowned world] attempt, _ in
            attempt.finish(.signaled(SIGTERM))
            // Past the grace: a SIGKILL timer left behind would have fired.
            pastTheGrace = try? world.loop.addTimer(after: .milliseconds(60)) { [unowned world] in world.exit() }
        }
        try world.deliver("file", to: "slow")
        world.dispatcher.launchReady()
        #expect(try world.run())
        #expect(pastTheGrace != nil)
        #expect(world.launcher.starts.first?.stops.map(\.0) == [.terminate])
        #expect(world.dispatcher.retryingCount == 1 && world.inboxHas("file", of: "slow"))
    }

    /// A failed attempt waits RetryDelaySec=, then runs again as attempt 2; the status shows it meanwhile.
    @Test func aRetryWaitsItsDelay() throws {
        let world = try World([World.handler("h")], retry: RetryPolicy(maxAttempts: 3, retryDelay: .milliseconds(50)))
        var endedAt = Duration.zero
        world.launcher.onStart = { [unowned world] attempt in
            guard attempt.delivery.attempt == 2 else { return }
            world.exit()
        }
        try world.deliver("file", to: "h")
        world.dispatcher.launchReady()
        let first = try #require(world.launcher.starts.first)
        first.finish(.exited(75))
        endedAt = EventLoop.now()
        #expect(world.dispatcher.retryingCount == 1 && world.dispatcher.runningCount == 0)
        #expect(world.dispatcher.retrying(now: endedAt, wallClockUSec: 0).map(\.file) == ["file"])
        #expect(try world.run())
        let second = try #require(world.launcher.starts.last)
        #expect(world.launcher.starts.count == 2 && second.delivery.attempt == 2)
        #expect(second.started - endedAt >= .milliseconds(50))
        second.finish(.exited(0))
        #expect(world.ended.count == 1 && !world.inboxHas("file", of: "h") && world.dispatcher.retryingCount == 0)
    }

    /// Draining: nothing new starts, a waiting retry is cancelled (its file stays), queued files stay, running ones
    /// finish and are told to stop when the stop bound passes; `drained` once the last has ended.
    @Test func drainLetsRunningOnesFinishAndStartsNothing() throws {
        let world = try World([World.handler("h", maxConcurrent: 2)], retry: RetryPolicy(maxAttempts: 3, retryDelay: .seconds(60)))
        for name in ["r1", "r2", "q1", "q2"] { try world.deliver(name, to: "h") }
        world.dispatcher.launchReady()
        world.launcher.starts[0].finish(.exited(75))  // r1 waits for a retry; q1 starts
        #expect(world.dispatcher.retryingCount == 1)
        #expect(world.launcher.running.map(\.name) == ["r2", "q1"])
        world.dispatcher.drain()
        #expect(world.dispatcher.retryingCount == 0 && world.ended.map(\.name) == ["r1"] && world.inboxHas("r1", of: "h"))
        #expect(world.drained == 0)
        world.dispatcher.stopRunning(.terminate)
        #expect(world.launcher.running.map { $0.stops.map(\.0) } == [[.terminate], [.terminate]])
        world.launcher.running[0].finish(.exited(0))
        #expect(world.launcher.starts.count == 3 && world.drained == 0)  // q2 does not start
        world.launcher.running[0].finish(.signaled(SIGTERM))
        #expect(world.drained == 1 && world.dispatcher.runningCount == 0 && world.dispatcher.queuedCount == 1)
        // Stopped by the agent's own shutdown: kept for the next start.
        #expect(world.inboxHas("q1", of: "h") && world.inboxHas("q2", of: "h") && !world.inboxHas("r2", of: "h"))
    }

    /// A catalog swap while deliveries run: queued ones of a handler that is gone are routed again, a running one
    /// finishes, and the new limits hold for what starts next.
    @Test func aReloadWhileRunning() throws {
        let world = try World([World.handler("stays", maxConcurrent: 1), World.handler("goes", maxConcurrent: 1)])
        for name in ["s1", "g1", "s2", "g2", "s3", "s4"] {
            try world.deliver(name, to: name.hasPrefix("s") ? "stays" : "goes")
        }
        world.dispatcher.launchReady()
        #expect(world.launcher.running.map(\.name) == ["s1", "g1"])
        world.dispatcher.use(World.catalog([World.handler("stays", maxConcurrent: 4)]))
        #expect(world.launcher.catalogs == 1)
        #expect(world.rerouted.map(\.name) == ["g2"] && world.dispatcher.queuedCount == 3)
        world.dispatcher.launchReady()
        #expect(world.launcher.running.map(\.name) == ["s1", "g1", "s2", "s3"])
        world.launcher.running[1].finish(.exited(0))  // g1 ends under the registration it started with
        #expect(world.ended.map(\.name) == ["g2", "g1"] && !world.inboxHas("g1", of: "goes"))
        #expect(world.launcher.running.map(\.name) == ["s1", "s2", "s3", "s4"])
    }
}
