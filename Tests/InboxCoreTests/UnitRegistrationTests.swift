import Testing
@testable import InboxCore

@Suite("Unit= registrations, unit names and environment files")
struct UnitRegistrationTests {
    static func parse(_ handler: String) -> RegistrationFile {
        RegistrationParser.parse(Array("[Handler]\n\(handler)\n[DocumentType]\nContentTypes=public.data\n".utf8),
                                 path: "/h/x.handler")
    }

    @Test func aTemplateStandsInForExec() throws {
        let file = Self.parse("Unit=photo-import@.service\nUser=photos\nTimeoutSec=30\nMaxConcurrent=2")
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(registration.unit == (try UnitTemplate(parsing: "photo-import@.service")))
        #expect(registration.unitLine == 2)
        #expect(registration.exec.arguments.isEmpty)
        #expect(registration.user == "photos" && registration.timeout == .seconds(30) && registration.maxConcurrent == 2)
        #expect(registration.unit?.instance("0123456789abcdef0123456789abcdef")
                == "photo-import@0123456789abcdef0123456789abcdef.service")
        #expect(Self.parse("Exec=/bin/true").registration?.unit == nil)
    }

    @Test(arguments: [
        ("Unit=photo-import.service", "/h/x.handler:2: Unit= must name a template, NAME@.service (each delivery starts an instance), not 'photo-import.service'"),
        ("Unit=photo-import@.socket", "/h/x.handler:2: Unit= must name a template service, NAME@.service, not 'photo-import@.socket'"),
        ("Unit=photo-import@x.service", "/h/x.handler:2: Unit= must name a template, NAME@.service (each delivery starts an instance), not 'photo-import@x.service'"),
        ("Unit=@.service", "/h/x.handler:2: invalid unit name '@.service' in Unit=: NAME may hold letters, digits and ':-_.\\'"),
        ("Unit=photo import@.service", "/h/x.handler:2: invalid unit name 'photo import@.service' in Unit=: NAME may hold letters, digits and ':-_.\\'"),
        ("Unit=a@b@.service", "/h/x.handler:2: invalid unit name 'a@b@.service' in Unit=: NAME may hold letters, digits and ':-_.\\'"),
        ("Unit=ph/oto@.service", "/h/x.handler:2: invalid unit name 'ph/oto@.service' in Unit=: NAME may hold letters, digits and ':-_.\\'"),
        ("Unit=" + String(repeating: "a", count: 220) + "@.service", "/h/x.handler:2: unit name '" + String(repeating: "a", count: 57) + "...' in Unit= is too long for its instances' names"),
        ("Unit=p@.service\nExec=/bin/true", "/h/x.handler:3: Exec= and Unit= exclude each other: the unit's ExecStart= runs the handler; remove Exec="),
        ("Exec=/bin/true %f\nUnit=p@.service", "/h/x.handler:2: Exec= and Unit= exclude each other: the unit's ExecStart= runs the handler; remove Exec="),
        ("Unit=p@.service\nActivation=resident", "/h/x.handler:3: Activation=resident and Unit= exclude each other: each delivery starts an instance of the unit"),
        ("Unit=p@.service\nRequireLandlock=yes", "/h/x.handler:3: RequireLandlock=yes cannot hold with Unit=: the unit runs outside the agent's Landlock; confine it with the unit's own settings"),
        ("Unit=bad name@.service\nUser=x", "/h/x.handler:2: invalid unit name 'bad name@.service' in Unit=: NAME may hold letters, digits and ':-_.\\'"),
    ])
    func badUnitsAreErrorsAtTheirLine(text: String, expected: String) {
        let file = Self.parse(text)
        #expect(file.registration == nil)
        #expect(file.diagnostics.map(\.description).contains(expected), "\(file.diagnostics.map(\.description))")
        // A Unit= that was given, even a bad one, is not also reported as a missing Exec=.
        #expect(!file.diagnostics.map(\.description).contains { $0.contains("missing Exec=") })
    }

    @Test func processSettingsAreWarnedAboutAndIgnored() throws {
        let file = Self.parse("Unit=p@.service\nReadWritePaths=/srv\nOutputLimit=1K\nLimitNOFILE=64\nOutputLimit=")
        #expect(file.registration != nil)
        #expect(file.diagnostics.map(\.description) == [
            "/h/x.handler:3: warning: ReadWritePaths= has no effect with Unit= (set it in the unit), ignored",
            "/h/x.handler:4: warning: OutputLimit= has no effect with Unit= (set it in the unit), ignored",
            "/h/x.handler:5: warning: LimitNOFILE= has no effect with Unit= (set it in the unit), ignored",
        ])
    }

    @Test func anEmptyUnitClearsIt() {
        #expect(Self.parse("Unit=p@.service\nUnit=").diagnostics.map(\.description) == ["/h/x.handler:1: missing Exec= in [Handler]"])
    }

    @Test(arguments: [
        ("0123456789abcdef", "0123456789abcdef"),
        ("a/b", "a-b"),
        (".hidden", "\\x2ehidden"),
        ("a.b:c_d", "a.b:c_d"),
        ("a-b c", "a\\x2db\\x20c"),
        ("ü", "\\xc3\\xbc"),
        ("", ""),
    ])
    func instancesAreEscapedAsSystemdEscapeDoes(text: String, expected: String) {
        #expect(UnitTemplate.escape(text) == expected)
    }

    @Test(arguments: [
        ("p@0a.service", "/org/freedesktop/systemd1/unit/p_400a_2eservice"),
        ("inboxd-test@1.service", "/org/freedesktop/systemd1/unit/inboxd_2dtest_401_2eservice"),
        ("1x.service", "/org/freedesktop/systemd1/unit/_31x_2eservice"),
        ("", "/org/freedesktop/systemd1/unit/_"),
    ])
    func objectPathsAreSdBusPathEncoded(unit: String, expected: String) {
        #expect(UnitTemplate.objectPath(of: unit) == expected)
    }

    @Test func environmentFilesQuoteEveryValue() {
        let rendered = String(decoding: EnvironmentFile.render([
            "INBOX_FILE=/i/a \"b\" $HOME `x` \\n", "INBOX_NAME=two\nlines", "INBOX_EMPTY=", "no-equals",
            #"INBOX_ANNOTATION={"k":"v=1"}"#,
        ]), as: UTF8.self)
        #expect(rendered == """
            INBOX_FILE="/i/a \\"b\\" \\$HOME \\`x\\` \\\\n"
            INBOX_NAME="two
            lines"
            INBOX_EMPTY=""
            INBOX_ANNOTATION="{\\"k\\":\\"v=1\\"}"

            """)
    }
}
