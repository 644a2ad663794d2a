import CSystemd
import Foundation
import Glibc
@testable import InboxCore
@testable import InboxSystem
import Testing

/// The unit launcher against a service manager of the test's own: a server-side sd-bus connection on a Unix socket
/// (as systemd's private socket is one), on the same event loop, that answers the Manager's calls and sends the
/// PropertiesChanged signals systemd sends, in its order (a change of the Service interface, then of the Unit's).
/// What is checked is the launcher's reading of them: which change ends the run, what the exit was, and what it
/// asks of the manager.
@Suite(.serialized) struct UnitLauncherTests {
    /// A signal the fake manager sends: a Service change, or a Unit change.
    enum Change {
        case service(code: Int32, status: Int32, result: String)
        case unit(state: String, job: UInt32)
    }

    /// What the fake does on StartUnit: changes sent before its reply (a stale run's), the reply (nil: an error
    /// reply, NoSuchUnit), and changes after it; and what it sends after StopUnit.
    struct Script {
        var before: [Change] = []
        var replies = true
        var after: [Change]
        var afterStop: [Change] = []
        /// The manager goes away once the start's changes are sent.
        var hangsUp = false
    }

    static let failedExit = Script(
        before: [.service(code: 1, status: 0, result: "success"), .unit(state: "failed", job: 0)],
        after: [.unit(state: "activating", job: 7), .service(code: 0, status: 0, result: "success"),
                .unit(state: "active", job: 0), .service(code: 1, status: 75, result: "exit-code"),
                .unit(state: "failed", job: 0)])

    @Test(arguments: [
        // A stale failed state before the reply is not this run's end; an active unit with no job is running.
        (failedExit, false, DeliveryOutcome.exited(75), ["StartUnit", "ResetFailedUnit"]),
        (Script(after: [.unit(state: "inactive", job: 3), .unit(state: "active", job: 0),
                        .service(code: 1, status: 0, result: "success"), .unit(state: "inactive", job: 0)]),
         false, .exited(0), ["StartUnit"]),
        (Script(after: [.service(code: 0, status: 0, result: "resources"), .unit(state: "failed", job: 0)]),
         false, .spawnFailed("inboxd-test@0123456789abcdef0123456789abcdef.service ended with result 'resources' before its process ran"),
         ["StartUnit", "ResetFailedUnit"]),
        (Script(replies: false, after: []), false,
         .spawnFailed("systemd did not start inboxd-test@0123456789abcdef0123456789abcdef.service: Unit inboxd-test@.service not found."),
         ["StartUnit"]),
        // Stopped (TimeoutSec= or the agent's stop): StopUnit, and the end systemd reports.
        (Script(after: [.unit(state: "active", job: 0)],
                afterStop: [.unit(state: "deactivating", job: 9), .service(code: 2, status: 15, result: "signal"),
                            .unit(state: "failed", job: 0)]),
         true, .signaled(15), ["StartUnit", "StopUnit", "ResetFailedUnit"]),
        // The connection breaks while the unit runs: the attempt is a failed start, retried on a new connection.
        (Script(after: [.unit(state: "active", job: 0)], hangsUp: true), false,
         .spawnFailed("lost the connection to systemd while inboxd-test@0123456789abcdef0123456789abcdef.service ran"),
         ["StartUnit"]),
    ])
    func aRunEndsAsItsUnitSays(script: Script, stop: Bool, expected: DeliveryOutcome, calls: [String]) throws {
        let directory = try TemporaryDirectory()
        let loop = try EventLoop()
        let manager = try FakeManager(socket: directory.path + "/private", script: script)
        let launcher = UnitLauncher(loop: loop, logger: Logger(target: .stderr, threshold: .error),
                                    runtimeDirectory: directory.path, address: "unix:path=\(manager.path)", refusal: nil)
        let containers = try Directory(path: directory.path).subdirectory("containers")
        let container = try Container(handler: "test.unit", in: containers, identity: nil)
        var registration = HandlerRegistration(identifier: "test.unit", exec: .none, path: "/h/test.unit.handler")
        registration.unit = try UnitTemplate(parsing: "inboxd-test@.service")
        var delivery = Delivery(id: "0123456789abcdef0123456789abcdef", handler: "test.unit", name: "a \"b\".txt",
                                path: container.inbox.child("a \"b\".txt"), documents: container.documents,
                                contentType: "public.plain-text", contentTypes: ["public.plain-text"], attempt: 1)
        delivery.unit = registration.unit?.instance(delivery.id)
        let copy = try FileDescriptor.open("/dev/null", .readOnly)
        defer { copy.close() }

        // Done once the end is reported and the manager has had every call expected (a reset follows the end).
        var outcome: DeliveryOutcome?
        let done = { if outcome != nil && manager.calls.count >= calls.count { loop.exit(code: 0) } }
        manager.onCall = done
        let started = launcher.start(delivery, copy: copy, registration: registration, container: container) { ended in
            outcome = ended
            done()
        }
        guard case .started(let attempt) = started else {
            Issue.record("not started: \(started)")
            return
        }
        try manager.accept(on: loop)
        if stop {
            manager.onRunning = { attempt.stop(.terminate) }
        }
        let deadline = try loop.addTimer(after: .seconds(10)) { loop.exit(code: 1) }
        #expect(try loop.run() == 0, "no end within 10 s")
        _ = deadline
        #expect(outcome == expected)
        #expect(manager.calls.map(\.member) == calls)
        #expect(manager.calls.allSatisfy { $0.unit == "inboxd-test@0123456789abcdef0123456789abcdef.service" })
        // While it ran, the delivery was there for the unit; after, it is gone.
        #expect(manager.environmentAtStart?.contains("INBOX_FILE=\"\(container.inbox.path)/a \\\"b\\\".txt\"\n") == true,
                "\(manager.environmentAtStart ?? "no file")")
        #expect(manager.environmentAtStart?.contains("INBOX_DELIVERY_ID=\"0123456789abcdef0123456789abcdef\"\n") == true)
        #expect(manager.documentAtStart?.hasPrefix("{\"file\":") == true)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/units")) == [])
    }
}

/// A directory removed with the value.
final class TemporaryDirectory {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "inboxd-units-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The server end: listens on `path`; `accept` takes the launcher's connection and serves it from the loop.
final class FakeManager {
    let path: String
    let script: UnitLauncherTests.Script
    private let listener: CInt
    private var bus: OpaquePointer?
    private var hangUp = false
    private var hangUpSource: EventSource?
    private var loop: EventLoop?
    private(set) var calls: [(member: String, unit: String)] = []
    private(set) var environmentAtStart: String?
    private(set) var documentAtStart: String?
    /// Called once the start's changes are sent.
    var onRunning: () -> Void = {}
    /// Called after each call is answered.
    var onCall: () -> Void = {}

    init(socket path: String, script: UnitLauncherTests.Script) throws {
        self.path = path
        self.script = script
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8).prefix(raw.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    deinit {
        if let bus { _ = sd_bus_flush_close_unref(bus) }
        close(listener)
    }

    func accept(on loop: EventLoop) throws {
        self.loop = loop
        let fd = Glibc.accept(listener, nil, nil)
        var id = sd_id128_t()
        _ = sd_id128_randomize(&id)
        var server: OpaquePointer?
        guard fd >= 0, sd_bus_new(&server) >= 0, let server else { throw POSIXError(.ECONNREFUSED) }
        bus = server
        guard sd_bus_set_fd(server, fd, fd) >= 0, sd_bus_set_server(server, 1, id) >= 0,
              sd_bus_set_anonymous(server, 1) >= 0, sd_bus_start(server) >= 0,
              sd_bus_attach_event(server, loop.event, 0) >= 0,
              sd_bus_add_filter(server, nil, { message, userdata, _ in
                  guard let message, let userdata else { return 0 }
                  return Unmanaged<FakeManager>.fromOpaque(userdata).takeUnretainedValue().handle(message)
              }, Unmanaged.passUnretained(self).toOpaque()) >= 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    private func handle(_ call: OpaquePointer) -> CInt {
        let members = ["StartUnit", "StopUnit", "KillUnit", "ResetFailedUnit"]
        guard let member = members.first(where: { sd_bus_message_is_method_call(call, ServiceManager.managerInterface, $0) > 0 })
        else { return 0 }
        var name: UnsafePointer<CChar>?
        _ = sd_bus_message_read_basic(call, CChar(UInt8(ascii: "s")), &name)
        let unit = name.map { String(cString: $0) } ?? ""
        calls.append((member, unit))
        let objectPath = UnitTemplate.objectPath(of: unit)
        switch member {
        case "StartUnit":
            environmentAtStart = try? String(contentsOfFile: directory + "/units/0123456789abcdef0123456789abcdef.env", encoding: .utf8)
            documentAtStart = try? String(contentsOfFile: directory + "/units/0123456789abcdef0123456789abcdef.json", encoding: .utf8)
            for change in script.before { send(change, on: objectPath) }
            if script.replies {
                reply(to: call, job: "/org/freedesktop/systemd1/job/7")
            } else {
                replyError(to: call, name: "org.freedesktop.systemd1.NoSuchUnit", message: "Unit inboxd-test@.service not found.")
            }
            for change in script.after { send(change, on: objectPath) }
            onRunning()
            if script.hangsUp { hangUp = true }
        case "StopUnit":
            reply(to: call, job: "/org/freedesktop/systemd1/job/9")
            for change in script.afterStop { send(change, on: objectPath) }
        default:
            reply(to: call, job: nil)
        }
        onCall()
        if hangUp, let bus {
            // After this callback: sd-bus may not be closed from inside its own dispatch.
            _ = sd_bus_flush(bus)
            hangUpSource = try? loop?.addDefer { [unowned self] in
                if let bus = self.bus { _ = sd_bus_flush_close_unref(bus) }
                self.bus = nil
            }
        }
        return 1
    }

    private var directory: String { String(path.dropLast("/private".count)) }

    private func reply(to call: OpaquePointer, job: String?) {
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(call, &reply) >= 0, let reply else { return }
        if let job { _ = job.withCString { sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "o")), $0) } }
        _ = sd_bus_send(bus, reply, nil)
        _ = sd_bus_message_unref(reply)
    }

    private func replyError(to call: OpaquePointer, name: String, message: String) {
        name.withCString { name in
            message.withCString { text in
                var error = sd_bus_error(name: name, message: text, _need_free: 0)
                var reply: OpaquePointer?
                guard sd_bus_message_new_method_error(call, &reply, &error) >= 0, let reply else { return }
                _ = sd_bus_send(bus, reply, nil)
                _ = sd_bus_message_unref(reply)
            }
        }
    }

    private func send(_ change: UnitLauncherTests.Change, on objectPath: String) {
        var signal: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &signal, objectPath, "org.freedesktop.DBus.Properties",
                                        "PropertiesChanged") >= 0, let signal else { return }
        defer { _ = sd_bus_message_unref(signal) }
        func string(_ type: Character, _ text: String) {
            _ = text.withCString { sd_bus_message_append_basic(signal, CChar(type.asciiValue!), $0) }
        }
        func property(_ name: String, _ signature: String, _ value: () -> Void) {
            _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "e")), "sv")
            string("s", name)
            _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "v")), signature)
            value()
            _ = sd_bus_message_close_container(signal)
            _ = sd_bus_message_close_container(signal)
        }
        func int32(_ number: Int32) {
            var number = number
            _ = sd_bus_message_append_basic(signal, CChar(UInt8(ascii: "i")), &number)
        }
        switch change {
        case .service(let code, let status, let result):
            string("s", "org.freedesktop.systemd1.Service")
            _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "a")), "{sv}")
            property("Type", "s") { string("s", "simple") }
            property("Result", "s") { string("s", result) }
            property("ExecMainCode", "i") { int32(code) }
            property("ExecMainStatus", "i") { int32(status) }
        case .unit(let state, let job):
            string("s", "org.freedesktop.systemd1.Unit")
            _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "a")), "{sv}")
            property("ActiveState", "s") { string("s", state) }
            property("Job", "(uo)") {
                _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "r")), "uo")
                var id = job
                _ = sd_bus_message_append_basic(signal, CChar(UInt8(ascii: "u")), &id)
                string("o", job == 0 ? "/" : "/org/freedesktop/systemd1/job/\(job)")
                _ = sd_bus_message_close_container(signal)
            }
        }
        _ = sd_bus_message_close_container(signal)
        _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "a")), "s")
        _ = sd_bus_message_close_container(signal)
        _ = sd_bus_send(bus, signal, nil)
    }
}
