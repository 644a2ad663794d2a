import Testing
@testable import InboxCore

@Suite("Resident and batch registrations, answers and batch outcomes")
struct ResidentRegistrationTests {
    static func parse(_ handler: String) -> RegistrationFile {
        RegistrationParser.parse(Array("[Handler]\n\(handler)\n[DocumentType]\nContentTypes=public.data\n".utf8),
                                 path: "/h/x.handler")
    }

    @Test func residentKeysAndDefaults() throws {
        let defaults = try #require(Self.parse("Exec=/bin/true").registration)
        #expect(defaults.activation == .launch)
        #expect(defaults.instances == 1 && defaults.maxInFlight == 16 && defaults.idleExit == .seconds(60))
        #expect(defaults.batchSize == 1 && defaults.batchWindow == .zero)
        let resident = try #require(Self.parse("""
            Exec=/usr/bin/worker --quiet
            Activation=resident
            Instances=3
            MaxInFlight=8
            IdleExitSec=infinity
            """).registration)
        #expect(resident.activation == .resident)
        #expect(resident.instances == 3 && resident.maxInFlight == 8 && resident.idleExit == nil)
        #expect(resident.deliveryCapacity(processes: 4) == 24)
        let batch = try #require(Self.parse("Exec=/usr/bin/many %F\nBatchWindowSec=200ms").registration)
        #expect(batch.batchSize == 64 && batch.batchWindow == .milliseconds(200))
        #expect(batch.deliveryCapacity(processes: 2) == 128)
        #expect(Self.parse("Exec=/usr/bin/many --urls %U\nBatchSize=8").registration?.batchSize == 8)
    }

    @Test(arguments: [
        ("Exec=/bin/cat %f\nActivation=resident", "/h/x.handler:2: %f names one file, and a resident handler (Activation=resident) serves many: it gets each file as a message on fd 3; remove %f from Exec="),
        ("Exec=/bin/cat %F\nActivation=resident", "/h/x.handler:2: %F and %U launch a process per batch; a resident handler (Activation=resident) gets each file as a message on fd 3: remove them from Exec="),
        ("Exec=/bin/true\nActivation=daemon", "/h/x.handler:3: invalid Activation= 'daemon': expected launch or resident"),
        ("Exec=/bin/true\nInstances=0", "/h/x.handler:3: Instances= must be a positive integer, got '0'"),
        ("Exec=/bin/true\nMaxInFlight=5000", "/h/x.handler:3: MaxInFlight= must be at most 1024, got 5000"),
        ("Exec=/bin/true\nIdleExitSec=soon", "/h/x.handler:3: invalid IdleExitSec=: invalid time span 'soon'"),
        ("Exec=/bin/x %F\nBatchWindowSec=2min", "/h/x.handler:3: invalid BatchWindowSec= '2min': at most 60s"),
        ("Exec=/bin/x %F\nBatchSize=-1", "/h/x.handler:3: BatchSize= must be a positive integer, got '-1'"),
        ("Exec=/bin/x --in=%F", "/h/x.handler:2: %F and %U must stand alone as an argument, not in '--in=%F'"),
        ("Exec=/bin/x %F %U", "/h/x.handler:2: Exec= may hold only one %F or %U"),
        ("Exec=/bin/x %t %F", "/h/x.handler:2: %t names one file and cannot be used with %F or %U in Exec="),
    ])
    func badValuesAreErrorsWithTheirLine(text: String, expected: String) {
        let file = Self.parse(text)
        #expect(file.registration == nil)
        #expect(file.diagnostics.map(\.description).contains(expected), "\(file.diagnostics.map(\.description))")
    }

    @Test func batchKeysWithoutAListAreWarnedAbout() {
        let file = Self.parse("Exec=/bin/true %f\nBatchSize=4")
        #expect(file.registration?.batchSize == 1)
        #expect(file.diagnostics.map(\.description)
                == ["/h/x.handler:3: warning: BatchSize= has no effect without %F or %U in Exec=, ignored"])
    }

    @Test func listCodesExpandToOneArgumentPerFile() throws {
        let exec = try ExecCommand(parsing: "/bin/x --all %F 100%%")
        #expect(exec.expand(batch: ["/i/a b", "/i/c"]) == ["/bin/x", "--all", "/i/a b", "/i/c", "100%"])
        #expect(try ExecCommand(parsing: "/bin/x %U").expand(batch: ["/i/a b"]) == ["/bin/x", "file:///i/a%20b"])
    }

    @Test(arguments: [
        (#"{"deliveryID":"abc","result":"done"}"#, HandlerAnswer(deliveryID: "abc", result: .done)),
        (#"{"deliveryID":"abc","result":"retry","reason":"busy","extra":[1]}"#,
         HandlerAnswer(deliveryID: "abc", result: .retry, reason: "busy")),
        (#"{"result":"failed","deliveryID":"x","reason":null}"#, HandlerAnswer(deliveryID: "x", result: .failed)),
    ])
    func answersParse(text: String, expected: HandlerAnswer) throws {
        #expect(try HandlerAnswer.parse(Array(text.utf8)).get() == expected)
    }

    @Test(arguments: [
        ("not json", "not JSON"),
        ("[1]", "not a JSON object"),
        (#"{"result":"done"}"#, #"no "deliveryID" string"#),
        (#"{"deliveryID":"a","result":"ok"}"#, #""result" is 'ok', not done, retry or failed"#),
        (#"{"deliveryID":"a","result":"done","reason":3}"#, #""reason" is not a string"#),
        ("", "not JSON"),
    ])
    func malformedAnswersSayWhy(text: String, expected: String) {
        guard case .failure(let error) = HandlerAnswer.parse(Array(text.utf8)) else {
            Issue.record("\(text) parsed")
            return
        }
        #expect(error.message.hasPrefix(expected), "\(error.message)")
    }

    @Test func answersMeanWhatExitStatusesMean() {
        let policy = RetryPolicy(maxAttempts: 2)
        #expect(policy.decide(HandlerAnswer(deliveryID: "a", result: .done).outcome, attempt: 1) == .complete)
        #expect(policy.decide(HandlerAnswer(deliveryID: "a", result: .retry).outcome, attempt: 1) == .retry(after: .seconds(10)))
        #expect(policy.decide(HandlerAnswer(deliveryID: "a", result: .failed, reason: "bad").outcome, attempt: 2)
                == .fail(reason: "answered failed (bad) after 2 attempts"))
    }

    @Test func aFailedBatchRequeuesEachFileAloneWithoutCountingTheAttempt() {
        var lifecycle = DeliveryLifecycle(policy: RetryPolicy(maxAttempts: 1))
        #expect(lifecycle.start() == .launch(attempt: 1))
        #expect(lifecycle.exited(.batchFailed(.exited(1)), violation: nil) == .requeueAlone(.batchFailed(.exited(1))))
        #expect(lifecycle.state == .queued && lifecycle.attempts == 0)
        // Alone, its own failure counts.
        #expect(lifecycle.start() == .launch(attempt: 1))
        #expect(lifecycle.exited(.exited(1), violation: nil) == .fail(reason: "exit status 1 after 1 attempt", .exited(1)))
    }

    @Test func aTimedOutBatchAlsoGoesAgainAlone() {
        var lifecycle = DeliveryLifecycle(policy: RetryPolicy(maxAttempts: 1))
        _ = lifecycle.start()
        #expect(lifecycle.timeoutPassed() == .signal(.terminate))
        #expect(lifecycle.exited(.batchFailed(.signaled(15)), violation: nil) == .requeueAlone(.batchFailed(.timedOut)))
    }

    @Test func aBatchIsAJSONArray() {
        let a = Delivery(id: "1", handler: "h", name: "a", path: "/i/a", documents: "/d", contentType: "public.data",
                         contentTypes: ["public.data"])
        var b = a
        b.name = "b"
        let text = String(decoding: Delivery.batchDocument([a, b]), as: UTF8.self)
        #expect(text.hasPrefix("[{\"file\":\"/i/a\"") && text.hasSuffix("}]\n"))
        #expect(text.contains("},{\"file\""))
        #expect(JSON.validate(Array(text.utf8)) == nil)
    }

    static func plist(_ handler: String) -> RegistrationFile {
        RegistrationParser.parse(Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
                <key>CFBundleIdentifier</key> <string>com.example.worker</string>
                <key>InboxdHandler</key>
                <dict>
            \(handler)
                </dict>
                <key>CFBundleDocumentTypes</key>
                <array><dict><key>LSItemContentTypes</key> <array><string>public.data</string></array></dict></array>
            </dict>
            </plist>
            """.utf8), path: "/h/worker.plist")
    }

    @Test func infoPlistsTakeTheSameKeys() throws {
        let registration = try #require(Self.plist("""
                <key>Exec</key> <string>/usr/bin/worker</string>
                <key>Activation</key> <string>resident</string>
                <key>Instances</key> <integer>2</integer>
                <key>MaxInFlight</key> <integer>8</integer>
                <key>IdleExitSec</key> <string>5min</string>
            """).registration)
        #expect(registration.activation == .resident)
        #expect(registration.instances == 2 && registration.maxInFlight == 8 && registration.idleExit == .seconds(300))
        let batch = try #require(Self.plist("""
                <key>Exec</key> <array><string>/usr/bin/many</string><string>%F</string></array>
                <key>BatchSize</key> <integer>10</integer>
            """).registration)
        #expect(batch.batchSize == 10)
        let bad = Self.plist("""
                <key>Exec</key> <string>/usr/bin/worker %f</string>
                <key>Activation</key> <string>resident</string>
            """)
        #expect(bad.registration == nil)
        #expect(bad.diagnostics.first?.description.hasPrefix("/h/worker.plist:7: %f names one file") == true,
                "\(bad.diagnostics.map(\.description))")
    }
}
