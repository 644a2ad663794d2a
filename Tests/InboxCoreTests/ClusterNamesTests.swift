import Testing
@testable import InboxCore

/// The NATS names of a cluster: what each is, that each is one NATS takes, and that handler and consumer map one to
/// one.
@Suite("Cluster names")
struct ClusterNamesTests {
    @Test func namesOfACluster() throws {
        let names = try #require(ClusterNames(name: "Office-2_b"))
        #expect(names.name == "office-2_b")
        #expect(names.stream == "INBOXD_OFFICE-2_B")
        #expect(names.streamSubjects == "inboxd.office-2_b.deliver.>")
        #expect(names.deliverySubject(for: "com.example.Viewer") == "inboxd.office-2_b.deliver.com.example.Viewer")
        #expect(names.consumer(for: "com.example.Viewer") == "office-2_b_com_example_Viewer")
        #expect(names.objectStore == "inboxd_office-2_b_content")
        #expect(names.keyValue == "inboxd_office-2_b_state")
    }

    @Test func theNameIsCaseInsensitive() {
        #expect(ClusterNames(name: "OFFICE") == ClusterNames(name: "office"))
        #expect(ClusterNames(name: "Office")?.stream == "INBOXD_OFFICE")
    }

    @Test(arguments: [
        ("office", true), ("a", true), ("A-b_9", true), (String(repeating: "x", count: 32), true),
        ("", false), (String(repeating: "x", count: 33), false), ("of.fice", false), ("of fice", false),
        ("office*", false), ("office>", false), ("offi/ce", false), ("bür", false), ("tab\t", false),
    ])
    func clusterName(_ name: String, valid: Bool) {
        #expect(ClusterNames.isValidName(name) == valid)
        #expect((ClusterNames(name: name) != nil) == valid)
    }

    @Test(arguments: [
        ("com.example.viewer", nil),
        ("viewer", nil),
        ("a-b.c-d.9", nil),
        ("com..example", "'com..example' has an empty part between its dots, which a NATS subject cannot carry"),
        (".com", "'.com' has an empty part between its dots, which a NATS subject cannot carry"),
        ("com.", "'com.' has an empty part between its dots, which a NATS subject cannot carry"),
        ("com_example", "'com_example' is not a handler identifier (letters, digits, '.' and '-')"),
        ("com.*", "'com.*' is not a handler identifier (letters, digits, '.' and '-')"),
        ("com.>", "'com.>' is not a handler identifier (letters, digits, '.' and '-')"),
        ("", "'' is not a handler identifier (letters, digits, '.' and '-')"),
        (String(repeating: "a", count: 248), nil),
        (String(repeating: "a", count: 249),
         "'\(String(repeating: "a", count: 57))...' makes a consumer name of 256 characters, over NATS's limit of 255"),
    ] as [(String, String?)])
    func handlerProblems(_ handler: String, problem: String?) throws {
        let names = try #require(ClusterNames(name: "office"))
        #expect(names.problem(forHandler: handler) == problem)
        #expect((names.deliverySubject(for: handler) == nil) == (problem != nil))
        #expect((names.consumer(for: handler) == nil) == (problem != nil))
    }

    /// Every name made is one NATS takes, and the consumer and subject lead back to the handler alone.
    @Test(arguments: ["a", "office", "A-b_9", String(repeating: "x", count: 32)], [
        "a", "com.example.viewer", "Com.Example.Viewer", "a-b.c-d.9", "x.y", "x-y",
        String(repeating: "h", count: 200), "h." + String(repeating: "g", count: 200),
    ])
    func everyNameIsANATSName(_ cluster: String, _ handler: String) throws {
        let names = try #require(ClusterNames(name: cluster))
        #expect(NATSNameSyntax.isAssetName(names.stream))
        #expect(NATSNameSyntax.isBucketName(names.objectStore))
        #expect(NATSNameSyntax.isBucketName(names.keyValue))
        #expect(NATSNameSyntax.isSubject(String(names.streamSubjects.dropLast(2))))
        guard names.problem(forHandler: handler) == nil else { return }
        let subject = try #require(names.deliverySubject(for: handler))
        let consumer = try #require(names.consumer(for: handler))
        #expect(NATSNameSyntax.isSubject(subject))
        #expect(subject.hasPrefix(String(names.streamSubjects.dropLast())))
        #expect(subject.utf8.count < 512)
        #expect(NATSNameSyntax.isAssetName(consumer))
        #expect(names.handler(forSubject: subject) == handler)
        #expect(names.handler(forConsumer: consumer) == handler)
    }

    @Test func consumersAndHandlersMapOneToOne() throws {
        let names = try #require(ClusterNames(name: "my_office"))
        let handlers = ["a.b", "a-b", "ab", "a.b.c", "a.bc", "ab.c", "A.b", "a.B"]
        let consumers = handlers.compactMap { names.consumer(for: $0) }
        #expect(Set(consumers).count == handlers.count)
        #expect(consumers.map { names.handler(forConsumer: $0) } == handlers)
    }

    @Test(arguments: [
        "office_com_example", "my_officecom_example", "my_office_", "my_office_a__b", "my_office_.a",
        "other_com_example", "my_office_a.b",
    ])
    func notAConsumerOfTheCluster(_ consumer: String) throws {
        let names = try #require(ClusterNames(name: "my_office"))
        #expect(names.handler(forConsumer: consumer) == nil)
    }

    @Test(arguments: [
        "inboxd.other.deliver.com.example", "inboxd.office.deliver.", "inboxd.office.deliver.a..b",
        "inboxd.office.deliver.a.*", "inboxd.office.deliver.a_b", "inboxd.office.deliverx", "office.deliver.a",
    ])
    func notADeliverySubjectOfTheCluster(_ subject: String) throws {
        let names = try #require(ClusterNames(name: "office"))
        #expect(names.handler(forSubject: subject) == nil)
    }

    @Test(arguments: [
        ("a.b.c", true), ("a", true), ("a-b_c.D9", true), ("", false), ("a..b", false), (".a", false), ("a.", false),
        ("a.*", false), ("a.>", false), ("a b", false), ("a\tb", false), ("a.\u{7F}", false),
    ])
    func subjects(_ subject: String, valid: Bool) {
        #expect(NATSNameSyntax.isSubject(subject) == valid)
    }

    @Test(arguments: [
        ("INBOXD_OFFICE", true), ("a-b_c", true), (String(repeating: "s", count: 255), true),
        (String(repeating: "s", count: 256), false), ("", false), ("a.b", false), ("a*", false), ("a>", false),
        ("a/b", false), ("a\\b", false), ("a b", false), ("a\u{0}", false),
    ])
    func assetNames(_ name: String, valid: Bool) {
        #expect(NATSNameSyntax.isAssetName(name) == valid)
    }

    @Test(arguments: [
        ("inboxd_office_content", true), ("A-b_9", true), (String(repeating: "b", count: 251), true),
        (String(repeating: "b", count: 252), false), ("", false), ("a.b", false), ("a b", false), ("a/b", false),
        ("a=b", false),
    ])
    func bucketNames(_ name: String, valid: Bool) {
        #expect(NATSNameSyntax.isBucketName(name) == valid)
    }
}
