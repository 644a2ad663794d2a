import Testing
@testable import InboxCore

@Suite("The status file's schema")
struct AgentStatusTests {
    static var sample: AgentStatus {
        var status = AgentStatus()
        status.pid = 4242
        status.phase = "running"
        status.inboxes = ["/var/spool/inboxd/Inbox", "/srv/in \"box\""]
        status.missingInboxes = ["/srv/in \"box\""]
        status.stateDirectory = "/var/lib/inboxd"
        status.handlerDirectories = ["/etc/inboxd/handlers.d", "/usr/lib/inboxd/handlers.d"]
        status.queued = 3
        status.inFlight = [AgentStatus.InFlight(handler: "com.example.viewer", file: "photo.png",
                                                deliveryID: String(repeating: "ab", count: 16), attempt: 2, pid: 77,
                                                ageUSec: 1_500_000)]
        status.retrying = [AgentStatus.Retrying(handler: "com.example.editor", file: "later \"1\".txt",
                                                deliveryID: String(repeating: "cd", count: 16), attempt: 1,
                                                reason: "asked to retry (exit status 75)",
                                                nextAttemptUSec: 1_764_000_061_000_000)]
        status.failed = 1
        status.unhandled = 2
        status.landlockABI = 7
        status.registrations = 12
        status.registrationsLoadedAtUSec = 1_764_000_000_000_000
        status.sniffer = AgentStatus.Sniffer(pid: 78, libmagic: "5.44")
        status.writtenAtUSec = 1_764_000_001_000_000
        return status
    }

    @Test func writtenAndReadBack() throws {
        let text = Self.sample.json()
        #expect(text.hasSuffix("}\n"))
        #expect(JSON.validate(Array(text.utf8)) == nil)
        #expect(text.contains(#""landlock":true,"landlockABI":7"#))
        #expect(text.contains(#""missingInboxes":["/srv/in \"box\""]"#))
        #expect(try AgentStatus.parse(Array(text.utf8)).get() == Self.sample)
    }

    @Test func withoutSnifferOrHandlers() throws {
        var status = Self.sample
        status.sniffer = nil
        status.contentSniffing = false
        status.inFlight = []
        status.landlockABI = 0
        let text = status.json()
        #expect(text.contains(#""inFlight":[]"#) && text.contains(#""sniffer":null"#) && text.contains(#""landlock":false"#))
        #expect(try AgentStatus.parse(Array(text.utf8)).get() == status)
    }

    @Test func missingMembersTakeTheirDefaults() throws {
        let status = try AgentStatus.parse(Array(#"{"pid":9,"future":{"x":[1]}}"#.utf8)).get()
        #expect(status.pid == 9 && status.phase == "?" && status.inFlight.isEmpty && status.sniffer == nil)
        #expect(status.missingInboxes.isEmpty)
        #expect(status.contentSniffing)
    }

    @Test(arguments: ["", "{", "[1]x", "\u{FF}"])
    func notJSON(_ text: String) {
        #expect((try? AgentStatus.parse(Array(text.utf8)).get()) == nil)
    }
}
