import InboxCore
import Testing

@Suite("Limit*= values") struct HandlerLimitTests {
    @Test(arguments: [
        ("1024", HandlerLimit.Key.openFiles, UInt64?.some(1024), UInt64?.some(1024)),
        ("64:128", .openFiles, 64, 128),
        ("infinity", .openFiles, nil, nil),
        ("64:infinity", .openFiles, 64, nil),
        ("256M", .addressSpace, 256 << 20, 256 << 20),
        ("1G:2G", .addressSpace, 1 << 30, 2 << 30),
        ("4k", .coreSize, 4096, 4096),
    ] as [(String, HandlerLimit.Key, UInt64?, UInt64?)])
    func parses(text: String, key: HandlerLimit.Key, soft: UInt64?, hard: UInt64?) {
        #expect(HandlerLimit.parse(text, key: key) == HandlerLimit(key: key, soft: soft, hard: hard))
    }

    @Test(arguments: ["", "x", "128:64", "infinity:64", "1:2:3", "256M", "-1", "99999999999999999999", "18014398509481984T"])
    func rejects(text: String) {
        // Sizes are for byte limits only: LimitNOFILE=256M is an error.
        #expect(HandlerLimit.parse(text, key: text.hasSuffix("T") ? .addressSpace : .openFiles) == nil)
    }

    @Test func aBadLimitIsAnErrorWithItsLine() {
        let text = "[Handler]\nExec=/bin/true\nLimitNOFILE=lots\n[DocumentType]\nContentTypes=public.data\n"
        let parsed = RegistrationParser.parse(Array(text.utf8), path: "/h/x.handler")
        #expect(parsed.registration == nil)
        #expect(parsed.diagnostics.map(\.description)
                == ["/h/x.handler:3: invalid LimitNOFILE= 'lots': expected a number, SOFT:HARD or infinity"])
    }

    @Test func limitsAreKeptOnePerKey() throws {
        let text = "[Handler]\nExec=/bin/true\nLimitNOFILE=10\nLimitAS=1G\nLimitNOFILE=20:30\n[DocumentType]\nContentTypes=public.data\n"
        let registration = try #require(RegistrationParser.parse(Array(text.utf8), path: "/h/x.handler").registration)
        #expect(registration.limits == [HandlerLimit(key: .openFiles, soft: 20, hard: 30),
                                        HandlerLimit(key: .addressSpace, soft: 1 << 30, hard: 1 << 30)])
    }
}
