import Foundation
import InboxCore
import InboxCluster
import InboxSystem
import Testing

/// The cluster layer (InboxSystem/Cluster) against a real nats-server of each test's own (NatsServer): publishing with
/// de-duplication, the work queue's pull consumer shared by two workers and its acknowledgements, the object store in
/// NATS ADR-20's layout read back raw, the key-value bucket, and connections refused for a reason the server gives.
@Suite(.serialized, .enabled(if: NatsServer.available || NatsServer.required, Comment(rawValue: NatsServer.missing)))
struct NatsClientTests {
    let names = ClusterNames(name: "test")!
    let handler = "com.example.notes"

    init() throws {
        try #require(NatsServer.available, "CI=true: nats-server must be installed (\(NatsServer.missing))")
    }

    func connect(_ server: NatsServer, _ name: String = "inboxd test", url: String? = nil,
                 credentials: NatsCredentials? = nil, tls: NatsTLS? = nil) throws(NatsError) -> NatsConnection {
        try NatsConnection.connect(NatsSettings(servers: [url ?? server.url], name: name, connectTimeout: .seconds(2),
                                                requestTimeout: .seconds(5), credentials: credentials, tls: tls))
    }

    /// The delivery stream and one handler's consumer, as a host sets them up.
    func workQueue(_ js: JetStream, ackWait: Duration = .seconds(30), maxDeliver: Int = 5) throws -> PullConsumerSettings {
        try js.ensureStream(.workQueue(name: names.stream, subjects: [names.streamSubjects],
                                       duplicateWindow: .seconds(60)))
        let consumer = PullConsumerSettings(stream: names.stream, durable: names.consumer(for: handler)!,
                                            filterSubject: names.deliverySubject(for: handler)!,
                                            ackWait: ackWait, maxDeliver: maxDeliver, maxAckPending: 100)
        try js.ensurePullConsumer(consumer)
        return consumer
    }

    @discardableResult
    func deliver(_ js: JetStream, _ id: String) throws -> JetStream.PublishAck {
        try js.publish(names.deliverySubject(for: handler)!, payload: Array("delivery \(id)".utf8),
                       headers: [("Inbox-Delivery-Id", id)], messageID: id)
    }

    func text(_ message: JetStreamMessage) -> String { String(decoding: message.payload, as: UTF8.self) }

    // MARK: Publishing and the work queue

    @Test func aRepeatedPublishWithTheSameMessageIDIsStoredOnce() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let stream = try js.ensureStream(.workQueue(name: names.stream, subjects: [names.streamSubjects],
                                                    duplicateWindow: .seconds(60)))
        #expect(stream.name == "INBOXD_TEST" && stream.subjects == ["inboxd.test.deliver.>"])
        let first = try deliver(js, "d1")
        #expect(first.stream == "INBOXD_TEST" && first.sequence == 1 && !first.duplicate)
        let again = try deliver(js, "d1")
        #expect(again.duplicate, "the same Nats-Msg-Id within the window is a duplicate")
        #expect(again.sequence == 1)
        #expect(try js.stream(names.stream)?.messages == 1)
        #expect(try deliver(js, "d2").sequence == 2)
        let stored = try #require(try js.message(stream: names.stream, sequence: 1))
        #expect(stored.subject == "inboxd.test.deliver.com.example.notes")
        #expect(stored.headers["Nats-Msg-Id"] == ["d1"] && stored.headers["Inbox-Delivery-Id"] == ["d1"])
        #expect(String(decoding: stored.payload, as: UTF8.self) == "delivery d1")
        // Creating it again (another host starting) updates it in place.
        try js.ensureStream(.workQueue(name: names.stream, subjects: [names.streamSubjects],
                                       duplicateWindow: .seconds(30)))
        #expect(try js.stream(names.stream)?.messages == 2)
    }

    @Test func twoWorkersOnOneDurableConsumerGetDifferentMessages() throws {
        let server = try NatsServer()
        let hostA = try connect(server, "host a").jetStream(), hostB = try connect(server, "host b").jetStream()
        let consumer = try workQueue(hostA)
        #expect(try workQueue(hostB).durable == "test_com_example_notes", "the second host binds to the same consumer")
        for index in 1...10 { try deliver(hostA, "d\(index)") }
        let workerA = try hostA.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        let workerB = try hostB.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        let fromA = try workerA.fetch(max: 5, timeout: .seconds(3))
        let fromB = try workerB.fetch(max: 5, timeout: .seconds(3))
        #expect(fromA.count == 5 && fromB.count == 5)
        let a = Set(fromA.map(text)), b = Set(fromB.map(text))
        #expect(a.isDisjoint(with: b), "\(a) and \(b)")
        #expect(a.union(b) == Set((1...10).map { "delivery d\($0)" }))
        #expect(try fromA.allSatisfy { try $0.metadata().delivered == 1 })
        for message in fromA + fromB { try message.ack() }
        #expect(try workerA.fetch(max: 5, timeout: .milliseconds(300)).isEmpty)
        #expect(try hostA.consumer(stream: consumer.stream, name: consumer.durable)?.ackPending == 0)
        #expect(try hostA.stream(names.stream)?.messages == 0, "a work queue drops what was acknowledged")
        // Fewer than asked for: returned as soon as they are there, not at the timeout.
        try deliver(hostB, "d11")
        try deliver(hostB, "d12")
        let askedAt = Date()
        let two = try workerB.fetch(max: 10, timeout: .seconds(5))
        #expect(two.map(text) == ["delivery d11", "delivery d12"])
        #expect(Date().timeIntervalSince(askedAt) < 2, "\(Date().timeIntervalSince(askedAt)) s")
        for message in two { try message.ack() }
    }

    @Test func aConsumerIsCreatedOnceAndUpdatedInPlace() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        var consumer = try workQueue(js, ackWait: .seconds(30), maxDeliver: 5)
        try deliver(js, "d1")
        let held = try js.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        #expect(try held.fetch(max: 1, timeout: .seconds(3)).count == 1)
        (consumer.ackWait, consumer.maxDeliver, consumer.maxAckPending) = (.seconds(10), 3, 7)
        let updated = try js.ensurePullConsumer(consumer)
        #expect(updated.name == "test_com_example_notes" && updated.filterSubject == "inboxd.test.deliver.com.example.notes")
        #expect(updated.ackWait == .seconds(10) && updated.maxDeliver == 3 && updated.maxAckPending == 7)
        #expect(updated.ackPending == 1, "what it had handed out is still out")
        #expect(try js.consumer(stream: consumer.stream, name: "no_such_consumer") == nil)
        #expect(try js.stream("no-such-stream") == nil)
        do {
            _ = try js.pullSubscription(stream: consumer.stream, consumer: "no_such_consumer")
            Issue.record("bound to a consumer that does not exist")
        } catch {
            #expect(error.description.contains("no_such_consumer"), "\(error)")
        }
    }

    @Test func aNakWithADelayIsRedeliveredAfterIt() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let consumer = try workQueue(js)
        let sequence = try deliver(js, "d1").sequence
        let worker = try js.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        let first = try #require(try worker.fetch(max: 1, timeout: .seconds(3)).first)
        #expect(try first.metadata().delivered == 1)
        let nakAt = Date()
        try first.nak(delay: .seconds(1))
        #expect(try worker.fetch(max: 1, timeout: .milliseconds(300)).isEmpty, "not before the delay")
        let again = try #require(try worker.fetch(max: 1, timeout: .seconds(5)).first)
        #expect(Date().timeIntervalSince(nakAt) >= 0.9)
        let metadata = try again.metadata()
        #expect(metadata.delivered == 2 && metadata.streamSequence == sequence)
        #expect(metadata.stream == names.stream && metadata.consumer == consumer.durable)
        #expect(again.header("Inbox-Delivery-Id") == "d1")
        try again.ack()
    }

    @Test func anUnacknowledgedMessageIsRedeliveredAfterTheAckWait() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let consumer = try workQueue(js, ackWait: .seconds(1))
        try deliver(js, "d1")
        let worker = try js.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        let fetchedAt = Date()
        let first = try #require(try worker.fetch(max: 1, timeout: .seconds(3)).first)
        #expect(try first.metadata().delivered == 1)
        let again = try #require(try worker.fetch(max: 1, timeout: .seconds(5)).first)
        #expect(Date().timeIntervalSince(fetchedAt) >= 0.9)
        #expect(try again.metadata().delivered == 2)
        #expect(try again.metadata().streamSequence == first.metadata().streamSequence)
        try again.ack()
    }

    @Test func aTerminatedMessageIsNeverRedelivered() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let consumer = try workQueue(js, ackWait: .seconds(1))
        try deliver(js, "d1")
        let worker = try js.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        let message = try #require(try worker.fetch(max: 1, timeout: .seconds(3)).first)
        try message.term()
        #expect(try worker.fetch(max: 1, timeout: .milliseconds(2500)).isEmpty, "not after two and a half ack waits")
        #expect(try js.consumer(stream: consumer.stream, name: consumer.durable)?.ackPending == 0)
    }

    @Test func maxDeliverEndsRedelivery() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let consumer = try workQueue(js, maxDeliver: 2)
        try deliver(js, "d1")
        let worker = try js.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        for attempt in 1...2 {
            let message = try #require(try worker.fetch(max: 1, timeout: .seconds(3)).first, "attempt \(attempt)")
            #expect(try message.metadata().delivered == UInt64(attempt))
            try message.nak(delay: .milliseconds(100))
        }
        #expect(try worker.fetch(max: 1, timeout: .seconds(1)).isEmpty, "MaxDeliver=2: no third attempt")
    }

    @Test func inProgressStartsTheAckWaitOver() throws {
        let server = try NatsServer()
        let hostA = try connect(server, "host a").jetStream(), hostB = try connect(server, "host b").jetStream()
        let consumer = try workQueue(hostA, ackWait: .seconds(2))
        try deliver(hostA, "d1")
        let workerA = try hostA.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        let workerB = try hostB.pullSubscription(stream: consumer.stream, consumer: consumer.durable)
        let message = try #require(try workerA.fetch(max: 1, timeout: .seconds(3)).first)
        Thread.sleep(forTimeInterval: 1.3)
        try message.inProgress()
        Thread.sleep(forTimeInterval: 1.3)
        // 2.6 s after the fetch, past the 2 s ack wait, but 1.3 s after the in-progress acknowledgement.
        #expect(try workerB.fetch(max: 1, timeout: .milliseconds(300)).isEmpty, "still the first worker's")
        // With no further word from the first worker, the second gets it once the renewed wait has passed.
        let again = try #require(try workerB.fetch(max: 1, timeout: .seconds(5)).first)
        #expect(try again.metadata().delivered == 2)
        try again.ack()
    }

    // MARK: The object store

    /// `count` bytes that are not a repetition of a short pattern (xorshift), so that a chunk out of place shows.
    func content(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    func file(_ server: NatsServer, _ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = server.root.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    @discardableResult
    func put(_ store: ObjectStore, _ name: String, _ url: URL) throws -> ObjectInfo {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        return try store.put(name, from: FileDescriptor(rawValue: fd))
    }

    @discardableResult
    func get(_ store: ObjectStore, _ name: String, _ url: URL) throws -> ObjectInfo {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        return try store.get(name, into: FileDescriptor(rawValue: fd))
    }

    /// base64url with padding, by Foundation's base64 and the alphabet's two substitutions (RFC 4648, 5).
    func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// sha256sum's digest of a file, as bytes.
    func sha256sum(_ url: URL) throws -> Data {
        let hex = try run("/usr/bin/sha256sum", [url.path]).stdout.prefix(64)
        return Data(stride(from: 0, to: 64, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! })
    }

    @Test func aThreeMiBObjectIsStoredInTheStandardLayoutAndReadBackVerified() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let store = try ObjectStore.ensure(js, bucket: names.objectStore)
        let bytes = content(3 * 1024 * 1024)
        let source = try file(server, "source", bytes)
        let name = "rapport final 2026.pdf"
        let stored = try put(store, name, source)
        let digest = "SHA-256=" + base64url(try sha256sum(source))
        #expect(stored.size == 3_145_728 && stored.chunks == 24 && stored.digest == digest)

        // The stream and its subjects, as ADR-20 lays them out.
        let stream = try #require(try js.stream("OBJ_inboxd_test_content", subjects: "$O.inboxd_test_content.>"))
        #expect(stream.subjects == ["$O.inboxd_test_content.C.>", "$O.inboxd_test_content.M.>"])
        #expect(stream.allowRollup && stream.allowDirect)
        let metaSubject = "$O.inboxd_test_content.M." + base64url(Data(name.utf8))
        let chunkSubject = "$O.inboxd_test_content.C.\(stored.nuid)"
        #expect(stream.subjectCounts == [metaSubject: 1, chunkSubject: 24])
        // The info, read raw and parsed by Foundation.
        let meta = try #require(try js.lastMessage(stream: "OBJ_inboxd_test_content", subject: metaSubject))
        #expect(meta.headers["Nats-Rollup"] == ["sub"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(meta.payload)) as? [String: Any])
        #expect(json["name"] as? String == name && json["bucket"] as? String == "inboxd_test_content")
        #expect(json["nuid"] as? String == stored.nuid && (json["nuid"] as? String)?.count == 22)
        #expect(json["size"] as? Int == 3_145_728 && json["chunks"] as? Int == 24)
        #expect(json["digest"] as? String == digest && json["mtime"] is String)
        #expect((json["options"] as? [String: Any])?["max_chunk_size"] as? Int == 131_072)
        // The first chunk, read raw: the file's first 128 KiB.
        var firstChunk: JetStream.StoredMessage?
        for sequence in 1...stream.lastSequence where firstChunk == nil {
            firstChunk = try js.message(stream: "OBJ_inboxd_test_content", sequence: sequence)
                .flatMap { $0.subject == chunkSubject ? $0 : nil }
        }
        #expect(firstChunk?.payload == Array(bytes[0..<131_072]))

        let copy = server.root.appendingPathComponent("copy")
        let read = try get(store, name, copy)
        #expect(try Data(contentsOf: copy) == Data(bytes))
        #expect(read.nuid == stored.nuid && read.modified != nil)
        #expect(try store.info(name)?.digest == digest)
        #expect(try store.list().map(\.name) == [name])
        #expect(try store.info("no such object") == nil)
        #expect(throws: ObjectStoreError.self) { try get(store, "no such object", copy) }
    }

    @Test func aReplacedObjectLeavesNoOldChunksAndADeletedOneIsGone() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let store = try ObjectStore.ensure(js, bucket: names.objectStore)
        let first = try put(store, "a", try file(server, "first", content(300_000)))
        let second = try put(store, "a", try file(server, "second", content(200_000, seed: 7)))
        #expect(first.nuid != second.nuid && second.chunks == 2)
        let layout = store.layout
        var counts = try #require(try js.stream(layout.streamName, subjects: "$O.>")).subjectCounts
        #expect(counts[layout.chunkSubject(nuid: first.nuid)] == nil, "the first object's chunks are purged")
        #expect(counts[layout.chunkSubject(nuid: second.nuid)] == 2)
        let copy = server.root.appendingPathComponent("copy")
        try get(store, "a", copy)
        #expect(try Data(contentsOf: copy) == Data(content(200_000, seed: 7)))
        _ = try put(store, "b", try file(server, "empty", []))
        #expect(try store.list().map(\.name) == ["a", "b"])
        try get(store, "b", copy)
        #expect(try Data(contentsOf: copy).isEmpty)

        try store.delete("a")
        try store.delete("a")
        #expect(try store.info("a") == nil && store.info("a", includingDeleted: true)?.deleted == true)
        #expect(try store.list().map(\.name) == ["b"])
        counts = try #require(try js.stream(layout.streamName, subjects: "$O.>")).subjectCounts
        #expect(counts[layout.chunkSubject(nuid: second.nuid)] == nil, "a deleted object's chunks are purged")
        let marker = try #require(try js.lastMessage(stream: layout.streamName, subject: layout.metaSubject(name: "a")))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(marker.payload)) as? [String: Any])
        #expect(json["deleted"] as? Bool == true && json["size"] as? Int == 0)
        #expect(throws: ObjectStoreError.self) { try store.delete("never stored") }

        // Removed without a trace (a cluster's content, named once): no chunk, no info, no marker left.
        try store.remove("b")
        try store.remove("b")
        try store.remove("never stored")
        #expect(try store.info("b", includingDeleted: true) == nil)
        _ = try put(store, "c", try file(server, "third", content(150_000, seed: 3)))
        let third = try #require(try store.info("c"))
        try store.remove("c")
        counts = try #require(try js.stream(layout.streamName, subjects: "$O.>")).subjectCounts
        #expect(counts[layout.metaSubject(name: "b")] == nil && counts[layout.metaSubject(name: "c")] == nil)
        #expect(counts[layout.chunkSubject(nuid: third.nuid)] == nil)
    }

    @Test func aCorruptedOrMissingChunkIsDetected() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let store = try ObjectStore.ensure(js, bucket: names.objectStore)
        let bytes = content(300_000)
        let info = try put(store, "doc", try file(server, "doc", bytes))
        #expect(info.chunks == 3)
        let layout = store.layout
        let subject = layout.chunkSubject(nuid: info.nuid)
        let last = try #require(try js.stream(layout.streamName)).lastSequence
        let chunks = try (1...last).compactMap { try js.message(stream: layout.streamName, sequence: $0) }
            .filter { $0.subject == subject }
        #expect(chunks.count == 3)
        // The same chunks again, one bit of the second flipped: same count, same size, another digest.
        try js.purge(stream: layout.streamName, subject: subject)
        for (index, chunk) in chunks.enumerated() {
            var payload = chunk.payload
            if index == 1 { payload[1000] ^= 0x01 }
            _ = try js.publish(subject, payload: payload)
        }
        let copy = server.root.appendingPathComponent("copy")
        do {
            try get(store, "doc", copy)
            Issue.record("a corrupted chunk was not detected")
        } catch let error as ObjectStoreError {
            guard case .corrupt(_, _, let reason) = error else { throw error }
            #expect(reason.contains("digest"), "\(error)")
        }
        // A chunk gone: the count and size say so.
        let now = try #require(try js.stream(layout.streamName)).lastSequence
        try js.deleteMessage(stream: layout.streamName, sequence: now)
        do {
            try get(store, "doc", copy)
            Issue.record("a missing chunk was not detected")
        } catch let error as ObjectStoreError {
            guard case .corrupt(_, _, let reason) = error else { throw error }
            #expect(reason.contains("2 chunks where its info says 3"), "\(error)")
        }
    }

    /// `nats object ls` (natscli, which Debian 12 does not package) lists what the store put, when it is installed.
    @Test(.enabled(if: ["/usr/bin/nats", "/usr/local/bin/nats"].contains { FileManager.default.isExecutableFile(atPath: $0) },
                   "no nats command (natscli) to list the bucket with"))
    func theNatsCommandListsTheObject() throws {
        let server = try NatsServer()
        let store = try ObjectStore.ensure(try connect(server).jetStream(), bucket: names.objectStore)
        _ = try put(store, "listed.txt", try file(server, "listed", content(1000)))
        let nats = ["/usr/bin/nats", "/usr/local/bin/nats"].first { FileManager.default.isExecutableFile(atPath: $0) }!
        let listing = try run(nats, ["--server", server.url, "object", "ls", names.objectStore])
        #expect(listing.status == 0 && listing.stdout.contains("listed.txt"), "\(listing)")
    }

    // MARK: The key-value bucket

    @Test func keyValuePutGetDeleteAndKeys() throws {
        let server = try NatsServer()
        let js = try connect(server).jetStream()
        let presence = try KeyValueBucket.ensure(js, bucket: names.keyValue, maxAge: .seconds(60))
        let revision = try presence.put("host-a", Array("{\"pid\":1}".utf8))
        try presence.put("host-b", Array("{\"pid\":2}".utf8))
        let entry = try #require(try presence.get("host-a"))
        #expect(entry.value == Array("{\"pid\":1}".utf8) && entry.revision == revision && entry.created > 0)
        #expect(try presence.keys().sorted() == ["host-a", "host-b"])
        try presence.delete("host-a")
        #expect(try presence.get("host-a") == nil)
        #expect(try presence.keys() == ["host-b"])
        #expect(try presence.get("host-c") == nil)
        // Another host: the same settings bind to the same bucket.
        let again = try KeyValueBucket.ensure(try connect(server, "host b").jetStream(), bucket: names.keyValue,
                                              maxAge: .seconds(60))
        #expect(try again.get("host-b")?.value == Array("{\"pid\":2}".utf8))
        #expect(try KeyValueBucket.bind(js, bucket: names.keyValue).keys() == ["host-b"])
    }

    // MARK: Connections refused

    @Test func nothingListeningIsAClearError() throws {
        let url = "nats://127.0.0.1:\(NatsServer.unusedPort())"
        do {
            _ = try NatsConnection.connect(NatsSettings(servers: [url], name: "t", connectTimeout: .seconds(1)))
            Issue.record("connected to nothing")
        } catch {
            #expect(error.kind == .noServer, "\(error)")
            #expect(error.description == "connect to \(url): No server available for connection", "\(error)")
        }
        #expect(throws: NatsError.self) { try NatsConnection.connect(NatsSettings(servers: ["http://x:1"], name: "t")) }
        #expect(throws: NatsError.self) { try NatsConnection.connect(NatsSettings(servers: [], name: "t")) }
    }

    @Test func aWrongPasswordIsRefusedWithTheServersReason() throws {
        let server = try NatsServer(arguments: ["--user", "inboxd", "--pass", "right horse"])
        do {
            _ = try connect(server, credentials: .userPassword(user: "inboxd", password: "wrong"))
            Issue.record("a wrong password was accepted")
        } catch {
            #expect(error.kind == .authorization, "\(error)")
            #expect(error.description == "connect to \(server.url): Authorization Violation", "\(error)")
        }
        let js = try connect(server, credentials: .userPassword(user: "inboxd", password: "right horse")).jetStream()
        #expect(try deliverAfterSetup(js).sequence == 1)
    }

    func deliverAfterSetup(_ js: JetStream) throws -> JetStream.PublishAck {
        _ = try workQueue(js)
        return try deliver(js, "d1")
    }

    @Test func anNKeyIsAcceptedAndAnotherSeedRefused() throws {
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("inboxd-nkey-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: keys) }
        let user = try TestPKI.makeNKeyUser(in: keys, name: "user")
        let other = try TestPKI.makeNKeyUser(in: keys, name: "other")
        #expect(user.publicKey.hasPrefix("U") && user.publicKey.count == 56 && user.seed.hasPrefix("SU"))
        let seed = keys.appendingPathComponent("user.nk"), otherSeed = keys.appendingPathComponent("other.nk")
        try (user.seed + "\n").write(to: seed, atomically: true, encoding: .utf8)
        try (other.seed + "\n").write(to: otherSeed, atomically: true, encoding: .utf8)
        let server = try NatsServer(configuration: "authorization {\n  users = [ { nkey: \(user.publicKey) } ]\n}\n")
        let js = try connect(server, credentials: .nkey(publicKey: user.publicKey, seedFile: seed.path)).jetStream()
        #expect(try deliverAfterSetup(js).sequence == 1)
        do {
            _ = try connect(server, credentials: .nkey(publicKey: user.publicKey, seedFile: otherSeed.path))
            Issue.record("another key's seed was accepted")
        } catch {
            #expect(error.kind == .authorization, "\(error)")
            #expect(error.description.contains("Authorization Violation"), "\(error)")
        }
        do {
            _ = try connect(server, credentials: .credentialsFile(keys.appendingPathComponent("missing.creds").path))
            Issue.record("a missing credentials file was accepted")
        } catch {
            #expect(error.description.contains("missing.creds"), "\(error)")
        }
    }

    @Test func tlsWithThePrivateCAConnectsAndWithoutItIsRefused() throws {
        let pki = FileManager.default.temporaryDirectory.appendingPathComponent("inboxd-pki-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: pki, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: pki) }
        try TestPKI.makeCA(in: pki)
        try TestPKI.makeServerCertificate("server", in: pki, alternativeNames: "IP:127.0.0.1,DNS:localhost")
        let server = try NatsServer(arguments: ["--tls", "--tlscert", pki.appendingPathComponent("server.pem").path,
                                                "--tlskey", pki.appendingPathComponent("server.key").path])
        let ca = pki.appendingPathComponent("ca.pem").path
        let tlsURL = server.url(scheme: "tls")
        let js = try connect(server, url: tlsURL, tls: NatsTLS(caFile: ca)).jetStream()
        #expect(try deliverAfterSetup(js).sequence == 1)
        #expect(try connect(server, url: "tls://localhost:\(server.port)", tls: NatsTLS(caFile: ca)).connectedURL != nil)

        let refusals: [(String, String, NatsTLS?)] = [
            ("without the CA (the system's authorities only)", tlsURL, nil),
            ("a name the certificate does not carry", tlsURL, NatsTLS(caFile: ca, serverName: "elsewhere.example")),
        ]
        for (what, url, tls) in refusals {
            do {
                _ = try connect(server, url: url, tls: tls)
                Issue.record("connected \(what)")
            } catch {
                #expect(error.kind == .tls, "\(what): \(error)")
                #expect(error.description.contains("SSL handshake error"), "\(what): \(error)")
            }
        }
        // TLS asked of a server that has none.
        let plain = try NatsServer()
        do {
            _ = try connect(plain, url: plain.url(scheme: "tls"), tls: NatsTLS(caFile: ca))
            Issue.record("a TLS connection to a server without TLS succeeded")
        } catch {
            #expect(error.kind == .tls, "\(error)")
        }
    }

    /// A certificate of the same CA for another host: refused when the URL's host is not among its names.
    @Test func aCertificateForAnotherHostIsRefused() throws {
        let pki = FileManager.default.temporaryDirectory.appendingPathComponent("inboxd-pki-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: pki, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: pki) }
        try TestPKI.makeCA(in: pki)
        try TestPKI.makeServerCertificate("elsewhere", in: pki, alternativeNames: "DNS:elsewhere.example")
        let server = try NatsServer(arguments: ["--tls", "--tlscert", pki.appendingPathComponent("elsewhere.pem").path,
                                                "--tlskey", pki.appendingPathComponent("elsewhere.key").path])
        let tls = NatsTLS(caFile: pki.appendingPathComponent("ca.pem").path)
        do {
            _ = try connect(server, url: server.url(scheme: "tls"), tls: tls)
            Issue.record("a certificate for elsewhere.example was accepted for 127.0.0.1")
        } catch {
            #expect(error.kind == .tls, "\(error)")
        }
        var named = tls
        named.serverName = "elsewhere.example"
        #expect(try connect(server, url: server.url(scheme: "tls"), tls: named).connectedURL != nil)
    }
}
