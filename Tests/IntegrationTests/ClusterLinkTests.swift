import Foundation
import Glibc
import InboxCluster
import InboxCore
import InboxSystem
import Testing

/// The agent's side of the cluster (ClusterLink) with the real child (`inboxd-cluster`) against a real nats-server:
/// an ingest link publishes, a work link receives within its credit and answers; poison, a server that comes late,
/// and a child that dies. Each test drives one EventLoop through a script of steps, each waited for with a timeout.
@Suite(.serialized, .enabled(if: NatsServer.available || NatsServer.required, Comment(rawValue: NatsServer.missing)))
final class ClusterLinkTests {
    let names = ClusterNames(name: "test")!
    let handler = "com.example.notes"
    let loop: EventLoop
    let logger = Logger(target: .stderr, threshold: .warning, identifier: "cluster-test")
    let spool: URL
    var links: [ClusterLink] = []

    init() throws {
        try #require(NatsServer.available, "CI=true: nats-server must be installed (\(NatsServer.missing))")
        Signals.block([SIGCHLD])
        loop = try EventLoop()
        spool = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-spool-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
    }

    deinit {
        for link in links { link.stop() }
        try? FileManager.default.removeItem(at: spool)
    }

    /// Everything a link reported.
    final class Seen {
        var published: [UInt64: Result<PublishReceipt, PublishFailure>] = [:]
        var work: [ClusterWork] = []
        var poison: [(String, UInt64, String)] = []
        var states: [ClusterState] = []
        var lost: String?
    }

    func link(_ role: ClusterLink.Role, _ url: String) throws -> (ClusterLink, Seen) {
        let settings = ClusterSettings(servers: [try server(url)], names: names, location: .init(file: "t", line: 1))
        let options = ClusterLink.Options(
            executable: Binaries.directory.appendingPathComponent("inboxd-cluster").path, role: role,
            settings: settings, hostName: "test-\(role.rawValue)", version: "0.0-test", ackWait: .seconds(30),
            spool: role == .work ? spool.path : nil)
        let link = try ClusterLink(loop: loop, logger: logger, options: options)
        let seen = Seen()
        link.published = { seen.published[$0] = $1 }
        link.received = { seen.work.append($0) }
        link.poisoned = { seen.poison.append(($0, $1, $2)) }
        link.stateChanged = { seen.states.append($0) }
        link.lost = { seen.lost = $0 }
        links.append(link)
        return (link, seen)
    }

    func server(_ url: String) throws -> ClusterSettings.Server {
        let port = Int(url.split(separator: ":").last ?? "") ?? 4222
        return .init(scheme: .nats, host: "127.0.0.1", port: port, location: .init(file: "t", line: 1))
    }

    /// One step of a script: do something, then wait until a condition holds.
    struct Step {
        let what: String
        let action: () throws -> Void
        let until: () -> Bool
        init(_ what: String, timeout: Duration = .seconds(30), _ action: @escaping () throws -> Void = {},
             until: @escaping () -> Bool) {
            (self.what, self.action, self.until) = (what, action, until)
        }
    }

    /// Plays the steps on the loop, each within 30 s; records the one that did not come to pass.
    func play(_ steps: [Step]) throws {
        var index = 0
        var started = ContinuousClock.now
        var failure: String?
        var timer: EventSource?
        var acted = false
        func arm() {
            timer = try? loop.addTimer(after: .milliseconds(20)) { [loop] in
                do {
                    while index < steps.count {
                        if !acted {
                            try steps[index].action()
                            acted = true
                            started = .now
                        }
                        guard steps[index].until() else { break }
                        index += 1
                        acted = false
                    }
                } catch {
                    failure = "\(steps[index].what): \(error)"
                    loop.exit(code: 1)
                    return
                }
                if index == steps.count { loop.exit(code: 0); return }
                if ContinuousClock.now - started > .seconds(30) {
                    failure = "timed out: \(steps[index].what)"
                    loop.exit(code: 1)
                    return
                }
                arm()
            }
        }
        arm()
        _ = try loop.run()
        _ = timer
        // The loop runs once: every child the test started is stopped and reaped here, by its PID.
        for link in links {
            let pid = link.pid
            link.stop()
            if let pid { _ = waitForExit(pid: pid) }
        }
        links.removeAll()
        if let failure { Issue.record(Comment(rawValue: failure)) }
    }

    func delivery(_ id: String, name: String = "notes.txt") -> ClusterDelivery {
        ClusterDelivery(id: id, handler: handler, name: name, contentType: "public.plain-text",
                        contentTypes: ["public.plain-text", "public.data"], sourceHost: "ingest", sourceUID: 1000,
                        object: "pending", digest: ObjectDigest(sha256: [UInt8](repeating: 0, count: 32))!, size: 0,
                        arrivedAtUSec: 1_700_000_000_000_000)
    }

    func file(_ text: String) throws -> FileDescriptor {
        let path = spool.appendingPathComponent("src-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return try FileDescriptor.open(path, .readOnly)
    }

    func contents(_ fd: FileDescriptor) -> String {
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        let count = bytes.withUnsafeMutableBytes { (try? fd.read(fully: $0, at: 0)) ?? -1 }
        return count < 0 ? "<unreadable>" : String(decoding: bytes[..<count], as: UTF8.self)
    }

    static func id(_ n: Int) -> String { String(repeating: "0", count: 31 - String(n, radix: 16).count) + "a" + String(n, radix: 16) }

    func js(_ server: NatsServer) throws -> JetStream {
        try NatsConnection.connect(NatsSettings(servers: [server.url], name: "test")).jetStream()
    }

    // MARK: Tests

    @Test func publishReceiveAndAck() throws {
        let server = try NatsServer()
        // Stopped by its PID here: the steps' closures keep it referenced past the test.
        defer { server.stop() }
        let (ingest, published) = try link(.ingest, server.url)
        let (work, worked) = try link(.work, server.url)
        let source = try file("hello cluster")
        defer { source.close() }
        let js = try js(server)
        var ref: UInt64 = 0
        var digestStored: String?
        var content = ""
        // sd-event runs a loop once: every step of a test is in one script.
        try play([
            Step("both ready") { ingest.isReady && work.isReady },
            Step("published", { ref = ingest.publish(self.delivery(Self.id(1)), content: source) }) {
                published.published[ref] != nil
            },
            Step("served and granted", {
                digestStored = try ObjectStore.ensure(js, bucket: self.names.objectStore).info(Self.id(1))?.digest
                work.serve([ServedHandler(handler: self.handler, ackWait: .seconds(30))])
                work.grant(self.handler, count: 1)
            }) { worked.work.count == 1 },
            Step("acked", {
                content = self.contents(worked.work[0].content)
                worked.work[0].content.close()
                work.answer(worked.work[0].ref, .ack)
            }) {
                let store = try? ObjectStore.ensure(js, bucket: self.names.objectStore)
                return (try? store?.info(Self.id(1))) == .some(nil) && (try? js.stream(self.names.stream)?.messages) == 0
            },
            Step("both children still run") { ingest.pid != nil && work.pid != nil },
        ])
        let receipt = try #require(try published.published[ref]?.get())
        #expect(receipt.size == 13 && !receipt.duplicate)
        #expect(digestStored == receipt.digest.description)
        let got = try #require(worked.work.first)
        #expect(got.delivered == 1 && got.handler == handler && got.delivery.object == Self.id(1))
        #expect(got.delivery.digest == receipt.digest && got.delivery.size == 13)
        #expect(content == "hello cluster")
        #expect(published.lost == nil && worked.lost == nil)
    }

    @Test func nakRedeliversAndTermPublishesAFailedEvent() throws {
        let server = try NatsServer()
        // Stopped by its PID here: the steps' closures keep it referenced past the test.
        defer { server.stop() }
        let (ingest, _) = try link(.ingest, server.url)
        let (work, worked) = try link(.work, server.url)
        let events = try NatsConnection.connect(NatsSettings(servers: [server.url], name: "t")).subscribe(
            names.eventSubject("failed")!)
        let source = try file("retry me")
        defer { source.close() }
        var failed: [UInt8]?
        try play([
            Step("ready") { ingest.isReady && work.isReady },
            Step("received", {
                ingest.publish(self.delivery(Self.id(2)), content: source)
                work.serve([ServedHandler(handler: self.handler, ackWait: .seconds(30))])
                work.grant(self.handler, count: 1)
            }) { worked.work.count == 1 },
            Step("received again after nak", {
                worked.work[0].content.close()
                work.answer(worked.work[0].ref, .nak(delay: .seconds(1)))
                work.grant(self.handler, count: 1)
            }) { worked.work.count == 2 },
            Step("termed", {
                worked.work[1].content.close()
                work.answer(worked.work[1].ref, .term(reason: "handler failed"))
            }) { (try? self.js(server).stream(self.names.stream)?.messages) == 0 },
            // Before the children are stopped at the end of the script: the child publishes it after the term.
            Step("the failed event") {
                if failed == nil { failed = try? events.next(timeout: .milliseconds(20)) }
                return failed != nil
            },
        ])
        #expect(worked.work.count == 2 && worked.work[1].delivered == 2)
        let event = try #require(failed)
        let text = String(decoding: event, as: UTF8.self)
        #expect(text.contains("\"handler failed\"") && text.contains(Self.id(2)))
    }

    @Test func poisonIsTermedAndTheChildServesOn() throws {
        let server = try NatsServer()
        // Stopped by its PID here: the steps' closures keep it referenced past the test.
        defer { server.stop() }
        let (ingest, _) = try link(.ingest, server.url)
        let (work, worked) = try link(.work, server.url)
        let subject = names.deliverySubject(for: handler)!
        let source = try file("real content")
        defer { source.close() }
        try play([
            Step("ready") { ingest.isReady && work.isReady },
            Step("served", {
                work.serve([ServedHandler(handler: self.handler, ackWait: .seconds(30))])
                work.grant(self.handler, count: 10)
            }) { worked.states.last?.handlers.contains { $0.handler == self.handler && $0.hasConsumer } == true },
            Step("three poisoned", {
                let js = try self.js(server)
                _ = try js.publish(subject, payload: Array("not json".utf8))
                var wrong = self.delivery(Self.id(3))
                wrong.object = "nothing-here"
                _ = try js.publish(subject, payload: wrong.encode())
                let slash = String(decoding: self.delivery(Self.id(4)).encode(), as: UTF8.self)
                    .replacingOccurrences(of: "\"notes.txt\"", with: "\"a/b\"")
                _ = try js.publish(subject, payload: Array(slash.utf8))
            }) { worked.poison.count == 3 },
            Step("a real one still delivered", { ingest.publish(self.delivery(Self.id(5)), content: source) }) {
                worked.work.count == 1
            },
        ])
        #expect(worked.poison.allSatisfy { $0.0 == handler && !$0.2.isEmpty })
        #expect(worked.poison.contains { $0.2.contains("not JSON") })
        #expect(worked.poison.contains { $0.2.contains("'/'") })
        #expect(worked.poison.contains { $0.2.contains("missing") })
        #expect(worked.lost == nil && contents(worked.work[0].content) == "real content")
    }

    @Test func creditIsRespected() throws {
        let server = try NatsServer()
        // Stopped by its PID here: the steps' closures keep it referenced past the test.
        defer { server.stop() }
        let (ingest, published) = try link(.ingest, server.url)
        let (work, worked) = try link(.work, server.url)
        let source = try file("five")
        defer { source.close() }
        var pause = ContinuousClock.now
        var counts: [Int] = []
        try play([
            Step("ready") { ingest.isReady && work.isReady },
            Step("five published", { for n in 10..<15 { ingest.publish(self.delivery(Self.id(n)), content: source) } }) {
                published.published.count == 5
            },
            Step("two received", {
                work.serve([ServedHandler(handler: self.handler, ackWait: .seconds(30))])
                work.grant(self.handler, count: 2)
            }) { worked.work.count >= 2 },
            // A while longer: nothing more comes without credit.
            Step("a pause", { pause = .now + .seconds(2) }) { ContinuousClock.now > pause },
            Step("one more after a grant", {
                counts.append(worked.work.count)
                work.grant(self.handler, count: 1)
            }) { worked.work.count >= 3 },
            Step("another pause", { pause = .now + .seconds(2) }) { ContinuousClock.now > pause },
        ])
        #expect(counts == [2])
        #expect(worked.work.count == 3)
    }

    @Test func noServerAtStartThenOne() throws {
        let port = NatsServer.unusedPort()
        let (ingest, published) = try link(.ingest, "nats://127.0.0.1:\(port)")
        let source = try file("late")
        defer { source.close() }
        var refs: [UInt64] = []
        var server: NatsServer?
        defer { server?.stop() }
        var early: ClusterState?
        try play([
            Step("ready without a server") { ingest.isReady && published.states.last?.connected == false },
            Step("a publish fails for now", {
                early = published.states.last
                refs.append(ingest.publish(self.delivery(Self.id(20)), content: source))
            }) { published.published[refs[0]] != nil },
            Step("connected", { server = try NatsServer(arguments: ["-p", "\(port)"]) }) {
                published.states.last?.connected == true
            },
            Step("published", { refs.append(ingest.publish(self.delivery(Self.id(21)), content: source)) }) {
                published.published[refs[1]] != nil
            },
        ])
        #expect(early?.error?.isEmpty == false)
        guard case .failure(let failure)? = published.published[refs[0]] else {
            Issue.record("published without a server")
            return
        }
        #expect(failure.transient)
        #expect((try? published.published[refs[1]]?.get()) != nil)
        _ = server
    }

    @Test func aKilledChildIsLost() throws {
        let server = try NatsServer()
        // Stopped by its PID here: the steps' closures keep it referenced past the test.
        defer { server.stop() }
        let (work, worked) = try link(.work, server.url)
        try play([
            Step("ready") { work.isReady },
            Step("lost", { _ = Signals.send(.kill, to: work.pid!) }) { worked.lost != nil },
        ])
        #expect(work.pid == nil)
    }
}
