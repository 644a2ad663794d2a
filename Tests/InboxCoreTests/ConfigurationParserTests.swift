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
        var expected = AgentConfiguration(
            inboxes: ["/var/spool/inboxd/Inbox", "/srv/drop"], handlerDirectories: ["/etc/inboxd/handlers.d"],
            stateDirectory: "/var/lib/inboxd", maxConcurrent: 8, maxAttempts: 5, retryDelay: .seconds(60),
            defaultTimeout: nil, defaultTimeoutDisabled: true)
        // Each directory with its line, for a warning about it (a path the agent's sandbox makes read-only).
        expected.pathLocations = [
            "/var/spool/inboxd/Inbox": SourceLocation(file: "/etc/inboxd/inboxd.conf", line: 3),
            "/srv/drop": SourceLocation(file: "/etc/inboxd/inboxd.conf", line: 4),
            "/etc/inboxd/handlers.d": SourceLocation(file: "/etc/inboxd/inboxd.conf", line: 5),
            "/var/lib/inboxd": SourceLocation(file: "/etc/inboxd/inboxd.conf", line: 6),
        ]
        #expect(configuration == expected)
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

/// MaxPackageDepth=, MaxPackageEntries=, MaxPackageSize= of inboxd.conf, and the limits the settings make of them.
@Suite("Package limits")
struct PackageLimitTests {
    @Test(arguments: [
        (lines("[Agent]", "MaxPackageDepth=8", "MaxPackageEntries=500", "MaxPackageSize=64M"),
         PackageLimits(maxDepth: 8, maxEntries: 500, maxBytes: 64 << 20), false),
        (lines("[Agent]", "MaxPackageDepth=1", "MaxPackageEntries=1", "MaxPackageSize=1"),
         PackageLimits(maxDepth: 1, maxEntries: 1, maxBytes: 1), false),
        (lines("[Agent]", "MaxPackageDepth=1024", "MaxPackageEntries=10000000", "MaxPackageSize=1.5G"),
         PackageLimits(maxDepth: 1024, maxEntries: 10_000_000, maxBytes: 1_610_612_736), false),
        // Unset: the defaults, and the size left to MaxInboxBytes=.
        (lines("[Agent]", "MaxInboxBytes=1M"), PackageLimits(maxDepth: 32, maxEntries: 10_000, maxBytes: nil), false),
        // An empty value resets to the default.
        (lines("[Agent]", "MaxPackageDepth=3", "MaxPackageDepth=", "MaxPackageSize=infinity", "MaxPackageSize="),
         PackageLimits(), false),
        (lines("[Agent]", "MaxPackageSize=5M", "MaxPackageSize=infinity"), PackageLimits(), true),
    ] as [([UInt8], PackageLimits, Bool)])
    func keysParse(input: [UInt8], limits: PackageLimits, unlimited: Bool) {
        let (configuration, diagnostics) = ConfigurationParser.parseAgent(input, path: "c")
        #expect(diagnostics == [])
        #expect(configuration.packageLimits == limits)
        #expect(configuration.packageSizeUnlimited == unlimited)
    }

    @Test(arguments: [
        (lines("[Agent]", "MaxPackageDepth=0"), ["c:2: MaxPackageDepth= must be a whole number from 1 to 1024, got '0'"]),
        (lines("[Agent]", "", "MaxPackageDepth=1025"),
         ["c:3: MaxPackageDepth= must be a whole number from 1 to 1024, got '1025'"]),
        (lines("[Agent]", "MaxPackageDepth=-1"), ["c:2: MaxPackageDepth= must be a whole number from 1 to 1024, got '-1'"]),
        (lines("[Agent]", "MaxPackageDepth=infinity"),
         ["c:2: MaxPackageDepth= must be a whole number from 1 to 1024, got 'infinity'"]),
        (lines("[Agent]", "MaxPackageEntries=0"),
         ["c:2: MaxPackageEntries= must be a whole number from 1 to 10000000, got '0'"]),
        (lines("[Agent]", "MaxPackageEntries=10000001"),
         ["c:2: MaxPackageEntries= must be a whole number from 1 to 10000000, got '10000001'"]),
        (lines("[Agent]", "MaxPackageEntries=10k"),
         ["c:2: MaxPackageEntries= must be a whole number from 1 to 10000000, got '10k'"]),
        (lines("[Agent]", "MaxPackageEntries=99999999999999999999999"),
         ["c:2: MaxPackageEntries= must be a whole number from 1 to 10000000, got '99999999999999999999999'"]),
        (lines("[Agent]", "MaxPackageSize=0"), ["c:2: MaxPackageSize= must be more than 0 bytes (or infinity)"]),
        (lines("[Agent]", "MaxPackageSize=10Q"),
         ["c:2: invalid MaxPackageSize=: invalid size '10Q': expected bytes, or a number with K, M, G, T, P or E (base "
          + "1024), or infinity"]),
        (lines("[Agent]", "MaxPackageSize=16E"), ["c:2: invalid MaxPackageSize=: size '16E' is too large"]),
        (lines("[Agent]", "MaxPackageDeph=3"), ["c:2: warning: unknown key 'MaxPackageDeph' in section [Agent], ignored"]),
    ] as [([UInt8], [String])])
    func badValues(input: [UInt8], expected: [String]) {
        #expect(ConfigurationParser.parseAgent(input, path: "c").diagnostics.map(\.description) == expected)
    }

    /// MaxPackageSize= unset is the single-file bound (MaxInboxBytes=), else none; `infinity` is none either way.
    @Test(arguments: [
        (nil, false, nil, nil),
        (nil, false, 4096, 4096),
        (100, false, 4096, 100),
        (nil, true, 4096, nil),
        (100, false, nil, 100),
    ] as [(Int64?, Bool, Int64?, Int64?)])
    func resolvedSize(configured: Int64?, unlimited: Bool, inboxBytes: Int64?, expected: Int64?) {
        let limits = PackageLimits.resolved(PackageLimits(maxDepth: 5, maxEntries: 6, maxBytes: configured),
                                            unlimited: unlimited, inboxBytes: inboxBytes)
        #expect(limits == PackageLimits(maxDepth: 5, maxEntries: 6, maxBytes: expected))
    }
}
