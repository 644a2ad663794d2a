import Testing
@testable import InboxCore

/// The protocol between the agent and its cluster child: every request and report written and read back, and
/// refused with its sentence whatever the other side sends.
@Suite("Cluster protocol")
struct ClusterProtocolTests {
    static let delivery = ClusterDeliveryTests.sample
    static let digest = try! ObjectDigest.parse(ClusterDeliveryTests.emptyDigest).get()
    static let configuration = ClusterConfiguration(
        servers: ["nats://127.0.0.1:4222", "tls://[::1]:4443"], name: "office", credentials: "/etc/inboxd/a.creds",
        tlsCAFile: "/etc/ssl/ca.pem", insecure: false, ackWait: .seconds(30), host: "ingest-1.example.org",
        role: .work, version: "1.4.0")
    static let state = ClusterState(
        connected: true, server: "nats://127.0.0.1:4222", error: nil,
        handlers: [HandlerState(handler: "com.example.viewer", pending: 3, inFlight: 1, redelivered: 0,
                                hasConsumer: true),
                   HandlerState(handler: "com.example.nobody", pending: 7, inFlight: nil, redelivered: 0,
                                hasConsumer: false)],
        hosts: [HostPresence(host: "w1", version: "1.4.0", roles: [.ingest, .work], handlers: ["com.example.viewer"],
                             inFlight: 1, lastSeenUSec: 1_700_000_000_000_000)])

    static let requests: [ClusterRequest] = [
        .configure(configuration),
        .configure(ClusterConfiguration(servers: ["nats://n"], name: "a", ackWait: .milliseconds(1), host: "h",
                                        role: .ingest, version: "0")),
        .publish(ref: 1, delivery: delivery),
        .serve(handlers: []),
        .serve(handlers: [ServedHandler(handler: "com.example.viewer", ackWait: .seconds(30)),
                          ServedHandler(handler: "org.example.b", ackWait: .milliseconds(1500))]),
        .grant(handler: "com.example.viewer", count: 64),
        .answer(ref: 9_007_199_254_740_991, action: .ack),
        .answer(ref: 2, action: .nak(delay: .seconds(1))),
        .answer(ref: 2, action: .nak(delay: .zero)),
        .answer(ref: 3, action: .term(reason: "the handler failed 5 times: exit 1 \"quoted\"\n")),
    ]

    @Test(arguments: requests)
    func requestsReadBack(_ request: ClusterRequest) throws {
        #expect(try ClusterRequest.parse(request.encode()).get() == request)
    }

    static let reports: [ClusterReport] = [
        .ready(version: "1.4.0"),
        .published(ref: 1, sequence: 42, duplicate: false, digest: digest, size: 0),
        .published(ref: 7, sequence: 1, duplicate: true, digest: digest, size: 9_007_199_254_740_991),
        .publishFailed(ref: 1, reason: "not connected to NATS", transient: true),
        .publishFailed(ref: 1, reason: "", transient: false),
        .delivery(ref: 5, handler: "com.example.viewer", sequence: 12, delivered: 2, delivery: delivery),
        .poison(handler: "com.example.viewer", sequence: 3, reason: "the message is not JSON"),
        .state(ClusterState(connected: false, error: "connect to nats://127.0.0.1:4222: No server available")),
        .state(state),
    ]

    @Test(arguments: reports)
    func reportsReadBack(_ report: ClusterReport) throws {
        #expect(try ClusterReport.parse(report.encode()).get() == report)
    }

    @Test func theMessages() {
        #expect(String(decoding: ClusterRequest.grant(handler: "a.b", count: 2).encode(), as: UTF8.self)
                == #"{"type":"grant","handler":"a.b","count":2}"#)
        #expect(String(decoding: ClusterRequest.answer(ref: 4, action: .nak(delay: .milliseconds(1500))).encode(),
                       as: UTF8.self) == #"{"type":"answer","ref":4,"action":"nak","delayMS":1500}"#)
        #expect(String(decoding: ClusterReport.ready(version: "1").encode(), as: UTF8.self)
                == #"{"type":"ready","version":"1"}"#)
    }

    @Test func onlyPublishAndDeliveryCarryADescriptor() {
        #expect(Self.requests.filter(\.carriesDescriptor).count == 1)
        #expect(Self.reports.filter(\.carriesDescriptor).count == 1)
    }

    @Test func aLongReasonIsCutWhenWritten() throws {
        let long = String(repeating: "é", count: 5000)
        guard case .poison(_, _, let reason) = try ClusterReport.parse(
            ClusterReport.poison(handler: "a", sequence: 1, reason: long).encode()).get() else {
            Issue.record("not a poison report")
            return
        }
        #expect(reason.utf8.count <= ClusterProtocol.maximumReasonBytes && reason.hasSuffix("..."))
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let text: String
        let message: String
        let line: Int
        init(_ text: String, _ message: String, line: Int = #line) {
            (self.text, self.message, self.line) = (text, message, line)
        }
        var testDescription: String { "line \(line): \(text.prefix(60))" }
    }

    static let deliveryText = String(decoding: delivery.encode(), as: UTF8.self)

    static let requestRefusals: [Refusal] = [
        Refusal("", "the message is not JSON: empty JSON text at byte 0"),
        Refusal("[1]", "the message is not a JSON object"),
        Refusal("\u{FF}", "the message is not JSON: unexpected byte 0xC3 at byte 0"),
        Refusal(#"{"ref":1}"#, "\"type\" is missing from the message"),
        Refusal(#"{"type":"launch"}"#, "the request type 'launch' is unknown"),
        Refusal(#"{"type":"grant","type":"grant","handler":"a","count":1}"#, "\"type\" appears twice in the message"),
        Refusal(#"{"type":"grant","handler":"a","count":0}"#,
                "\"count\" of the message is not a whole number from 1 to 1000000"),
        Refusal(#"{"type":"grant","handler":"a","count":1.5}"#,
                "\"count\" of the message is not a whole number from 1 to 1000000"),
        Refusal(#"{"type":"grant","handler":"a","count":"1"}"#, "\"count\" of the message is a string, not a number"),
        Refusal(#"{"type":"grant","handler":"a..b","count":1}"#,
                "\"handler\" of the message is not a handler identifier a subject can carry"),
        Refusal(#"{"type":"grant","handler":"a b","count":1}"#,
                "\"handler\" of the message is not printable ASCII without spaces"),
        Refusal(#"{"type":"answer","ref":0,"action":"ack"}"#,
                "\"ref\" of the message is not a whole number from 1 to 9007199254740991"),
        Refusal(#"{"type":"answer","ref":-1,"action":"ack"}"#,
                "\"ref\" of the message is not a whole number from 1 to 9007199254740991"),
        Refusal(#"{"type":"answer","ref":18446744073709551615,"action":"ack"}"#,
                "\"ref\" of the message is not a whole number from 1 to 9007199254740991"),
        Refusal(#"{"type":"answer","ref":1,"action":"retry"}"#,
                "\"action\" of answer is 'retry', not ack, nak or term"),
        Refusal(#"{"type":"answer","ref":1,"action":"nak"}"#, "\"delayMS\" is missing from the message"),
        Refusal(#"{"type":"answer","ref":1,"action":"term","reason":null}"#,
                "\"reason\" of the message is null, not a string"),
        Refusal(#"{"type":"serve","handlers":{}}"#, "\"handlers\" of the message is an object, not an array"),
        Refusal(#"{"type":"serve","handlers":[{"handler":"a","ackWaitMS":1},{"handler":"a","ackWaitMS":2}]}"#,
                "\"handlers\" of serve names a handler twice"),
        Refusal(#"{"type":"serve","handlers":[{"handler":"a"}]}"#,
                "\"ackWaitMS\" is missing from handlers[0] of the message"),
        Refusal(#"{"type":"serve","handlers":[7]}"#, "handlers[0] of the message is not an object"),
        Refusal(#"{"type":"publish","ref":1}"#, "\"delivery\" is missing from the message"),
        Refusal(#"{"type":"publish","ref":1,"delivery":{"deliveryID":"x"}}"#,
                "\"delivery\" of the message is refused: \"deliveryID\" is not 32 lowercase hex digits"),
        Refusal(#"{"type":"configure","configuration":{"servers":[],"name":"a"}}"#,
                "\"servers\" of \"configuration\" of the message is empty"),
        Refusal(#"{"type":"configure","configuration":{"servers":["nats://a"],"name":"a.b"}}"#,
                "\"name\" of \"configuration\" of the message is not a cluster name"),
        Refusal(#"{"type":"configure","configuration":{"servers":["nats://a"],"name":"a","role":"boss"}}"#,
                "\"role\" of \"configuration\" of the message is neither ingest nor work"),
        Refusal(#"{"type":"configure","configuration":{"servers":["nats://a"],"name":"a","role":"work","#
                + #""credentials":"a\u0000b"}}"#, "\"credentials\" of \"configuration\" of the message has a NUL byte"),
        Refusal(String(repeating: " ", count: ClusterProtocol.maximumMessageBytes + 1),
                "the message is 262145 bytes, over the limit of 262144"),
        Refusal(String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
                "the message is not JSON: nesting deeper than 64 at byte 64"),
    ]

    @Test(arguments: requestRefusals)
    func requestsRefused(_ refusal: Refusal) {
        #expect(ClusterRequest.parse(Array(refusal.text.utf8)) == .failure(ClusterProtocolError(refusal.message)))
    }

    static let reportRefusals: [Refusal] = [
        Refusal(#"{"type":"hello"}"#, "the report type 'hello' is unknown"),
        Refusal(#"{"type":"ready"}"#, "\"version\" is missing from the message"),
        Refusal(#"{"type":"published","ref":1,"sequence":1,"duplicate":false,"digest":"MD5=x","size":1}"#,
                "\"digest\" of published does not start with SHA-256="),
        Refusal(#"{"type":"publishFailed","ref":1,"reason":"x","transient":"yes"}"#,
                "\"transient\" of the message is a string, not true or false"),
        Refusal(#"{"type":"delivery","ref":1,"handler":"com.example.other","sequence":1,"delivered":1,"delivery":"#
                + deliveryText + "}", "\"delivery\" of delivery is for com.example.viewer, not com.example.other"),
        Refusal(#"{"type":"delivery","ref":1,"handler":"com.example.viewer","sequence":1,"delivered":0,"delivery":"#
                + deliveryText + "}", "\"delivered\" of the message is not a whole number from 1 to 9007199254740991"),
        Refusal(#"{"type":"state","state":{"connected":true,"handlers":[],"hosts":[{"host":"h"}]}}"#,
                "\"roles\" is missing from hosts[0] of \"state\" of the message"),
        Refusal(#"{"type":"state","state":{"connected":true,"handlers":[],"hosts":[{"host":"h","version":"1","#
                + #""roles":["boss"],"handlers":[],"inFlight":0,"lastSeenUSec":0}]}}"#,
                "\"roles\" of hosts[0] of \"state\" of the message has 'boss', neither ingest nor work"),
        Refusal(#"{"type":"state","state":{"connected":true,"handlers":[{"handler":"a","pending":-3,"#
                + #""inFlight":null,"redelivered":0,"hasConsumer":false}],"hosts":[]}}"#,
                "\"pending\" of handlers[0] of \"state\" of the message is not a whole number from 0 to "
                + "9007199254740991"),
    ]

    @Test(arguments: reportRefusals)
    func reportsRefused(_ refusal: Refusal) {
        #expect(ClusterReport.parse(Array(refusal.text.utf8)) == .failure(ClusterProtocolError(refusal.message)))
    }

    @Test func hostPresenceReadsBackAndItsKeyIsAToken() throws {
        let presence = Self.state.hosts[0]
        #expect(try HostPresence.parse(presence.encode()).get() == presence)
        #expect(HostPresence.key(host: "w1.example.org", role: .work) == "host.w1_example_org.work")
        #expect(HostPresence.key(host: "", role: .ingest) == "host._.ingest")
        #expect(HostPresence.key(host: "höst", role: .ingest) == "host.h__st.ingest")
    }

    @Test func theFailedEventSubject() {
        let names = ClusterNames(name: "Office")!
        #expect(names.eventSubject("failed") == "inboxd.office.event.failed")
        #expect(names.eventSubject("a.b") == nil && names.eventSubject("*") == nil && names.eventSubject("") == nil)
    }

    @Test func aConfigurationFromSettings() {
        let settings = ClusterSettings(
            servers: [.init(scheme: .nats, host: "::1", location: .init(file: "c", line: 1))],
            names: ClusterNames(name: "Office")!, location: .init(file: "c", line: 1))
        let configuration = ClusterConfiguration(settings: settings, ackWait: .seconds(5), host: "h", role: .ingest,
                                                 version: "1")
        #expect(configuration.servers == ["nats://[::1]:4222"] && configuration.name == "office")
        #expect(configuration.names == ClusterNames(name: "office"))
    }
}
