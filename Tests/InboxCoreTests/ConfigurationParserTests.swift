import Testing
@testable import InboxCore

@Suite("Configuration files")
struct ConfigurationParserTests {
    @Test func agentConfiguration() {
        let (configuration, diagnostics) = ConfigurationParser.parseAgent(lines(
            "# inboxd.conf",
            "[Agent]",
            "Inbox=/var/spool/inboxd/Inbox",
            "Inbox=/srv/drop",
            "HandlersDirectory=/etc/inboxd/handlers.d",
            "StateDirectory=/var/lib/inboxd",
            "MaxConcurrent=8",
            "MaxAttempts=5",
            "RetryDelaySec=1min",
            "TimeoutSec=infinity",
            "X-Site=ours"), path: "/etc/inboxd/inboxd.conf")
        #expect(diagnostics == [])
        #expect(configuration == AgentConfiguration(
            inboxes: ["/var/spool/inboxd/Inbox", "/srv/drop"], handlerDirectories: ["/etc/inboxd/handlers.d"],
            stateDirectory: "/var/lib/inboxd", maxConcurrent: 8, maxAttempts: 5, retryDelay: .seconds(60),
            defaultTimeout: nil, defaultTimeoutDisabled: true))
    }

    @Test func emptyInboxClearsTheList() {
        let (configuration, _) = ConfigurationParser.parseAgent(
            lines("[Agent]", "Inbox=/a", "Inbox=", "Inbox=/b", "TimeoutSec=45"), path: "c")
        #expect(configuration.inboxes == ["/b"])
        #expect(configuration.defaultTimeout == .seconds(45))
        #expect(!configuration.defaultTimeoutDisabled)
    }

    /// Bytes in, diagnostics out; named so that test output does not print a megabyte of input.
    struct Case: Sendable, CustomTestStringConvertible {
        let input: [UInt8]
        let expected: [String]
        init(_ input: [UInt8], _ expected: [String]) {
            self.input = input
            self.expected = expected
        }
        var testDescription: String { expected.first ?? "no diagnostics" }
    }

    @Test(arguments: [
        (lines("[Agent]", "Inbox=relative/inbox"), ["c:2: Inbox= must be an absolute path, got 'relative/inbox'"]),
        (lines("[Agent]", "StateDirectory=state"), ["c:2: StateDirectory= must be an absolute path, got 'state'"]),
        (lines("[Agent]", "MaxAttempts=0"), ["c:2: MaxAttempts= must be a positive integer, got '0'"]),
        (lines("[Agent]", "RetryDelaySec=infinity"), ["c:2: RetryDelaySec= must be finite"]),
        (lines("[Agent]", "TimeoutSec=forever"), ["c:2: invalid TimeoutSec=: invalid time span 'forever'"]),
        (lines("[Agent]", "Inboxes=/x"), ["c:2: warning: unknown key 'Inboxes' in section [Agent], ignored"]),
        (lines("[Daemon]", "Inbox=/x"), ["c:1: warning: unknown section [Daemon], ignored"]),
        (lines("Inbox=/x"), ["c:1: key 'Inbox' outside any section"]),
        (lines("[Agent]", "junk"), ["c:2: expected a [Section], a comment or Key=Value, got 'junk'"]),
        (bytes("[Agent]\n") + [0xC3, 0x28], ["c:2: line is not valid UTF-8"]),
        ([UInt8](repeating: 0x23, count: (1 << 20) + 1), ["c:1: file is 1048577 bytes, larger than the limit of 1048576"]),
        ([], []),
    ].map(Case.init))
    func agentDiagnostics(_ testCase: Case) {
        #expect(ConfigurationParser.parseAgent(testCase.input, path: "c").diagnostics.map(\.description)
            == testCase.expected)
    }

    @Test func defaults() {
        let (preferences, diagnostics) = ConfigurationParser.parseDefaults(lines(
            "[Defaults]",
            "public.png=com.example.viewer",
            "public.image = com.example.gallery",
            "public.text=com.example.old",
            "public.text=",
            "X-Comment=ignored"), path: "/etc/inboxd/defaults.conf")
        #expect(diagnostics == [])
        #expect(preferences == HandlerPreferences(byType: ["public.png": "com.example.viewer",
                                                           "public.image": "com.example.gallery"]))
    }

    @Test(arguments: [
        (lines("[Defaults]", "image/png=com.example.viewer"), ["d:2: invalid type identifier 'image/png'"]),
        (lines("[Defaults]", "public.png=my viewer"), ["d:2: invalid handler identifier 'my viewer'"]),
        (lines("[Default Applications]", "public.png=a"), ["d:1: warning: unknown section [Default Applications], ignored"]),
        (lines("public.png=a"), ["d:1: key 'public.png' outside any section"]),
    ].map(Case.init))
    func defaultsDiagnostics(_ testCase: Case) {
        #expect(ConfigurationParser.parseDefaults(testCase.input, path: "d").diagnostics.map(\.description)
            == testCase.expected)
    }
}
