import Foundation
import Glibc
import InboxCluster
import InboxCore
import InboxSystem
import Testing

/// Three agents on one machine sharing an Inbox through a real nats-server (docs/design.md, Cluster: the agent): one
/// ingest host whose Inbox feeds the cluster and two workers, each with its own Inbox, state and runtime directories.
/// Every handler records what it was given (the file's SHA-256, `INBOX_SOURCE_HOST`, `INBOX_REDELIVERED`) in its
/// worker's output directory, one record per run.
final class ClusterWorld: @unchecked Sendable {
    // @unchecked: each test owns its world and uses it from one task at a time.
    let server: NatsServer
    let ingest: AgentHarness
    let workers: [AgentHarness]
    let name: String
    static let handler = "org.example.cluster"

    /// One record per handler run: the delivery id, the worker that ran it and the fields the handler wrote.
    struct Record: Hashable {
        var id: String
        var worker: String
        var name: String
        var digest: String
        var sourceHost: String
        var redelivered: Bool
        /// INBOX_SOURCE_APP and INBOX_ANNOTATION, as the handler was told.
        var sourceApp: String
        var annotation: String
    }

    /// The [Cluster] lines each agent gets besides the common ones, by its Host= name.
    let extra: (String) -> String
    /// Servers= (nil: the server's nats:// URL).
    let servers: String?

    init(_ name: String = #function, workers count: Int = 2, ackWait: String = "5s", workerHandler: Bool = true,
         sleep: String? = nil, serverArguments: [String] = [], serverConfiguration: String? = nil,
         servers: String? = nil, extra: @escaping (String) -> String = { _ in "" }) throws {
        server = try NatsServer(name, arguments: serverArguments, configuration: serverConfiguration)
        self.extra = extra
        self.servers = servers
        self.name = "t" + String(UUID().uuidString.prefix(8)).lowercased()
        ingest = try AgentHarness(name + "Ingest")
        var made: [AgentHarness] = []
        for index in 1...count { made.append(try AgentHarness(name + "Worker\(index)")) }
        workers = made
        try register(on: ingest, worker: "ingest", sleep: nil)
        for (index, worker) in workers.enumerated() where workerHandler {
            try register(on: worker, worker: "worker-\(index + 1)", sleep: sleep)
        }
        try ingest.start(config: config(for: ingest, host: "ingest", work: false, ackWait: ackWait))
        for (index, worker) in workers.enumerated() {
            try worker.start(config: config(for: worker, host: "worker-\(index + 1)", work: true, ackWait: ackWait))
        }
    }

    func config(for harness: AgentHarness, host: String, work: Bool, ackWait: String) -> String {
        """
        [Agent]
        Inbox=\(harness.inbox.path)

        [Cluster]
        Servers=\(servers.map { $0.replacingOccurrences(of: "PORT", with: String(server.port)) } ?? server.url)
        Name=\(name)
        Host=\(host)
        Work=\(work ? "yes" : "no")
        AckWaitSec=\(ackWait)
        \(work ? "" : "Inboxes=\(harness.inbox.path)")
        \(extra(host))
        """
    }

    /// The recording handler: one line per run, in a file of its own.
    func register(on harness: AgentHarness, worker: String, sleep: String?) throws {
        let script = harness.root.appendingPathComponent("cluster-handler")
        try """
            #!/bin/sh
            sum=$(sha256sum < "$INBOX_FILE" | cut -d' ' -f1)
            [ -n "$SLEEP" ] && sleep "$SLEEP"
            printf '%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n' "$INBOX_NAME" "$sum" "${INBOX_SOURCE_HOST:-}" "${INBOX_REDELIVERED:-0}" \\
                "${INBOX_SOURCE_APP:-}" "${INBOX_ANNOTATION:-}" > "$OUTPUT_DIR/$INBOX_DELIVERY_ID.$WORKER.$$"
            exit 0

            """.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        try harness.register(Self.handler, exec: script.path, contentTypes: "public.data",
                             extraHandler: "Environment=WORKER=\(worker)" + (sleep.map { " SLEEP=\($0)" } ?? ""))
    }

    /// Every record the workers' handlers wrote so far.
    func records() -> [Record] {
        workers.flatMap { worker -> [Record] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: worker.output.path)) ?? []
            return names.compactMap { file -> Record? in
                let parts = file.split(separator: ".")
                guard parts.count == 3,
                      let text = try? String(contentsOf: worker.output.appendingPathComponent(file), encoding: .utf8)
                else { return nil }
                let fields = text.trimmingCharacters(in: .newlines).split(separator: "\t", omittingEmptySubsequences: false)
                guard fields.count == 6 else { return nil }
                return Record(id: String(parts[0]), worker: String(parts[1]), name: String(fields[0]),
                              digest: String(fields[1]), sourceHost: String(fields[2]), redelivered: fields[3] == "1",
                              sourceApp: String(fields[4]), annotation: String(fields[5]))
            }
        }
    }

    /// Drops `count` files of distinct content into the ingest Inbox; returns each name's SHA-256 (hex).
    func burst(_ count: Int, prefix: String = "f") throws -> [String: String] {
        var expected: [String: String] = [:]
        for index in 0..<count {
            let name = "\(prefix)\(index).dat"
            var bytes = Array("file \(index) of \(name)\n".utf8)
            bytes += (0..<(64 + index % 512)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            try ingest.drop(name, contents: bytes)
            expected[name] = Self.hex(SHA256.digest(bytes))
        }
        return expected
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Waits until every name of `expected` was recorded at least once.
    func waitForAll(_ expected: [String: String], timeout: TimeInterval) throws {
        try waitUntil("all \(expected.count) files handled through the cluster", timeout: timeout) {
            Set(self.records().map(\.name)).isSuperset(of: expected.keys)
        }
    }

    /// A JetStream connection of the test's own, to look at the stream and publish by hand.
    func connect() throws -> NatsConnection {
        try NatsConnection.connect(NatsSettings(servers: [server.url], name: "inboxd-test"))
    }

    var names: ClusterNames { ClusterNames(name: name)! }

    /// inboxctl against one of the agents.
    func inboxctl(_ harness: AgentHarness, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.inboxctl.path, arguments + ["--runtime-dir", harness.runtime.path, "--state", harness.state.path])
    }
}

@Suite(.serialized) struct ClusterAgentTests {
    init() throws {
        try #require(NatsServer.available || !NatsServer.required, "\(NatsServer.missing)")
    }

    /// How many files a burst drops (INBOXD_CLUSTER_BURST overrides it, for a quick local run).
    static let burst = Int(ProcessInfo.processInfo.environment["INBOXD_CLUSTER_BURST"] ?? "") ?? 10_000

    /// The burst: every file handled exactly once, with the content it was dropped with, spread over both workers,
    /// each run told the ingest host's name; the ingest host's outbox is empty and its journal has a published entry
    /// with the stream's sequence for each file.
    @Test(.enabled(if: NatsServer.available)) func aBurstIsHandledOnceAcrossTwoWorkers() throws {
        let world = try ClusterWorld()
        let expected = try world.burst(Self.burst)
        try world.waitForAll(expected, timeout: 600)
        let records = world.records()
        #expect(records.count == expected.count, "no file handled twice")
        for record in records {
            #expect(expected[record.name] == record.digest, "\(record.name) arrived with the content it was dropped with")
            #expect(record.sourceHost == "ingest")
            #expect(!record.redelivered)
        }
        let byWorker = Dictionary(grouping: records, by: \.worker).mapValues(\.count)
        #expect(byWorker.count == 2 && byWorker.values.allSatisfy { $0 > 0 }, "spread over both workers: \(byWorker)")
        try waitUntil("the outbox is empty", timeout: 30) {
            world.ingest.contents(of: world.ingest.state.appendingPathComponent("outbox")).isEmpty
        }
        let published = try Journal.wait(for: ["_PID=\(world.ingest.pid)", "INBOX_EVENT=published"], count: 1)
        #expect(published.first?["INBOX_CLUSTER_SEQUENCE"] as? String != nil)
        // The stream holds nothing once every delivery was answered.
        let connection = try world.connect()
        defer { connection.close() }
        try waitUntil("the stream is empty", timeout: 30) {
            try connection.jetStream().stream(world.names.stream)?.messages == 0
        }
        // And the object store: each content removed with its info once handled, no marker kept per file.
        let objects = try ObjectStoreLayout(bucket: world.names.objectStore).streamName
        try waitUntil("the object store is empty", timeout: 30) {
            try connection.jetStream().stream(objects)?.messages == 0
        }
    }

    /// A handler registered on no worker: its deliveries wait in the stream (none lost, none refused), and they are
    /// delivered once a worker registers it.
    @Test(.enabled(if: NatsServer.available)) func aHandlerRegisteredOnNoHostWaitsInTheStream() throws {
        let world = try ClusterWorld(workerHandler: false)
        var expected = try world.burst(19)
        // What its sender attached travels with it.
        let attached = Array("with metadata\n".utf8)
        try world.ingest.drop("attached.dat", contents: attached,
                              attributes: ["user.inbox.source-app": "com.example.mail",
                                           "user.inbox.annotation": "{\"page\":3}"])
        expected["attached.dat"] = ClusterWorld.hex(SHA256.digest(attached))
        let connection = try world.connect()
        defer { connection.close() }
        try waitUntil("20 deliveries wait in the stream", timeout: 60) {
            try connection.jetStream().stream(world.names.stream)?.messages == 20
        }
        #expect(world.records().isEmpty)
        // What `inboxctl status --cluster` shows of it: 20 waiting, no host working for it; and the hosts present.
        var shown = ""
        try waitUntil("inboxctl status --cluster lists the handler and the hosts", timeout: 30) {
            shown = try world.inboxctl(world.ingest, ["status", "--cluster"]).stdout
            return shown.contains("none (no host works for it)") && shown.contains("worker-2")
        }
        let row = shown.split(separator: "\n").first { $0.contains(ClusterWorld.handler) } ?? ""
        #expect(row.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first == "20", "\(shown)")
        for host in ["ingest", "worker-1", "worker-2"] { #expect(shown.contains(host), "\(shown)") }
        #expect(shown.contains("Connection:     connected to \(world.server.url)"), "\(shown)")
        let metrics = try world.inboxctl(world.ingest, ["metrics"]).stdout
        #expect(metrics.contains("inboxd_cluster_pending{cluster=\"\(world.name)\",handler=\"\(ClusterWorld.handler)\"} 20"),
                "\(metrics)")
        #expect(metrics.contains("inboxd_cluster_connected{cluster=\"\(world.name)\"} 1"))
        try world.register(on: world.workers[0], worker: "worker-1", sleep: nil)
        try world.waitForAll(expected, timeout: 120)
        #expect(world.records().count == 20)
        let record = try #require(world.records().first { $0.name == "attached.dat" })
        #expect(record.sourceApp == "com.example.mail" && record.annotation == "{\"page\":3}", "\(record)")
    }

    /// Messages nobody's ingest host wrote (not JSON, a path for a name, an oversize name, an object that is missing,
    /// a digest that does not match the object): each is terminated with a failed entry on the worker, which keeps
    /// running and goes on to handle a good file after them.
    @Test(.enabled(if: NatsServer.available)) func poisonMessagesAreTerminated() throws {
        let world = try ClusterWorld(workers: 1)
        let connection = try world.connect()
        defer { connection.close() }
        let jetStream = try connection.jetStream()
        let subject = try #require(world.names.deliverySubject(for: ClusterWorld.handler))
        // The stream exists once an agent connected.
        try waitUntil("the stream exists", timeout: 30) { try jetStream.stream(world.names.stream) != nil }
        let good = ClusterDelivery(id: String(repeating: "a", count: 32), handler: ClusterWorld.handler, name: "x.dat",
                                   contentType: "public.data", contentTypes: ["public.data"], sourceHost: "h",
                                   sourceUID: 0, object: "missing-object",
                                   digest: ObjectDigest(sha256: [UInt8](repeating: 1, count: 32))!, size: 3,
                                   arrivedAtUSec: 0)
        var pathName = good
        pathName.id = String(repeating: "b", count: 32)
        var text = String(decoding: pathName.encode(), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"x.dat\"", with: "\"../../etc/passwd\"")
        var long = good
        long.id = String(repeating: "c", count: 32)
        let longText = String(decoding: long.encode(), as: UTF8.self)
            .replacingOccurrences(of: "\"x.dat\"", with: "\"\(String(repeating: "n", count: 300))\"")
        // An object that exists, named by a message whose digest is not its content's.
        let contentFile = world.ingest.root.appendingPathComponent("object-content")
        try Data("abc".utf8).write(to: contentFile)
        let descriptor = try FileDescriptor.open(contentFile.path, .readOnly)
        defer { descriptor.close() }
        _ = try ObjectStore.ensure(jetStream, bucket: world.names.objectStore).put("real-object", from: descriptor)
        var mismatch = good
        mismatch.id = String(repeating: "d", count: 32)
        mismatch.object = "real-object"
        let poison: [[UInt8]] = [Array("not json at all".utf8), Array(text.utf8), Array(longText.utf8), good.encode(),
                                 mismatch.encode()]
        for payload in poison { _ = try jetStream.publish(subject, payload: payload) }
        let failed = try Journal.wait(for: ["_PID=\(world.workers[0].pid)", "INBOX_EVENT=failed"], count: poison.count,
                                      timeout: 60)
        #expect(failed.count == poison.count)
        try waitUntil("the stream is empty", timeout: 30) { try jetStream.stream(world.names.stream)?.messages == 0 }
        #expect(world.workers[0].process?.isRunning == true)
        let expected = try world.burst(1, prefix: "after")
        try world.waitForAll(expected, timeout: 60)
    }

    /// A worker killed (SIGKILL, its handlers with it) in the middle of a burst: none lost; what it held is
    /// delivered again by the other after AckWaitSec=, each such run marked redelivered.
    @Test(.enabled(if: NatsServer.available)) func aWorkerKilledMidBurstLosesNothing() throws {
        let world = try ClusterWorld(sleep: "0.05")
        let count = Self.burst
        let expected = try world.burst(count)
        try waitUntil("a tenth handled", timeout: 120) { world.records().count >= count / 10 }
        let victim = world.workers[0]
        Glibc.kill(victim.pid, SIGKILL)
        victim.process?.waitUntilExit()
        let before = Set(world.records().filter { $0.worker == "worker-1" }.map(\.name))
        try world.waitForAll(expected, timeout: 600)
        let records = world.records()
        let twice = Dictionary(grouping: records, by: \.name).filter { $0.value.count > 1 }
        // At most what the killed worker held: twice its MaxConcurrent= (2 × the processors) per handler.
        #expect(twice.count <= 4 * ProcessInfo.processInfo.activeProcessorCount, "\(twice.count) ran twice")
        for (name, runs) in twice {
            #expect(runs.contains { $0.redelivered }, "\(name) ran again and was marked redelivered")
            #expect(before.contains(name) || runs.filter { $0.worker == "worker-1" }.isEmpty)
        }
        for record in records { #expect(expected[record.name] == record.digest) }
    }

    /// nats-server killed (SIGKILL) in the middle of a burst and started again on its store: none lost; what ran
    /// twice was marked redelivered.
    @Test(.enabled(if: NatsServer.available)) func theServerKilledMidBurstLosesNothing() throws {
        let world = try ClusterWorld()
        let count = Self.burst
        let expected = try world.burst(count)
        try waitUntil("a tenth handled", timeout: 120) { world.records().count >= count / 10 }
        world.server.kill()
        Thread.sleep(forTimeInterval: 2)
        try world.server.restart()
        try world.waitForAll(expected, timeout: 600)
        let records = world.records()
        let twice = Dictionary(grouping: records, by: \.name).filter { $0.value.count > 1 }
        // At most what both workers held when the server went. Not asserted: that each is marked redelivered. A
        // SIGKILLed nats-server (2.9) loses the acks, delivery counts and duplicate-window entries it had not yet
        // written out, so a delivery it gives out again after its restart can carry a count of 1 (docs/cluster.md).
        #expect(twice.count <= 8 * ProcessInfo.processInfo.activeProcessorCount, "\(twice.count) ran twice")
        for record in records { #expect(expected[record.name] == record.digest) }
    }

    /// nats-server stopped for 10 s in the middle of a burst: arrivals wait in the ingest host's outbox (the journal
    /// says so once), and every file is handled once it is back.
    @Test(.enabled(if: NatsServer.available)) func theServerStoppedForTenSecondsLosesNothing() throws {
        let world = try ClusterWorld()
        let count = Self.burst
        let first = try world.burst(count / 2, prefix: "a")
        try waitUntil("some handled", timeout: 120) { world.records().count >= count / 10 }
        world.server.stop()
        let second = try world.burst(count / 2, prefix: "b")
        let unreachable = try Journal.wait(for: ["_PID=\(world.ingest.pid)", "MESSAGE_ID=\(JournalEvent.cluster.messageID)",
                                                 "PRIORITY=4"], timeout: 30)
        #expect(unreachable.count == 1)
        Thread.sleep(forTimeInterval: 10)
        try world.server.restart()
        let expected = first.merging(second) { a, _ in a }
        try world.waitForAll(expected, timeout: 600)
        for record in world.records() { #expect(expected[record.name] == record.digest) }
    }

    /// The server gives a message out again while its delivery still runs on this host (the worker's cluster child
    /// stalled past AckWait, so no in-progress ack reached the server): the handler runs once per file, under the
    /// file's own name, the second message is said in the journal, and both are answered when the delivery ends.
    @Test(.enabled(if: NatsServer.available)) func aMessageGivenOutAgainWhileItRunsHereIsDeliveredOnce() throws {
        let world = try ClusterWorld(workers: 1, ackWait: "1s", sleep: "6")
        let worker = world.workers[0]
        let expected = try world.burst(2)
        _ = try Journal.wait(for: ["_PID=\(worker.pid)", "MESSAGE_ID=\(JournalEvent.received.messageID)"], count: 2,
                             timeout: 60)
        let child = try #require(Self.child(of: worker.pid, named: "inboxd-cluster"), "the worker's cluster child")
        kill(child, SIGSTOP)
        Thread.sleep(forTimeInterval: 3)
        kill(child, SIGCONT)
        let again = try Journal.wait(for: ["_PID=\(worker.pid)", "MESSAGE_ID=\(JournalEvent.received.messageID)",
                                           "INBOX_REDELIVERED=1"], timeout: 30)
        #expect((again.first?["MESSAGE"] as? String)?.contains("not delivered twice") == true)
        try world.waitForAll(expected, timeout: 60)
        // Long enough for a second run of either to have ended, had there been one.
        Thread.sleep(forTimeInterval: 8)
        let records = world.records()
        #expect(records.count == 2, "each file ran once: \(records.map(\.name))")
        for record in records { #expect(expected[record.name] == record.digest) }
        let connection = try world.connect()
        defer { connection.close() }
        try waitUntil("the stream is empty", timeout: 30) {
            try connection.jetStream().stream(world.names.stream)?.messages == 0
        }
    }

    /// A child process of `parent` by its command name (/proc/PID/stat), if there is one.
    static func child(of parent: pid_t, named name: String) -> pid_t? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            let comm = stat[stat.index(after: open)..<close]
            let rest = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            if comm == name.prefix(15), rest.count > 1, pid_t(rest[1]) == parent { return pid }
        }
        return nil
    }

    /// A 200 MiB file goes through the object store in chunks and arrives whole.
    @Test(.enabled(if: NatsServer.available)) func aLargeFileArrivesWhole() throws {
        let world = try ClusterWorld(workers: 1, ackWait: "30s")
        let size = 200 << 20
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index >> 12) }
        try world.ingest.drop("large.bin", contents: bytes)
        let expected = ["large.bin": ClusterWorld.hex(SHA256.digest(bytes))]
        try world.waitForAll(expected, timeout: 300)
        #expect(world.records().first?.digest == expected["large.bin"])
    }

    /// TLS with a verified client certificate and an NKey user per agent: the files go through; an agent whose seed
    /// the server does not know says so, with the server's words, in the journal and its status line, and takes
    /// nothing.
    @Test(.enabled(if: NatsServer.available)) func tlsAndNKeysAndAWrongCredential() throws {
        let keys = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-cluster-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: keys) }
        func path(_ name: String) -> String { keys.appendingPathComponent(name).path }
        try TestPKI.makeCA(in: keys)
        try TestPKI.makeServerCertificate("server", in: keys, alternativeNames: "IP:127.0.0.1,DNS:localhost")
        try TestPKI.makeServerCertificate("client", in: keys, alternativeNames: "DNS:inboxd-client")
        let ingestKey = try NatsSecurityTests.makeUser("ingest", in: keys)
        let workerKey = try NatsSecurityTests.makeUser("worker", in: keys)
        let stranger = try NatsSecurityTests.makeUser("stranger", in: keys)
        chmod(keys.path, 0o755)
        let world = try ClusterWorld(workers: 1, serverConfiguration: """
            tls {
              cert_file: "\(path("server.pem"))"
              key_file: "\(path("server.key"))"
              ca_file: "\(path("ca.pem"))"
              verify: true
            }
            authorization {
              users = [ { nkey: \(ingestKey.pair.publicKey) }, { nkey: \(workerKey.pair.publicKey) } ]
            }

            """, servers: "tls://127.0.0.1:PORT") { host in
            """
            TLSCAFile=\(path("ca.pem"))
            TLSCertFile=\(path("client.pem"))
            TLSKeyFile=\(path("client.key"))
            NKeySeedFile=\(host == "ingest" ? ingestKey.seedFile : workerKey.seedFile)
            """
        }
        let expected = try world.burst(5)
        try world.waitForAll(expected, timeout: 60)
        #expect(world.records().count == 5)

        let intruder = try AgentHarness()
        try world.register(on: intruder, worker: "intruder", sleep: nil)
        let config = world.config(for: intruder, host: "intruder", work: true, ackWait: "5s")
            .replacingOccurrences(of: workerKey.seedFile, with: stranger.seedFile)
        try intruder.start(config: config)
        let refused = try Journal.wait(for: ["_PID=\(intruder.pid)", "MESSAGE_ID=\(JournalEvent.cluster.messageID)", "PRIORITY=4"], timeout: 30)
        let message = refused.first?["MESSAGE"] as? String ?? ""
        #expect(message.contains("Authorization Violation"), "\(message)")
        try waitUntil("the status line says the cluster cannot be reached", timeout: 30) {
            try world.inboxctl(intruder, ["status"]).stdout.contains("unreachable")
        }
    }

    /// A package document dropped in a cluster Inbox: the cluster carries single files, so the ingest host delivers it
    /// itself (with a notice), and nothing of it waits in the outbox.
    @Test(.enabled(if: NatsServer.available)) func aPackageInAClusterInboxIsDeliveredOnTheIngestHost() throws {
        let world = try ClusterWorld(workers: 1)
        try world.ingest.register("test.rtfd.\(world.ingest.tag)", contentTypes: "com.apple.rtfd", rank: "Owner")
        try waitUntil("the ingest host loaded the package handler", timeout: 30) {
            (try world.inboxctl(world.ingest, ["status", "--json"]).stdout).contains("\"registrations\":2")
        }
        let staged = try world.ingest.makePackage("Report.rtfd", ["TXT.rtf": Array("{\\rtf1 hi}".utf8)])
        try world.ingest.dropPackage(staged)
        try waitUntil("the ingest host's handler ran on the package", timeout: 60) {
            world.ingest.recording(named: "Report.rtfd") != nil
        }
        let notice = try Journal.wait(for: ["_PID=\(world.ingest.pid)", "PRIORITY=5", "INBOX_HANDLER=test.rtfd.\(world.ingest.tag)"],
                                      timeout: 30)
        #expect((notice.first?["MESSAGE"] as? String)?.contains("which the cluster does not carry") == true)
        #expect(world.ingest.contents(of: world.ingest.state.appendingPathComponent("outbox")).isEmpty)
        #expect(world.records().isEmpty)
    }

    /// A plain-text connection to a server that is not this host is refused at load, at its line, unless
    /// Insecure=yes.
    @Test func aPlainRemoteServerIsRefusedWithoutInsecure() throws {
        let harness = try AgentHarness()
        let config = harness.root.appendingPathComponent("inboxd.conf")
        try """
            [Agent]
            Inbox=\(harness.inbox.path)
            [Cluster]
            Name=office
            Servers=nats://192.0.2.7:4222
            """.write(to: config, atomically: true, encoding: .utf8)
        let message = "\(config.path):5: nats://192.0.2.7:4222 is not this host and nothing encrypts the connection"
        let verified = try run(Binaries.inboxctl.path, ["verify", config.path])
        #expect(verified.status == 1)
        #expect(verified.stdout.contains(message) || verified.stderr.contains(message), "\(verified)")
        let agent = try run(Binaries.inboxd.path, ["--config", config.path, "--state", harness.state.path,
                                                   "--runtime-dir", harness.runtime.path])
        #expect(agent.status == 2)
        #expect(agent.stderr.contains(message))
        try (String(contentsOf: config, encoding: .utf8) + "\nInsecure=yes\n").write(to: config, atomically: true,
                                                                                    encoding: .utf8)
        let insecure = try run(Binaries.inboxctl.path, ["verify", config.path])
        #expect(!insecure.stdout.contains(message) && !insecure.stderr.contains(message), "\(insecure)")
    }
}
