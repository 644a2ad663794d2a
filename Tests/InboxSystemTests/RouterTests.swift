import Glibc
import InboxCore
@testable import InboxSystem
import Testing

/// `Router` and `Recovery` in process: real files in temp directories, the real type inspector (libmagic in process),
/// the real routing decision and moves by inode; a recorder in place of the dispatcher.
@Suite("Routing and recovery, in process")
struct RouterTests {
    static let registrations = [
        "test.text": "[DocumentType]\nContentTypes=public.plain-text\nRank=Default\n",
        "test.other": "[DocumentType]\nContentTypes=public.plain-text\nRank=Alternate\n",
        "test.logs": "[DocumentType]\nName=Logs\nContentTypes=public.plain-text\nNamePatterns=*.log.txt\nRank=Alternate\n",
        "test.bundle": "[DocumentType]\nContentTypes=com.example.bundle\nRank=Owner\n\n[ExportedType]\n"
            + "Identifier=com.example.bundle\nConformsTo=public.plain-text\nExtensions=bundle.txt\n",
    ]

    struct Drop: Sendable {
        let name: String
        var attributes: [String: String] = [:]
    }

    struct RequeueCase: Sendable, CustomTestStringConvertible {
        let testDescription: String
        var boundTo: String?
        let drops: [Drop]
        /// What the first routing gives (handler, chosen by), so that the case is what its name says.
        let first: [(String, Delivery.ChosenBy)]
    }

    static let requeueCases: [RequeueCase] = [
        RequeueCase(testDescription: "chosen by rank", drops: [Drop(name: "notes.txt")], first: [("test.text", .rank)]),
        RequeueCase(testDescription: "chosen by a name pattern", drops: [Drop(name: "server.log.txt")],
                    first: [("test.logs", .namePattern)]),
        RequeueCase(testDescription: "chosen by the Inbox's binding", boundTo: "test.other",
                    drops: [Drop(name: "notes.txt")], first: [("test.other", .inbox)]),
        RequeueCase(testDescription: "chosen by its sender",
                    drops: [Drop(name: "notes.txt", attributes: [SenderAttribute.handler: "test.other"])],
                    first: [("test.other", .sender)]),
        // The second takes another name in the container (x.bundle-2.txt), which would type it otherwise.
        RequeueCase(testDescription: "renamed in its container",
                    drops: [Drop(name: "x.bundle.txt"), Drop(name: "x.bundle.txt")],
                    first: [("test.bundle", .rank), ("test.bundle", .rank)]),
    ]

    /// The type, handler and choice a requeued file gets at start-up are those its first routing gave.
    @Test(arguments: requeueCases)
    func aRequeuedFileGetsWhatItsFirstTypingGave(_ testCase: RequeueCase) throws {
        let world = try MiddleWorld(registrations: Self.registrations, boundTo: testCase.boundTo)
        defer { world.remove() }
        let first = try world.middle(sniffer: try ContentSniffer())
        for drop in testCase.drops {
            try world.drop(drop.name, "some words of text\n", attributes: drop.attributes)
            try first.take(drop.name)
        }
        #expect(first.handoff.deliveries.map { [$0.handler, $0.chosenBy.rawValue] }
                == testCase.first.map { [$0.0, $0.1.rawValue] })

        // The agent started again over the same directories.
        let again = try world.middle(sniffer: try ContentSniffer())
        again.recovery.recoverContainers()
        func summary(_ deliveries: [Delivery]) -> [[String]] {
            deliveries.map { [$0.id, $0.handler, $0.chosenBy.rawValue, $0.contentType, $0.typeSource.rawValue, $0.name] }
                .sorted { $0[0] < $1[0] }
        }
        #expect(summary(again.handoff.deliveries) == summary(first.handoff.deliveries))
    }

    /// A file that crashes the content sniffer is refused to failed/, the one fallback of typing: when first routed
    /// and when found in its container at start-up alike, never typed by its claim alone.
    @Test(arguments: [false, true])
    func aFileThatCrashesTheSnifferIsRefusedWhicheverTypingMeetsIt(_ requeued: Bool) throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let crashing = AnsweringSniffer(.failure(.crashed))
        try world.drop("notes.txt", "some words of text\n")
        if requeued {
            let first = try world.middle(sniffer: try ContentSniffer())
            try first.take("notes.txt")
            #expect(first.handoff.deliveries.count == 1)
            let again = try world.middle(sniffer: crashing)
            again.recovery.recoverContainers()
            #expect(again.handoff.deliveries.isEmpty)
        } else {
            let middle = try world.middle(sniffer: crashing)
            try middle.take("notes.txt")
            #expect(middle.handoff.deliveries.isEmpty)
        }
        #expect(world.names(in: "state/failed") == ["notes.txt"])
        #expect(world.names(in: "state/containers/test.text/Inbox").isEmpty)
    }

    struct RecoveryCase: Sendable, CustomTestStringConvertible {
        let testDescription: String
        /// Lays out what an earlier run left.
        let leave: @Sendable (MiddleWorld) throws -> Void
        let handler: String
        let name: String
        /// Directories (under the temp root) that must be empty afterwards.
        var emptied: [String] = []
        let check: @Sendable (Delivery) -> Void
    }

    static let id = "0123456789abcdef0123456789abcdef"
    static let recorded = [AgentAttribute.delivery: "\(id) 0 notes.txt"]

    static func container(_ world: MiddleWorld, _ handler: String) throws -> String {
        try world.state.container(for: handler, identity: nil).inbox.path
    }

    static let recoveryCases: [RecoveryCase] = [
        RecoveryCase(testDescription: "a file in intake/ goes on under the name it was dropped as", leave: { world in
            try MiddleWorld.write(world.statePath + "/intake/2049-12345", Array("text\n".utf8), attributes: recorded)
        }, handler: "test.text", name: "notes.txt", emptied: ["state/intake"], check: { delivery in
            #expect(delivery.id == id)
            #expect(delivery.contentType == "public.plain-text")
        }),
        RecoveryCase(testDescription: "a file in intake/ takes its sidecar on; one without a file is removed",
                     leave: { world in
            let staging = world.statePath + "/intake"
            try MiddleWorld.write(staging + "/2049-12345", Array("text\n".utf8), attributes: recorded)
            try MiddleWorld.write(staging + "/.2049-12345.inbox-meta", Array(#"{"source-app": "com.example.sender"}"#.utf8))
            try MiddleWorld.write(staging + "/.2049-99.inbox-meta", Array(#"{"source-app": "com.example.sender"}"#.utf8))
        }, handler: "test.text", name: "notes.txt", emptied: ["state/intake"], check: { delivery in
            #expect(delivery.hasSidecar)
            #expect(delivery.sender.sourceApp == "com.example.sender")
        }),
        RecoveryCase(testDescription: "a file in a container Inbox is queued again with its attempts", leave: { world in
            try MiddleWorld.write(try container(world, "test.text") + "/notes.txt", Array("text\n".utf8),
                                  attributes: recorded.merging([AgentAttribute.attempts: "1", AgentAttribute.started: "2"],
                                                               uniquingKeysWith: { a, _ in a }))
        }, handler: "test.text", name: "notes.txt", check: { delivery in
            #expect(delivery.id == id)
            #expect(delivery.redelivered)
            #expect(delivery.attempt == RecordedAttempts(failed: "1", started: "2").count)
        }),
        RecoveryCase(testDescription: "a sidecar goes with its file; one without a file is removed", leave: { world in
            let inbox = try container(world, "test.text")
            try MiddleWorld.write(inbox + "/notes.txt", Array("text\n".utf8), attributes: recorded)
            try MiddleWorld.write(inbox + "/.notes.txt.inbox-meta", Array(#"{"source-app": "com.example.sender"}"#.utf8))
            try MiddleWorld.write(inbox + "/.gone.txt.inbox-meta", Array(#"{"source-app": "com.example.sender"}"#.utf8))
        }, handler: "test.text", name: "notes.txt", check: { delivery in
            #expect(delivery.hasSidecar)
            #expect(delivery.sender.sourceApp == "com.example.sender")
        }),
        RecoveryCase(testDescription: "a file in unhandled/ is delivered once a handler claims it", leave: { world in
            try MiddleWorld.write(world.statePath + "/unhandled/notes.txt", Array("text\n".utf8), attributes: recorded)
        }, handler: "test.text", name: "notes.txt", emptied: ["state/unhandled"], check: { delivery in
            #expect(delivery.id == id)
        }),
        RecoveryCase(testDescription: "a file whose handler is no longer registered is routed anew", leave: { world in
            try MiddleWorld.write(try container(world, "test.gone") + "/notes.txt", Array("text\n".utf8),
                                  attributes: recorded)
        }, handler: "test.text", name: "notes.txt", emptied: ["state/containers/test.gone/Inbox"], check: { delivery in
            #expect(delivery.id == id)
        }),
    ]

    /// What a crash left in the state directory is taken again at start-up, as the agent does it.
    @Test(arguments: recoveryCases)
    func recoversWhatAnEarlierRunLeft(_ testCase: RecoveryCase) throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        try testCase.leave(world)
        let middle = try world.middle(sniffer: try ContentSniffer())
        middle.recovery.recoverContainers()
        middle.recovery.redispatchUnhandled()
        try #require(middle.handoff.deliveries.count == 1)
        let delivery = middle.handoff.deliveries[0]
        #expect(delivery.handler == testCase.handler)
        #expect(delivery.name == testCase.name)
        #expect(world.names(in: "state/containers/\(testCase.handler)/Inbox").contains(testCase.name))
        for directory in testCase.emptied { #expect(world.names(in: directory).isEmpty, "\(directory)") }
        // No sidecar is left without its file, anywhere.
        let inbox = world.names(in: "state/containers/\(testCase.handler)/Inbox")
        for sidecar in inbox where sidecar.hasSuffix(".inbox-meta") {
            #expect(inbox.contains(String(sidecar.dropFirst().dropLast(".inbox-meta".count))), "\(sidecar)")
        }
        testCase.check(delivery)
    }

    /// Files that move into a container while recovery walks the containers (from intake/, from the containers of
    /// handlers no longer registered) are queued once each, whatever order the directories are listed in.
    @Test func recoveryQueuesEachFileOnce() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        var ids: [String] = []
        for index in 0..<6 {
            let id = String(repeating: "\(index)", count: 32)
            ids.append(id)
            let attributes = [AgentAttribute.delivery: "\(id) 0 notes-\(index).txt"]
            let place = index == 0 ? world.statePath + "/intake/2049-\(index)"
                : try Self.container(world, "test.gone-\(index)") + "/notes-\(index).txt"
            try MiddleWorld.write(place, Array("text\n".utf8), attributes: attributes)
        }
        try MiddleWorld.write(try Self.container(world, "test.text") + "/kept.txt", Array("text\n".utf8),
                              attributes: [AgentAttribute.delivery: "\(String(repeating: "f", count: 32)) 0 kept.txt"])
        ids.append(String(repeating: "f", count: 32))
        let middle = try world.middle(sniffer: try ContentSniffer())
        middle.recovery.recoverContainers()
        #expect(middle.handoff.deliveries.map(\.id).sorted() == ids.sorted())
        #expect(Set(middle.handoff.deliveries.map(\.handler)) == ["test.text"])
    }

    /// A sender that keeps its file open for writing is waited for on the event loop's timer, then the file is
    /// delivered once, and its retries end.
    @Test func aFileStillOpenForWritingIsTriedAgainOnceItIsClosed() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle(sniffer: try ContentSniffer())
        try world.drop("notes.txt", "some words of text\n")
        let writer = open(world.inbox + "/notes.txt", O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        try middle.take("notes.txt", settling: false)
        #expect(middle.handoff.deliveries.isEmpty)
        #expect(middle.router.waitingCount == 1)
        #expect(world.names(in: "Inbox") == ["notes.txt"], "untouched while its sender writes")
        close(writer)
        middle.handoff.enqueued = { _ in middle.stop() }
        #expect(try middle.run())
        #expect(middle.handoff.deliveries.map(\.name) == ["notes.txt"])
        #expect(middle.handoff.launches >= 1, "a retry's routing launches what it queued")
        #expect(middle.router.waitingCount == 0)
    }

    /// A name swapped for something else after the check delivers nothing: what it led to is kept in failed/.
    @Test func aNameSwappedAfterTheCheckDeliversNothing() throws {
        let world = try MiddleWorld(registrations: Self.registrations)
        defer { world.remove() }
        let middle = try world.middle(sniffer: try ContentSniffer())
        try world.drop("notes.txt", "some words of text\n")
        let directory = try Directory(path: world.inbox)
        guard case .opened(let file) = directory.openRegular(Array("notes.txt".utf8)) else {
            Issue.record("cannot open notes.txt")
            return
        }
        defer { file.descriptor.close() }
        let arrival = middle.reader.arrival(of: file, named: Array("notes.txt".utf8), in: directory, origin: .dropped)
        #expect(symlink("/etc/shadow", world.inbox + "/.swap") == 0)
        #expect(rename(world.inbox + "/.swap", world.inbox + "/notes.txt") == 0)
        middle.router.route(arrival)
        try middle.settle()
        #expect(middle.handoff.deliveries.isEmpty)
        #expect(world.names(in: "state/containers/test.text/Inbox").isEmpty)
        #expect(world.names(in: "state/failed").count == 1)
    }
}
