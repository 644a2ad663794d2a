import Foundation
import Glibc
@testable import InboxCore
@testable import InboxSystem
import Synchronization
import Testing

/// The launchers without the agent: real `sh` handlers started by the real spawner, followed on a real event loop. What
/// is checked is what the dispatcher relies on: an outcome for each started attempt, exactly once and from the loop;
/// a stop that reaches the handler's whole process group, whichever launcher started it; and nothing a handler left
/// running outliving it.
@Suite(.serialized) struct LauncherTests {
    // MARK: The per-file launcher

    @Test(arguments: [
        ("exit 0", DeliveryOutcome.exited(0)),
        ("exit 3", .exited(3)),
        ("kill -KILL $$", .signaled(SIGKILL)),
        // The file is its argument and the delivery is in its environment and on its stdin.
        (#"[ "$(basename "$1")" = a.txt ] && [ "$INBOX_DELIVERY_ID" = 00000000000000000000000000000001 ] && grep -q '"file"' && exit 0; exit 9"#,
         .exited(0)),
    ])
    func aLaunchedHandlerEndsOnceFromTheLoop(script: String, expected: DeliveryOutcome) throws {
        let rig = try LauncherRig()
        let launcher = ProcessLauncher(spawner: rig.spawner)
        let registration = try rig.registration(script: script, exec: "%f")
        var outcomes: [DeliveryOutcome] = []
        var starting = true
        let started = launcher.start(rig.delivery(1, "a.txt"), copy: rig.copy, registration: registration,
                                     container: rig.container) { outcome in
            #expect(!starting, "an end reported inside start")
            outcomes.append(outcome)
        }
        starting = false
        guard case .started(let attempt) = started else {
            Issue.record("not started: \(started)")
            return
        }
        #expect(attempt.pid > 0)
        // Nothing more comes in the 100 ms after the end, and nothing of it is still held.
        #expect(rig.run(until: { !outcomes.isEmpty }, settle: .milliseconds(100)), "no end within 10 s")
        #expect(outcomes == [expected])
        #expect(launcher.runningCount == 0)
        #expect(rig.reaper.runningCount == 0)
        attempt.stop(.kill)
    }

    // MARK: The batch launcher

    /// Files started in one turn of the loop go to one process; exit 0 is every file's, any other end makes each go
    /// again on its own.
    @Test(arguments: [(Int32(0), DeliveryOutcome.exited(0)), (Int32(2), .batchFailed(.exited(2)))])
    func aBatchEndsEachFileOnce(code: Int32, expected: DeliveryOutcome) throws {
        let rig = try LauncherRig()
        let batches = BatchLauncher(loop: rig.loop, processes: ProcessLauncher(spawner: rig.spawner),
                                    sandboxesHandlers: false, maxProcesses: 4)
        let registration = try rig.registration(script: #"echo $# > "$(dirname "$0")/count"; exit \#(code)"#,
                                                exec: "%F", batchSize: 64)
        var outcomes: [Int: [DeliveryOutcome]] = [:]
        var attempts: [LaunchedAttempt] = []
        for number in 1...3 {
            let started = batches.start(rig.delivery(number, "\(number).txt"), copy: rig.copy, registration: registration,
                                        container: rig.container) { outcomes[number, default: []].append($0) }
            guard case .started(let attempt) = started else {
                Issue.record("not started: \(started)")
                return
            }
            attempts.append(attempt)
        }
        #expect(outcomes.isEmpty, "an end reported inside start")
        #expect(rig.run(until: { outcomes.count == 3 }, settle: .milliseconds(100)),
                "not every file ended within 10 s: \(outcomes)")
        #expect(outcomes == [1: [expected], 2: [expected], 3: [expected]])
        #expect(try String(contentsOfFile: rig.path("count"), encoding: .utf8) == "3\n")
        #expect(Set(attempts.map(\.pid)).count == 1 && attempts[0].pid > 0, "one process for the batch")
    }

    /// A file still waiting for its batch (its window has not passed) that is told to stop ends at once, from the loop,
    /// and is never part of a batch.
    @Test func aFileWaitingForItsBatchStopsAlone() throws {
        let rig = try LauncherRig()
        let batches = BatchLauncher(loop: rig.loop, processes: ProcessLauncher(spawner: rig.spawner),
                                    sandboxesHandlers: false, maxProcesses: 4)
        var registration = try rig.registration(script: #"touch "$(dirname "$0")/ran""#, exec: "%F", batchSize: 64)
        registration.batchWindow = .seconds(30)
        var outcomes: [DeliveryOutcome] = []
        guard case .started(let attempt) = batches.start(rig.delivery(1, "a.txt"), copy: rig.copy,
                                                          registration: registration, container: rig.container,
                                                          ended: { outcomes.append($0) }) else {
            Issue.record("not started")
            return
        }
        attempt.stop(.terminate)
        #expect(outcomes.isEmpty, "an end reported inside stop")
        #expect(rig.run(until: { !outcomes.isEmpty }))
        #expect(outcomes == [.signaled(SIGTERM)])
        #expect(!FileManager.default.fileExists(atPath: rig.path("ran")))
    }

    // MARK: Stopping

    enum Kind: String, CaseIterable { case launched, batch }

    /// `stop` reaches every process of the handler's group: with `.terminate` a child of the handler runs its TERM trap
    /// (the handler waits for it, then exits 143); with `.kill` the handler is killed, and its child with it.
    @Test(arguments: Kind.allCases, [DeliveryLifecycle.StopSignal.terminate, .kill])
    func aStopReachesTheProcessGroup(kind: Kind, signal: DeliveryLifecycle.StopSignal) throws {
        let rig = try LauncherRig()
        try rig.writeScript("child.sh", """
            trap 'echo terminated > "$1"; exit 0' TERM
            sleep \(rig.marker) &
            echo $! > "$1.sleep"
            echo $$ > "$1.ready"
            wait
            """)
        let script = #"""
            dir=$(dirname "$0")
            sh "$dir/child.sh" "$dir/child" &
            child=$!
            trap 'wait $child; exit 143' TERM
            wait $child
            """#
        let processes = ProcessLauncher(spawner: rig.spawner)
        let batches = BatchLauncher(loop: rig.loop, processes: processes, sandboxesHandlers: false, maxProcesses: 4)
        let registration = try rig.registration(script: script, exec: kind == .batch ? "%F" : "%f",
                                                batchSize: kind == .batch ? 64 : 1)
        var outcomes: [DeliveryOutcome] = []
        var attempts: [LaunchedAttempt] = []
        for number in 1...(kind == .batch ? 2 : 1) {
            let delivery = rig.delivery(number, "\(number).txt")
            let start = switch kind {
            case .launched: processes.start(delivery, copy: rig.copy, registration: registration,
                                            container: rig.container, ended: { outcomes.append($0) })
            case .batch: batches.start(delivery, copy: rig.copy, registration: registration,
                                       container: rig.container, ended: { outcomes.append($0) })
            }
            guard case .started(let attempt) = start else {
                Issue.record("not started")
                return
            }
            attempts.append(attempt)
        }
        // Once the child has set its trap: stopped, then done once every file ended and the group is gone.
        var group: [pid_t] = []
        let ended = rig.run(until: {
            if group.isEmpty {
                guard let child = try? rig.pid(in: "child.ready"), let sleeper = try? rig.pid(in: "child.sleep") else {
                    return false
                }
                group = [child, sleeper]
                attempts[0].stop(signal)
                #expect(outcomes.isEmpty, "an end reported inside stop")
            }
            return outcomes.count == attempts.count && !group.contains(where: rig.isRunning)
        })
        #expect(ended, "no end within 10 s, or the handler's group outlived it (\(group), \(outcomes))")
        let handler: DeliveryOutcome = signal == .terminate ? .exited(143) : .signaled(SIGKILL)
        #expect(outcomes == Array(repeating: kind == .batch ? .batchFailed(handler) : handler, count: attempts.count))
        #expect(FileManager.default.fileExists(atPath: rig.path("child")) == (signal == .terminate),
                "the child's TERM trap ran: \(signal)")
    }

    /// The lifecycle's stop is a kernel signal in one place, and a stop that ends a file before any process of it ran
    /// reads as that signal's end.
    @Test(arguments: [(DeliveryLifecycle.StopSignal.terminate, SIGTERM), (.kill, SIGKILL)])
    func aStopIsOneSignal(stop: DeliveryLifecycle.StopSignal, number: CInt) {
        #expect(Signal(stop).rawValue == number)
        #expect(DeliveryOutcome.stopped(stop) == .signaled(number))
    }

    // MARK: The reaper

    /// What a handler leaves running when it exits goes with it: a process in its group (the group is killed), and a
    /// daemon in a session of its own, which the agent inherits as a subreaper (killed as a leftover of its user, and
    /// reaped through the loop).
    @Test(arguments: ["sleep %M &", "setsid sleep %M </dev/null >/dev/null 2>&1 &"])
    func whatAHandlerLeftRunningEndsWithIt(leaves: String) throws {
        #expect(CurrentProcess.becomeChildSubreaper())
        let rig = try LauncherRig()
        let launcher = ProcessLauncher(spawner: rig.spawner)
        let script = leaves.replacingOccurrences(of: "%M", with: rig.marker) + #"""

            echo $! > "$(dirname "$0")/left"
            exit 0
            """#
        var outcomes: [DeliveryOutcome] = []
        guard case .started = launcher.start(rig.delivery(1, "a.txt"), copy: rig.copy,
                                             registration: try rig.registration(script: script, exec: "%f"),
                                             container: rig.container, ended: { outcomes.append($0) }) else {
            Issue.record("not started")
            return
        }
        var left: pid_t?
        let ended = rig.run(until: {
            left = left ?? (try? rig.pid(in: "left"))
            return !outcomes.isEmpty && left.map { !rig.isRunning($0) } == true
        })
        #expect(ended, "\(leaves) outlived its handler (pid \(left.map(String.init) ?? "none"))")
        #expect(outcomes == [.exited(0)])
    }
}

/// One test's launchers: a loop, a spawner and a reaper over a scratch directory that holds the container and the
/// handler's scripts. The reaper takes for leftovers only processes this test's handlers started (their command lines
/// name `marker`, or the directory), never another test's children in the same process.
final class LauncherRig {
    let directory: String
    let marker: String
    let loop: EventLoop
    let reaper: Reaper
    let spawner: HandlerSpawner
    let container: Container
    let copy: FileDescriptor
    private static let sequence = Mutex(0)

    init() throws {
        let number = Self.sequence.withLock { value in
            value += 1
            return value
        }
        // A number GNU sleep takes, and no other process has on its command line.
        marker = "86400.\(getpid())\(number)\(UInt32.random(in: 1000...9999))"
        directory = NSTemporaryDirectory() + "inboxd-launchers-\(marker)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        loop = try EventLoop()
        let logger = Logger(target: .stderr, threshold: .error)
        reaper = Reaper(loop: loop, logger: logger, ownChildren: { [] }, children: { [marker, directory] in
            Leftovers.children().filter { pid in
                let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
                return command.contains(marker) || command.contains(directory)
            }
        })
        let catalog = HandlerCatalog(loaded: LoadedRegistrations(), preferences: HandlerPreferences(), identities: [:],
                                     problems: [], loadedAt: .zero)
        spawner = HandlerSpawner(loop: loop, logger: logger, catalog: catalog, landlockABI: 0, landlockMode: .auto,
                                 reaper: reaper)
        container = try Container(handler: "test.handler", in: try Directory(path: directory).subdirectory("containers"),
                                  identity: nil)
        copy = try FileDescriptor.open("/dev/null", .readOnly)
    }

    deinit {
        copy.close()
        // A test that failed may have left its handlers' processes: none outlives it.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name), pid != getpid(),
                  let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
                  command.contains(marker) || command.contains(directory) else { continue }
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    func path(_ name: String) -> String { directory + "/" + name }

    func writeScript(_ name: String, _ body: String) throws {
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path(name), atomically: true, encoding: .utf8)
        chmod(path(name), 0o755)
    }

    /// A registration whose Exec= runs `script` (written as handler.sh) with `exec`'s field codes.
    func registration(script: String, exec: String, batchSize: Int = 1) throws -> HandlerRegistration {
        try writeScript("handler.sh", script)
        var registration = HandlerRegistration(identifier: "test.handler", exec: try ExecCommand(parsing: "\(path("handler.sh")) \(exec)"),
                                               path: "/h/test.handler")
        registration.batchSize = batchSize
        return registration
    }

    func delivery(_ number: Int, _ name: String) -> Delivery {
        Delivery(id: String(format: "%032d", number), handler: "test.handler", name: name, path: container.inbox.child(name),
                        documents: container.documents, contentType: "public.plain-text",
                        contentTypes: ["public.plain-text"], attempt: 1)
    }

    func pid(in name: String) throws -> pid_t {
        let text = try String(contentsOfFile: path(name), encoding: .utf8)
        guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SystemError("read", path: path(name), errno: .invalidArgument)
        }
        return pid
    }

    /// Whether `pid` runs: it exists and is not a zombie (proc(5), the state after the command's parenthesis).
    func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(end, offsetBy: 2)...].hasPrefix("Z")
    }

    /// Runs the loop until `done` holds, then `settle` longer (`EventLoop.run(until:settle:)`): once per rig.
    func run(until done: @escaping () -> Bool, settle: Duration = .zero) -> Bool {
        loop.run(until: done, settle: settle)
    }
}

extension EventLoop {
    /// Runs the loop until `done` holds (looked at every 10 ms), then `settle` longer, or until 10 s have passed;
    /// whether it held. sd-event does not run again once it exited: once per loop.
    func run(until done: @escaping () -> Bool, settle: Duration = .zero) -> Bool {
        let loop = self
        var met = false
        var poll: EventSource?
        func check() {
            if done() {
                met = true
                poll = try? loop.addTimer(after: settle) { [loop] in loop.exit(code: 0) }
                return
            }
            poll = try? loop.addTimer(after: .milliseconds(10), accuracy: .milliseconds(1)) { check() }
        }
        poll = try? loop.addDefer { check() }
        let deadline = try? loop.addTimer(after: .seconds(10)) { [loop] in loop.exit(code: 1) }
        _ = try? loop.run()
        _ = (poll, deadline)
        return met
    }
}
