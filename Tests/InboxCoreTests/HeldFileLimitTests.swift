import Testing
@testable import InboxCore

@Suite("Retention and Inbox bounds")
struct HeldFileLimitTests {
    // MARK: inboxd.conf

    @Test func settingsParse() {
        let (configuration, diagnostics) = ConfigurationParser.parseAgent(lines(
            "[Agent]",
            "KeepFailedSec=2 weeks",
            "KeepUnhandledSec=1h 30min",
            "MaxInboxFiles=1000",
            "MaxInboxBytes=1.5G",
            "MaxInboxFilesPerSender=100",
            "MaxInboxBytesPerSender=512K"), path: "c")
        #expect(diagnostics == [])
        #expect(configuration.retention == RetentionSettings(keepFailed: .seconds(14 * 86400), keepUnhandled: .seconds(5400)))
        #expect(configuration.inboxBounds == InboxBounds(maxFiles: 1000, maxBytes: 1_610_612_736, maxFilesPerSender: 100,
                                                         maxBytesPerSender: 524_288))
    }

    @Test(arguments: [
        // infinity and an empty value both mean the default: forever, no bound.
        (lines("[Agent]", "KeepFailedSec=2s", "KeepFailedSec=infinity", "MaxInboxFiles=infinity", "MaxInboxBytes=infinity"),
         RetentionSettings(), InboxBounds()),
        (lines("[Agent]", "KeepUnhandledSec=5", "KeepUnhandledSec=", "MaxInboxBytesPerSender=1M", "MaxInboxBytesPerSender="),
         RetentionSettings(), InboxBounds()),
        (lines("[Agent]", "KeepUnhandledSec=500ms", "MaxInboxBytes=4096"),
         RetentionSettings(keepUnhandled: .milliseconds(500)), InboxBounds(maxBytes: 4096)),
    ])
    func defaultsAndResets(input: [UInt8], retention: RetentionSettings, bounds: InboxBounds) {
        let (configuration, diagnostics) = ConfigurationParser.parseAgent(input, path: "c")
        #expect(diagnostics == [])
        #expect(configuration.retention == retention)
        #expect(configuration.inboxBounds == bounds)
    }

    @Test(arguments: [
        (lines("[Agent]", "KeepFailedSec=forever"), ["c:2: invalid KeepFailedSec=: invalid time span 'forever'"]),
        (lines("[Agent]", "KeepUnhandledSec=0"), ["c:2: KeepUnhandledSec= must be longer than 0 (infinity keeps entries forever)"]),
        (lines("[Agent]", "KeepFailedSec=3 fortnights"), ["c:2: invalid KeepFailedSec=: unknown time unit 'fortnights' in '3 fortnights'"]),
        (lines("[Agent]", "MaxInboxFiles=0"), ["c:2: MaxInboxFiles= must be a positive number of files or infinity, got '0'"]),
        (lines("[Agent]", "MaxInboxFiles=-5"), ["c:2: MaxInboxFiles= must be a positive number of files or infinity, got '-5'"]),
        (lines("[Agent]", "", "MaxInboxFilesPerSender=10k"),
         ["c:3: MaxInboxFilesPerSender= must be a positive number of files or infinity, got '10k'"]),
        (lines("[Agent]", "MaxInboxFiles=99999999999999999999999"),
         ["c:2: MaxInboxFiles= must be a positive number of files or infinity, got '99999999999999999999999'"]),
        (lines("[Agent]", "MaxInboxBytes=10Q"),
         ["c:2: invalid MaxInboxBytes=: invalid size '10Q': expected bytes, or a number with K, M, G, T, P or E (base 1024), or infinity"]),
        (lines("[Agent]", "MaxInboxBytesPerSender=0K"), ["c:2: MaxInboxBytesPerSender= must be more than 0 bytes (or infinity)"]),
        (lines("[Agent]", "MaxInboxBytes=16E"), ["c:2: invalid MaxInboxBytes=: size '16E' is too large"]),
        (lines("[Agent]", "MaxInboxByte=1M"), ["c:2: warning: unknown key 'MaxInboxByte' in section [Agent], ignored"]),
    ])
    func badValues(input: [UInt8], expected: [String]) {
        #expect(ConfigurationParser.parseAgent(input, path: "c").diagnostics.map(\.description) == expected)
    }

    // MARK: Sizes

    @Test(arguments: [
        ("0", Int64?(0)), ("4096", 4096), ("1K", 1024), ("10M", 10_485_760), ("1.5G", 1_610_612_736), ("2T", 2 << 40),
        ("0.5K", 512), ("1.0001K", 1024), (" 7 ", 7), ("7E", 7 << 60), ("infinity", nil),
    ])
    func sizes(text: String, bytes: Int64?) throws {
        #expect(try ByteSize.parse(text) == bytes)
    }

    @Test(arguments: ["", "K", "8E", "99999999999999999999", "1.K", ".5K", "1..2", "1 K", "1KB", "-1", "1e3", "١٢", "12\u{0}"])
    func badSizes(text: String) {
        #expect(throws: ByteSizeError.self) { try ByteSize.parse(text) }
    }

    @Test(arguments: [(Int64(10_485_760), "10M"), (1024, "1K"), (1000, "1000"), (1536, "1536"), (2 << 40, "2T"), (0, "0")])
    func sizeFormat(bytes: Int64, text: String) {
        #expect(ByteSize.format(bytes) == text)
    }

    // MARK: Expiry decisions

    static let second: Int64 = 1_000_000

    @Test(arguments: [
        // No KeepFailedSec=: kept forever, whatever its age.
        (Int64?(nil), 0 * second, 1_000_000 * second, Duration?.none, RetentionPolicy.Decision.keepForever),
        // Recorded time and ctime agree: due at placed + keep.
        (100 * second, 100 * second, 101 * second, .seconds(2), .keep(untilUSec: 102 * second)),
        (100 * second, 100 * second, 102 * second, .seconds(2), .expire(keptUSec: 2 * second)),
        // A copy of the state directory gave it a later ctime: the recorded time counts.
        (100 * second, 900 * second, 1000 * second, .seconds(60), .expire(keptUSec: 900 * second)),
        // A recorded time later than the ctime (a sender's, or a wrong clock) cannot extend its life.
        (5_000 * second, 100 * second, 103 * second, .seconds(2), .expire(keptUSec: 3 * second)),
        // Nothing recorded (a link moved aside unopened): the ctime alone.
        (nil, 100 * second, 101 * second, .seconds(2), .keep(untilUSec: 102 * second)),
        // A keep time too long to add saturates instead of wrapping into the past.
        (nil, 100 * second, 101 * second, .seconds(Int64.max / 2), .keep(untilUSec: .max)),
        // The clock set back before the placement: kept, never a negative age.
        (100 * second, 100 * second, 50 * second, .seconds(2), .keep(untilUSec: 102 * second)),
    ])
    func expiry(recorded: Int64?, changed: Int64, now: Int64, keep: Duration?, expected: RetentionPolicy.Decision) {
        #expect(RetentionPolicy.decide(recordedUSec: recorded, changedUSec: changed, nowUSec: now, keep: keep) == expected)
    }

    @Test(arguments: [
        ("1764619200000000", Int64?(1_764_619_200_000_000)), ("1", 1), ("0", nil), ("", nil), ("-5", nil), ("+5", nil),
        ("12 ", nil), ("0x10", nil), ("99999999999999999999", nil), ("9223372036854775807", .max), ("١٢", nil),
    ])
    func recordedTimes(text: String, expected: Int64?) {
        #expect(RetentionPolicy.recorded(text) == expected)
    }

    // MARK: Inbox bounds

    static let inbox = "/var/spool/inboxd/Inbox"

    @Test(arguments: [
        (InboxBounds(), InboxQuota.Usage(files: 1_000_000, bytes: 1 << 40), InboxQuota.Usage(), Int64(1 << 30), String?(nil)),
        (InboxBounds(maxFiles: 2), .init(files: 1), .init(files: 1), 10, nil),
        (InboxBounds(maxFiles: 2), .init(files: 2), .init(files: 0), 10, "over MaxInboxFiles=2 in \(inbox)"),
        (InboxBounds(maxBytes: 10_485_760), .init(files: 3, bytes: 10_485_000), .init(), 760, nil),
        (InboxBounds(maxBytes: 10_485_760), .init(files: 3, bytes: 10_485_000), .init(), 761,
         "over MaxInboxBytes=10M in \(inbox) (10485000 bytes in hand, this file 761)"),
        // One file larger than the whole bound never fits, even in an empty Inbox.
        (InboxBounds(maxBytes: 1024), .init(), .init(), 1025, "over MaxInboxBytes=1K in \(inbox) (0 bytes in hand, this file 1025)"),
        (InboxBounds(maxFilesPerSender: 100), .init(files: 500), .init(files: 99), 1, nil),
        (InboxBounds(maxFilesPerSender: 100), .init(files: 500), .init(files: 100), 1,
         "over MaxInboxFilesPerSender=100 for uid 1000 in \(inbox)"),
        (InboxBounds(maxBytesPerSender: 2048), .init(files: 1, bytes: 2000), .init(files: 1, bytes: 2000), 49,
         "over MaxInboxBytesPerSender=2K for uid 1000 in \(inbox) (2000 bytes in hand, this file 49)"),
        // The sender's own bound is named first when both are passed.
        (InboxBounds(maxFiles: 5, maxFilesPerSender: 5), .init(files: 5), .init(files: 5), 1,
         "over MaxInboxFilesPerSender=5 for uid 1000 in \(inbox)"),
        // An empty file still counts as a file.
        (InboxBounds(maxFiles: 1, maxBytes: 100), .init(files: 1, bytes: 0), .init(), 0, "over MaxInboxFiles=1 in \(inbox)"),
    ])
    func bounds(bounds: InboxBounds, inInbox: InboxQuota.Usage, fromSender: InboxQuota.Usage, size: Int64, expected: String?) {
        #expect(InboxQuota.refusal(inbox: Self.inbox, uid: 1000, bytes: size, inInbox: inInbox, fromSender: fromSender,
                                   bounds: bounds) == expected)
    }

    /// Steps of charges and releases, and the counts after each.
    @Test func countsFollowDeliveries() {
        var quota = InboxQuota(bounds: InboxBounds(maxFiles: 2, maxFilesPerSender: 1))
        let a = "/a", b = "/b"
        let steps: [(action: (inout InboxQuota) -> Void, inbox: InboxQuota.Usage, sender1000: InboxQuota.Usage,
                     refusalFor1000: String?, refusalFor1001: String?)] = [
            ({ $0.charge("1", .init(inbox: a, uid: 1000, bytes: 10)) }, .init(files: 1, bytes: 10), .init(files: 1, bytes: 10),
             "over MaxInboxFilesPerSender=1 for uid 1000 in /a", nil),
            ({ $0.charge("2", .init(inbox: a, uid: 1001, bytes: 5)) }, .init(files: 2, bytes: 15), .init(files: 1, bytes: 10),
             "over MaxInboxFilesPerSender=1 for uid 1000 in /a", "over MaxInboxFilesPerSender=1 for uid 1001 in /a"),
            // Another Inbox has counts of its own.
            ({ $0.charge("3", .init(inbox: b, uid: 1000, bytes: 7)) }, .init(files: 2, bytes: 15), .init(files: 1, bytes: 10),
             "over MaxInboxFilesPerSender=1 for uid 1000 in /a", "over MaxInboxFilesPerSender=1 for uid 1001 in /a"),
            // Charged again (routed again): counted once.
            ({ $0.charge("1", .init(inbox: a, uid: 1000, bytes: 10)) }, .init(files: 2, bytes: 15), .init(files: 1, bytes: 10),
             "over MaxInboxFilesPerSender=1 for uid 1000 in /a", "over MaxInboxFilesPerSender=1 for uid 1001 in /a"),
            ({ $0.release("1") }, .init(files: 1, bytes: 5), .init(), nil, "over MaxInboxFilesPerSender=1 for uid 1001 in /a"),
            // A second release, or one of an id never charged, changes nothing.
            ({ $0.release("1"); $0.release("nope") }, .init(files: 1, bytes: 5), .init(), nil,
             "over MaxInboxFilesPerSender=1 for uid 1001 in /a"),
            ({ $0.release("2") }, .init(), .init(), nil, nil),
        ]
        for (index, step) in steps.enumerated() {
            step.action(&quota)
            #expect(quota.usage(of: a) == step.inbox, "step \(index)")
            #expect(quota.usage(of: a, uid: 1000) == step.sender1000, "step \(index)")
            #expect(quota.refusal(inbox: a, uid: 1000, bytes: 1) == step.refusalFor1000, "step \(index)")
            #expect(quota.refusal(inbox: a, uid: 1001, bytes: 1) == step.refusalFor1001, "step \(index)")
        }
        #expect(quota.usage(of: b) == .init(files: 1, bytes: 7))
        #expect(quota.count == 1)
    }
}

@Suite("Time span text")
struct TimeSpanFormatTests {
    @Test(arguments: [
        (Duration.seconds(2), "2s"), (.seconds(3600), "1h"), (.seconds(5400), "1h 30min"), (.milliseconds(250), "250ms"),
        (.seconds(90061), "1d 1h 1min 1s"), (.microseconds(1_000_001), "1s 1us"), (.zero, "0"), (.seconds(-5), "0"),
    ])
    func format(duration: Duration, text: String) throws {
        #expect(TimeSpan.format(duration) == text)
        if duration > .zero { #expect(try TimeSpan.parse(text) == duration) }
    }
}

@Suite("Limits in the status file")
struct HeldFileLimitsStatusTests {
    static let set = HeldFileLimitsStatus(
        retention: RetentionSettings(keepFailed: .seconds(1_209_600)),
        bounds: InboxBounds(maxFiles: 100, maxBytes: 1 << 30, maxFilesPerSender: 10, maxBytesPerSender: 1_000_000),
        use: [.init(inbox: "/var/spool/inboxd/Inbox", files: 1, bytes: 4096), .init(inbox: "/srv/\"in\"", files: 0, bytes: 0)],
        packages: PackageLimits(maxDepth: 8, maxEntries: 500, maxBytes: 1 << 30))

    @Test(arguments: [HeldFileLimitsStatus(), set])
    func writtenAndReadBack(limits: HeldFileLimitsStatus) throws {
        var status = AgentStatus()
        status.limits = limits
        let text = status.json()
        #expect(JSON.validate(Array(text.utf8)) == nil)
        #expect(try AgentStatus.parse(Array(text.utf8)).get().limits == limits)
    }

    @Test func anOlderAgentsFileHasNoLimits() throws {
        #expect(try AgentStatus.parse(Array(#"{"pid":9}"#.utf8)).get().limits == HeldFileLimitsStatus())
        #expect(try AgentStatus.parse(Array(#"{"limits":{"maxInboxFiles":"many","inboxUse":[{"files":3}]}}"#.utf8)).get()
            .limits == HeldFileLimitsStatus())
    }

    @Test func whatStatusSays() {
        #expect(HeldFileLimitsStatus().lines.isEmpty)
        #expect(Self.set.lines.map { "\($0.name)|\($0.value)" } == [
            "Retention|failed/ 14d (KeepFailedSec=), unhandled/ infinity (KeepUnhandledSec=)",
            "Packages|MaxPackageDepth=8 MaxPackageEntries=500 MaxPackageSize=1G",
            "Bounds|MaxInboxFiles=100 MaxInboxBytes=1G MaxInboxFilesPerSender=10 MaxInboxBytesPerSender=1000000",
            "|/var/spool/inboxd/Inbox: 1 file, 4096 bytes in hand",
            "|/srv/\"in\": 0 files, 0 bytes in hand",
        ])
    }
}
