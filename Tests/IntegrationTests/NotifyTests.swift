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
}

/// An AF_UNIX datagram socket standing in for the service manager's notification socket.
final class NotifySocket {
    let path: String
    private let descriptor: Int32

    struct Closed: Error {}

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
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
            close(descriptor)
            throw error
        }
    }

    deinit {
        close(descriptor)
        unlink(path)
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
