import Glibc
import InboxCore
@testable import InboxSystem
import Testing

/// `IntakeWatcher` in process: real inotify on a temp drop Inbox, the event loop run in the test, each arrival routed
/// by the real router into a recorder in place of the dispatcher.
@Suite("Intake, in process")
struct IntakeWatcherTests {
    static let registrations = [
        "test.text": "[DocumentType]\nContentTypes=public.plain-text\nRank=Default\n",
        "test.json": "[DocumentType]\nContentTypes=public.json\nRank=Default\n",
    ]
    /// Dropped after each case's entry: once it is delivered, the entry before it has been looked at.
    static let sentinel = "zz-last.txt"

    struct ArrivalCase: Sendable, CustomTestStringConvertible {
        let testDescription: String
        /// Makes the entry in the drop Inbox (at `inbox`), with the watch in place and the event loop running.
        let make: @Sendable (_ inbox: String) throws -> Void
        /// Names delivered before the sentinel (as given to the handler: valid UTF-8, at most 255 bytes).
        let delivered: Int
        /// Entries moved aside into failed/.
        let rejected: [String]
    }

    static let arrivalCases: [ArrivalCase] = [
        ArrivalCase(testDescription: "renamed in", make: { inbox in
            try MiddleWorld.write(inbox + "/.partial", Array("text\n".utf8))
            #expect(rename(inbox + "/.partial", inbox + "/notes.txt") == 0)
        }, delivered: 1, rejected: []),
        ArrivalCase(testDescription: "written in place and closed", make: { inbox in
            try MiddleWorld.write(inbox + "/notes.txt", Array("text written in place\n".utf8))
        }, delivered: 1, rejected: []),
        ArrivalCase(testDescription: "a hidden name", make: { inbox in
            try MiddleWorld.write(inbox + "/.notes.txt", Array("text\n".utf8))
        }, delivered: 0, rejected: []),
        ArrivalCase(testDescription: "a symbolic link", make: { inbox in
            #expect(symlink("/etc/passwd", inbox + "/passwd.txt") == 0)
        }, delivered: 0, rejected: ["rejected-passwd.txt"]),
        ArrivalCase(testDescription: "a hard link", make: { inbox in
            let outside = parentPath(inbox) + "/elsewhere.txt"
            try MiddleWorld.write(outside, Array("text\n".utf8))
            #expect(link(outside, inbox + "/linked.txt") == 0)
        }, delivered: 0, rejected: ["rejected-linked.txt"]),
        ArrivalCase(testDescription: "a FIFO", make: { inbox in
            #expect(mkfifo(inbox + "/pipe.txt", 0o644) == 0)
        }, delivered: 0, rejected: ["rejected-pipe.txt"]),
        ArrivalCase(testDescription: "a directory", make: { inbox in
            #expect(mkdir(inbox + "/folder.txt", 0o755) == 0)
        }, delivered: 0, rejected: ["rejected-folder.txt"]),
        ArrivalCase(testDescription: "a name of 255 bytes", make: { inbox in
            try MiddleWorld.write(inbox + "/" + String(repeating: "n", count: 251) + ".txt", Array("text\n".utf8))
        }, delivered: 1, rejected: []),
        ArrivalCase(testDescription: "a name that is not UTF-8", make: { inbox in
            let path = Array(inbox.utf8) + Array("/bad-".utf8) + [0xFF, 0xFE] + Array(".txt".utf8) + [0]
            let fd = path.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644) }
            }
            #expect(fd >= 0)
            close(fd)
        }, delivered: 1, rejected: []),
    ]

    /// Each kind of entry that can appear in a drop Inbox: regular files are delivered once (a name made valid),
    /// anything else is moved aside unopened, and nothing blocks or is followed.
    @Test(arguments: arrivalCases)
    func eachKindOfArrival(_ testCase: ArrivalCase) throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle(sniffer: try ContentSniffer())
        let watcher = try Self.watch(world, middle)
        let drops = try middle.loop.addTimer(after: .milliseconds(1)) {
            do {
                try testCase.make(world.inbox)
                try world.drop(Self.sentinel, "the last\n")
            } catch {
                Issue.record("\(error)")
            }
        }
        middle.handoff.enqueued = { delivery in if delivery.name == Self.sentinel { middle.stop() } }
        #expect(try withExtendedLifetime((watcher, drops)) { try middle.run() })
        let delivered = middle.handoff.deliveries.map(\.name)
        #expect(delivered.last == Self.sentinel)
        #expect(delivered.count == testCase.delivered + 1, "\(delivered)")
        for name in delivered {
            #expect(name.utf8.count <= 255 && FileNames.sanitized(Array(name.utf8)) == name, "\(name)")
        }
        #expect(world.names(in: "state/failed") == testCase.rejected)
        #expect(world.names(in: "Inbox").filter { !$0.hasPrefix(".") }.isEmpty)
    }

    /// A burst larger than one intake batch, for two handlers, in an order a rescan would not give (names
    /// descending): each handler's deliveries are queued in the order the files arrived.
    @Test func arrivalOrderPerHandler() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle(sniffer: try ContentSniffer())
        let watcher = try Self.watch(world, middle)
        let names = (0..<80).reversed().map { index in
            index % 3 == 0 ? "file-\(100 + index).json" : "file-\(100 + index).txt"
        }
        let drops = try middle.loop.addTimer(after: .milliseconds(1)) {
            do {
                for name in names { try world.drop(name, name.hasSuffix(".json") ? "{\"a\": 1}\n" : "text\n") }
            } catch {
                Issue.record("\(error)")
            }
        }
        middle.handoff.enqueued = { _ in if middle.handoff.deliveries.count == names.count { middle.stop() } }
        #expect(try withExtendedLifetime((watcher, drops)) { try middle.run() })
        for handler in ["test.text", "test.json"] {
            let expected = names.filter { $0.hasSuffix(handler == "test.json" ? ".json" : ".txt") }
            #expect(middle.handoff.deliveries.filter { $0.handler == handler }.map(\.name) == expected)
        }
    }

    /// A watcher on the world's drop Inbox, its arrivals routed as the agent wires them, its first rescan done.
    static func watch(_ world: MiddleWorld, _ middle: Middle) throws -> IntakeWatcher {
        let watcher = try IntakeWatcher(loop: middle.loop, logger: middle.logger, reader: middle.reader,
                                        quarantine: middle.quarantine, inboxes: [world.inbox])
        watcher.arrived = { [router = middle.router] arrival in router.route(arrival) }
        watcher.batchDone = { [handoff = middle.handoff] in handoff.launchReady() }
        try watcher.start()
        try watcher.watchInboxes(asRoot: true)
        watcher.resume()
        return watcher
    }
}
