import Foundation
import Glibc
import Testing

/// The service-manager protocol (sd_notify(3)): what a `Type=notify` unit's manager hears.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct NotifyTests {
    @Test func readyComesOnceTheInboxIsWatched() throws {
        let world = try AgentHarness()
        let handler = "test.notify-ready.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        // The agent must make the Inbox itself: at READY=1 it exists and is watched.
        try FileManager.default.removeItem(at: world.inbox)
        let socket = try NotifySocket(path: world.root.appendingPathComponent("notify").path)
        try world.start(environment: ["NOTIFY_SOCKET": socket.path], waitForStatus: false)

        let first = try #require(socket.receive(), "no message from the agent")
        #expect(first["READY"] == "1", "the first message is READY=1, got \(first)")
        #expect(first["STATUS"]?.contains("Watching 1 inbox") == true, "STATUS= is \(first["STATUS"] ?? "missing")")
        #expect(FileManager.default.fileExists(atPath: world.inbox.path))
        // Dropped right after READY=1: the watch is in place, so it is delivered.
        try world.drop("after-ready.txt", contents: Array("hello".utf8))
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == handler)
        #expect(world.recordings().values.first?.contains("INBOX_NAME=after-ready.txt") == true)
    }

    @Test func aMissingInboxIsInTheStatusLineUntilItIsBack() throws {
        let world = try AgentHarness()
        try world.register("test.notify-missing.\(world.tag)", contentTypes: "public.plain-text")
        let socket = try NotifySocket(path: world.root.appendingPathComponent("notify").path)
        try world.start(environment: ["NOTIFY_SOCKET": socket.path], waitForStatus: false)
        #expect(try socket.next(ignoringStatusOnly: false)["READY"] == "1")
        try FileManager.default.removeItem(at: world.inbox)
        var status = ""
        while !status.hasPrefix("Watching 0 inboxes; 1 inbox missing;") {
            status = try socket.next(ignoringStatusOnly: false)["STATUS"] ?? status
        }
        #expect(mkdir(world.inbox.path, 0o755) == 0)
        while !status.hasPrefix("Watching 1 inbox; 0 queued") {
            status = try socket.next(ignoringStatusOnly: false)["STATUS"] ?? status
        }
    }

    @Test func sighupSendsReloadingThenReady() throws {
        let world = try AgentHarness()
        try world.register("test.notify-hup.\(world.tag)", contentTypes: "public.plain-text")
        let socket = try NotifySocket(path: world.root.appendingPathComponent("notify").path)
        try world.start(environment: ["NOTIFY_SOCKET": socket.path])
        try socket.skip(until: "READY")

        #expect(kill(world.pid, SIGHUP) == 0)
        let reloading = try socket.next(ignoringStatusOnly: true)
        #expect(reloading["RELOADING"] == "1", "after SIGHUP the next state is RELOADING=1, got \(reloading)")
        let ready = try socket.next(ignoringStatusOnly: true)
        #expect(ready["READY"] == "1", "after RELOADING=1 comes READY=1, got \(ready)")
        #expect(ready["STATUS"]?.contains("Watching 1 inbox") == true)
        // The reload did read the registrations again.
        try world.waitForRegistrationLoads(2)
    }

    @Test func handlersDirectoryChangeSendsReloadingThenReady() throws {
        let world = try AgentHarness()
        try world.register("test.notify-dir.\(world.tag)", contentTypes: "public.plain-text")
        let socket = try NotifySocket(path: world.root.appendingPathComponent("notify").path)
        try world.start(environment: ["NOTIFY_SOCKET": socket.path])
        try socket.skip(until: "READY")

        try world.register("test.notify-dir-new.\(world.tag)", contentTypes: "public.png")
        let reloading = try socket.next(ignoringStatusOnly: true)
        #expect(reloading["RELOADING"] == "1", "a new registration reloads; got \(reloading)")
        let ready = try socket.next(ignoringStatusOnly: true)
        #expect(ready["READY"] == "1", "after RELOADING=1 comes READY=1, got \(ready)")
    }

    @Test func sigtermSendsStopping() throws {
        let world = try AgentHarness()
        try world.register("test.notify-term.\(world.tag)", contentTypes: "public.plain-text")
        let socket = try NotifySocket(path: world.root.appendingPathComponent("notify").path)
        try world.start(environment: ["NOTIFY_SOCKET": socket.path])
        try socket.skip(until: "READY")

        let process = try #require(world.process)
        process.terminate()
        let stopping = try socket.next(ignoringStatusOnly: true)
        #expect(stopping["STOPPING"] == "1", "after SIGTERM the next state is STOPPING=1, got \(stopping)")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // Nothing claims readiness after stopping.
        while let later = socket.receive(timeout: 0.2) {
            #expect(later["READY"] == nil, "READY=1 after STOPPING=1: \(later)")
        }
    }
    /// A manager whose queue is full (PID 1 busy in a long daemon-reload) stops no delivery: the agent never waits for
    /// it. STATUS= updates are coalesced to the newest; READY=1, RELOADING=1 and the newest STATUS= arrive once it
    /// reads again. (The receiver's queue is filled by the test itself, max_dgram_qlen datagrams, before the agent
    /// starts: READY=1 already finds it full.)
    @Test(.timeLimit(.minutes(5))) func aManagerThatStopsReadingStopsNoDelivery() throws {
        let world = try AgentHarness()
        let log = world.output.appendingPathComponent("handled.log")
        let script = try world.script("append-name", "echo \"$INBOX_NAME\" >> \(log.path)")
        try world.write("""
            [Handler]
            Identifier=test.notify-stall.\(world.tag)
            Exec=\(script.path)
            ReadWritePaths=\(world.output.path)
            [DocumentType]
            ContentTypes=public.plain-text
            """, to: world.handlers.appendingPathComponent("stall.handler"))
        let socket = try NotifySocket(path: world.root.appendingPathComponent("notify").path, receiveBuffer: 4096)
        // Whatever happens, the receiver goes away before the agent is stopped: an agent blocked in sendmsg on it
        // (with SIGTERM handled through a signalfd) would otherwise never exit.
        defer {
            socket.close()
            world.stop()
        }
        let filled = try socket.fill()
        #expect(filled > 0)
        try world.start(environment: ["NOTIFY_SOCKET": socket.path])

        let count = 2_000
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        for i in 0..<count { close(open(staging.appendingPathComponent("f\(i).txt").path, O_CREAT | O_WRONLY, 0o644)) }
        for i in 0..<count {
            rename(staging.appendingPathComponent("f\(i).txt").path, world.inbox.appendingPathComponent("f\(i).txt").path)
        }
        func handled() -> [Substring] { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n") }
        try waitUntil("\(count) files are handled while the manager does not read", timeout: 180) {
            handled().count >= count
        }
        #expect(Set(handled()).count == count)
        // The agent answers, and says that it held back what the manager did not read.
        let status = try run(Binaries.inboxctl.path, ["status", "--runtime-dir", world.runtime.path, "--state",
                                                       world.state.path, "--json"])
        #expect(status.status == 0, "inboxctl status: \(status.stderr)")
        try waitUntil("status.json shows the queue empty") {
            let text = try String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)
            return text.contains("\"queued\":0,\"inFlight\":[]")
        }
        let text = try String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let notifications = try #require(json["notifications"] as? [String: Any], "no notifications in \(text)")
        #expect((notifications["coalesced"] as? Int ?? 0) > 0, "\(notifications)")

        // A reload while the manager still does not read: its RELOADING=1 and READY=1 wait too.
        #expect(kill(world.pid, SIGHUP) == 0)
        _ = try world.waitForRegistrationLoads(2)
        socket.drop(filled)
        var messages: [[String: String]] = []
        while let message = socket.receive(timeout: 2) { messages.append(message) }
        let reloading = try #require(messages.firstIndex { $0["RELOADING"] == "1" }, "no RELOADING=1 in \(messages)")
        #expect(UInt64(messages[reloading]["MONOTONIC_USEC"] ?? "") != nil, "RELOADING=1 without MONOTONIC_USEC=")
        #expect(messages[(reloading + 1)...].contains { $0["READY"] == "1" }, "no READY=1 after RELOADING=1: \(messages)")
        let lastStatus = messages.last { $0["STATUS"] != nil }?["STATUS"]
        #expect(lastStatus?.contains("0 queued, 0 running") == true, "the newest STATUS= is \(lastStatus ?? "missing")")
        #expect(messages.count <= 4, "status updates were not coalesced: \(messages)")
    }

    /// NOTIFY_SOCKET=@name is a socket in the abstract namespace (sd_notify(3)); WATCHDOG_USEC= asks for WATCHDOG=1 at
    /// half the interval, from the agent's own timer.
    @Test func anAbstractAddressAndTheWatchdog() throws {
        let world = try AgentHarness()
        try world.register("test.notify-abstract.\(world.tag)", contentTypes: "public.plain-text")
        let name = "inboxd-test-notify-\(world.tag)"
        let socket = try NotifySocket(abstract: name)
        defer {
            socket.close()
            world.stop()
        }
        try world.start(environment: ["NOTIFY_SOCKET": "@" + name, "WATCHDOG_USEC": "400000"])
        try socket.skip(until: "READY")
        let start = Date()
        try socket.skip(until: "WATCHDOG")
        try socket.skip(until: "WATCHDOG")
        #expect(Date().timeIntervalSince(start) < 2, "two WATCHDOG=1 at 0.2 s took \(Date().timeIntervalSince(start)) s")
    }

    /// READY=1 into a full queue waits for room, without holding up the first delivery.
    @Test(.timeLimit(.minutes(2))) func readyWaitsForRoomWithoutHoldingUpDeliveries() throws {
        let world = try AgentHarness()
        try world.register("test.notify-full.\(world.tag)", contentTypes: "public.plain-text")
        let socket = try NotifySocket(path: world.root.appendingPathComponent("notify").path, receiveBuffer: 4096)
        defer {
            socket.close()
            world.stop()
        }
        let filled = try socket.fill()
        try world.start(environment: ["NOTIFY_SOCKET": socket.path])
        try world.drop("while-full.txt", contents: Array("hello".utf8))
        try waitUntil("the file is delivered while READY=1 waits") { world.recordings().count == 1 }
        socket.drop(filled)
        #expect(try socket.next(ignoringStatusOnly: true)["READY"] == "1")
    }
}

/// An AF_UNIX datagram socket standing in for the service manager's notification socket.
final class NotifySocket {
    let path: String
    private var descriptor: Int32
    /// The test's own sender that fills the queue (`fill`).
    private var filler: Int32 = -1

    struct Closed: Error {}

    /// Bound at `path`; `receiveBuffer` sets SO_RCVBUF (the queue's length is /proc/sys/net/unix/max_dgram_qlen
    /// datagrams whatever the buffer).
    init(path: String, receiveBuffer: Int32? = nil) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if var size = receiveBuffer {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            Glibc.close(descriptor)
            throw error
        }
    }

    /// Bound in the abstract namespace under `name` (nothing on disk).
    init(abstract name: String) throws {
        path = ""
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [0] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count))
            }
        }
        guard descriptor >= 0, bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit { close() }

    /// Closes the socket (a sender blocked on it wakes with an error) and removes its path.
    func close() {
        if filler >= 0 { Glibc.close(filler) }
        filler = -1
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
        if !path.isEmpty { unlink(path) }
    }

    /// Fills the queue from a sender of the test's own until it is full (EAGAIN): from then on, every other sender
    /// finds it full too, as if the manager had stopped reading. Returns how many datagrams it took.
    func fill() throws -> Int {
        filler = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(filler, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var count = 0
        let filling = Array("X-FILLER=1".utf8)
        while filling.withUnsafeBytes({ send(filler, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) >= 0 { count += 1 }
        guard errno == EAGAIN else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return count
    }

    /// Reads the `count` datagrams `fill` queued: the manager reads again.
    func drop(_ count: Int) {
        for _ in 0..<count {
            let message = receive(timeout: 5)
            precondition(message?["X-FILLER"] == "1", "expected a filler datagram first, got \(String(describing: message))")
        }
    }

    /// The next datagram as KEY=VALUE fields, or nil when none comes within `timeout` seconds
    /// (SO_RCVTIMEO: a missing message fails the test instead of hanging it).
    func receive(timeout: TimeInterval = 30) -> [String: String]? {
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            var fields: [String: String] = [:]
            for line in String(decoding: buffer.prefix(count), as: UTF8.self).split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            return fields
        }
    }

    /// The next message, skipping `STATUS=`-only updates when asked; fails the test on a timeout.
    func next(ignoringStatusOnly: Bool) throws -> [String: String] {
        while true {
            guard let message = receive() else {
                Issue.record("no notification within 30 s")
                throw Closed()
            }
            if ignoringStatusOnly && Set(message.keys) == ["STATUS"] { continue }
            return message
        }
    }

    /// Reads until a message carrying `key` arrives.
    func skip(until key: String) throws {
        while try next(ignoringStatusOnly: true)[key] == nil {}
    }
}
