import Testing
@testable import InboxCore

@Suite("Command options")
struct CommandOptionsTests {
    /// What a parse came to, in a form a table can spell.
    enum Result: Equatable {
        case help
        case error(String)
        case parsed([String], [ParsedOptions.Given])
    }

    static func result(_ outcome: CommandOptions.Outcome) -> Result {
        switch outcome {
        case .help: .help
        case .usageError(let error): .error(error.message)
        case .parsed(let parsed): .parsed(parsed.positionals, parsed.given)
        }
    }

    static func given(_ name: String, _ value: String? = nil) -> ParsedOptions.Given {
        ParsedOptions.Given(name: name, value: value)
    }

    /// As `inboxctl log`: flags, values, short aliases, the agent's options as inboxctl takes them, no positionals.
    static let log = CommandOptions([.value("--handler"), .flag("--follow", "-f"), .value("--lines", "-n")],
                                    agentOptions: AgentOption.inboxctl, positionals: .none)
    /// As `inboxctl handlers`: at most one positional.
    static let one = CommandOptions([.value("--type"), .flag("--json")], agentOptions: AgentOption.inboxctl, positionals: .atMostOne)
    /// As `inboxctl verify`: any number of positionals, no agent options.
    static let any = CommandOptions([.value("--handlers")], positionals: .any)
    /// As `inboxctl send`: its own `--inbox`, which is not the agent's.
    static let send = CommandOptions([.value("--inbox")], agentOptions: AgentOption.inboxctl, positionals: .any)
    /// As `inboxd`: every agent option, `--help` declared as a flag.
    static let agent = CommandOptions([.flag("--version"), .flag("--help", "-h")], agentOptions: AgentOption.allCases, positionals: .none)
    /// The sets above by name, so that a case reads as `("log", arguments, result)`.
    static let commands = ["log": log, "one": one, "any": any, "send": send, "agent": agent]

    @Test(arguments: [
        // Positional counts.
        ("log", [], .parsed([], [])),
        ("log", ["stray"], .error("unexpected argument 'stray'")),
        ("log", [""], .error("unexpected argument ''")),
        ("one", ["a"], .parsed(["a"], [])),
        ("one", ["a", "b"], .error("unexpected argument 'b'")),
        ("one", ["ü", "é"], .error("unexpected argument 'é'")),
        ("any", ["a", "b", "", "-", "c"], .parsed(["a", "b", "", "-", "c"], [])),
        ("any", ["--", "--handlers", "-h"], .parsed(["--handlers", "-h"], [])),
        // Values, flags and aliases.
        ("log", ["--handler=x", "-f", "-n", "5"], .parsed([], [given("--handler", "x"), given("--follow"), given("--lines", "5")])),
        ("log", ["--lines", "1", "--lines=2"], .parsed([], [given("--lines", "1"), given("--lines", "2")])),
        ("log", ["--handler="], .parsed([], [given("--handler", "")])),
        ("log", ["--follow=yes"], .error("option '--follow' takes no value")),
        ("log", ["-n"], .error("missing value for '-n'")),
        ("log", ["--handler"], .error("missing value for '--handler'")),
        ("log", ["--folow"], .error("unknown option '--folow'; did you mean '--follow'?")),
        ("log", ["--hlp"], .error("unknown option '--hlp'; did you mean '--help'?")),
        ("log", ["-x"], .error("unknown option '-x'")),
        ("log", ["--zzzzzzzz"], .error("unknown option '--zzzzzzzz'")),
        ("log", ["--föllow"], .error("unknown option '--föllow'; did you mean '--follow'?")),
        // Help: the first -h or --help ends the scan, unless a usage error comes first.
        ("log", ["-h"], .help),
        ("log", ["--help", "--bogus", "stray"], .help),
        ("any", ["a", "-h", "b"], .help),
        ("log", ["--bogus", "--help"], .error("unknown option '--bogus'")),
        ("log", ["--", "-h"], .error("unexpected argument '-h'")),
        ("log", ["--lines", "-h"], .parsed([], [given("--lines", "-h")])),
        // The agent's options: accepted where the command takes them, as inboxctl takes them.
        ("log", ["--state", "/s", "--inbox=/i", "--inbox", "/j", "--config="],
         .parsed([], [given("--state", "/s"), given("--inbox", "/i"), given("--inbox", "/j"), given("--config", "")])),
        ("log", ["--stat", "/s"], .error("unknown option '--stat'; did you mean '--state'?")),
        ("log", ["--max-concurrent", "3"], .error("unknown option '--max-concurrent'")),
        ("log", ["--runtime-dir"], .error("missing value for '--runtime-dir'")),
        ("any", ["--state", "/s"], .error("unknown option '--state'")),
        ("any", ["--handler", "x"], .error("unknown option '--handler'; did you mean '--handlers'?")),
        ("send", ["--inbox", "/i", "f"], .parsed(["f"], [given("--inbox", "/i")])),
        // inboxd: every agent option, and --help is a flag like --version.
        ("agent", ["--max-concurrent=3", "--log-level", "debug", "--log-target", "stderr"],
         .parsed([], [given("--max-concurrent", "3"), given("--log-level", "debug"), given("--log-target", "stderr")])),
        ("agent", ["--help", "--version", "-h"], .parsed([], [given("--help"), given("--version"), given("--help")])),
        ("agent", ["--help", "--bogus"], .error("unknown option '--bogus'")),
        ("agent", ["--help=x"], .error("option '--help' takes no value")),
        ("agent", ["--versio"], .error("unknown option '--versio'; did you mean '--version'?")),
        ("agent", ["--inbx", "/tmp/x"], .error("unknown option '--inbx'; did you mean '--inbox'?")),
        ("agent", ["-"], .error("unexpected argument '-'")),
    ] as [(String, [String], Result)])
    func parses(_ command: String, _ arguments: [String], _ expected: Result) throws {
        let options = try #require(Self.commands[command])
        #expect(Self.result(options.parse(arguments)) == expected)
    }

    /// The usage error the check of `inboxctl send` would throw, for a table of what was given.
    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if parsed.positionals.isEmpty { throw UsageError(message: "missing FILE (or '-' for stdin)") }
        if parsed.positionals.filter({ $0 == "-" }).count > 1 { throw UsageError(message: "'-' given more than once") }
        if parsed.flag("--inbox") && parsed.value("--inbox") == "" { throw UsageError(message: "empty Inbox") }
    }

    @Test(arguments: [
        ([], .error("missing FILE (or '-' for stdin)")),
        (["-", "-"], .error("'-' given more than once")),
        (["--inbox=", "f"], .error("empty Inbox")),
        (["f", "--bogus"], .error("unknown option '--bogus'")),
        (["--help"], .help),
        (["-", "--inbox", "/i"], .parsed(["-"], [given("--inbox", "/i")])),
    ] as [([String], Result)])
    func checkSeesTheWholeCommandLine(_ arguments: [String], _ expected: Result) {
        #expect(Self.result(Self.send.parse(arguments, check: Self.check)) == expected)
    }

    /// `.passthrough`: no positionals of its own, the words after `--` kept as they are, options and all.
    @Test func wordsAfterTheDoubleDashPassThrough() throws {
        let options = CommandOptions([.value("--handler"), .flag("--follow", "-f")], agentOptions: AgentOption.inboxctl,
                                     positionals: .passthrough)
        guard case .parsed(let parsed) = options.parse(["-f", "--handler", "h", "--", "-o", "json", "--handler", "x"]) else {
            Issue.record("not parsed")
            return
        }
        #expect(parsed.passthrough == ["-o", "json", "--handler", "x"])
        #expect(parsed.positionals.isEmpty)
        #expect(parsed.value("--handler") == "h")
        #expect(options.parse(["stray"]) == .usageError(.unexpectedArgument("stray")))
        #expect(options.parse(["--", "--"]).parsedPassthrough == ["--"])
    }

    @Test func aRepeatedValueLastWinsAndAllAreKept() throws {
        let parsed = try #require(try Self.one.scan(["--type", "a", "--json", "--type=b", "x"]))
        #expect(parsed.value("--type") == "b")
        #expect(parsed.values("--type") == ["a", "b"])
        #expect(parsed.flag("--json") && parsed.flag("--type"))
        #expect(parsed.positionals == ["x"])
        let none = try #require(try Self.one.scan([]))
        #expect(!none.flag("--json") && none.value("--type") == nil && none.values("--type").isEmpty)
    }

    @Test func theAgentsOptionsAreReadByTheirCase() throws {
        let parsed = try #require(try Self.log.scan(["--handlers", "/a", "--state", "/s", "--handlers=/b", "-f"]))
        #expect(parsed.values(.handlers) == ["/a", "/b"])
        #expect(parsed.value(.state) == "/s")
        #expect(parsed.value(.config) == nil && parsed.values(.inbox).isEmpty)
        #expect(parsed.flag("--follow"))
    }

    @Test func aCommandsOwnOptionIsNotTheAgents() throws {
        #expect(!Self.send.agentOptions.contains(.inbox))
        let parsed = try #require(try Self.send.scan(["--inbox", "/i", "--state", "/s", "f"]))
        #expect(parsed.value("--inbox") == "/i")
        #expect(parsed.values(.inbox).isEmpty)
        #expect(parsed.value(.state) == "/s")
    }

    @Test func anOptionTheCommandDoesNotTakeHasNoAgentValue() throws {
        let parsed = try #require(try Self.any.scan(["--handlers", "/a"]))
        #expect(parsed.values("--handlers") == ["/a"])
        #expect(parsed.values(.handlers).isEmpty)
    }

    @Test(arguments: [
        (UsageError.unknownOption("--jsno", known: ["--json", "--help"]), "unknown option '--jsno'; did you mean '--json'?",
         "--jsno", "--json"),
        (.unknownOption("-x", known: ["--json"]), "unknown option '-x'", "-x", nil),
        (.unknownSubcommand("verfy", known: ["verify", "help"]), "unknown subcommand 'verfy'; did you mean 'verify'?",
         "verfy", "verify"),
        (.unexpectedArgument(""), "unexpected argument ''", "", nil),
        (.missingValue(for: "--state"), "missing value for '--state'", "--state", nil),
        (.takesNoValue("--json"), "option '--json' takes no value", "--json", nil),
        (UsageError(message: "missing ID"), "missing ID", nil, nil),
    ] as [(UsageError, String, String?, String?)])
    func aUsageErrorNamesItsTokenAndSuggestion(_ error: UsageError, _ message: String, _ token: String?, _ suggestion: String?) {
        #expect(error.message == message && error.description == message)
        #expect(error.token == token)
        #expect(error.suggestion == suggestion)
    }

    @Test func inboxctlTakesTheAgentsOptionsThatSayWhereItsFilesAre() {
        #expect(AgentOption.inboxctl == [.config, .inbox, .handlers, .state, .runtimeDirectory, .defaults])
        #expect(AgentOption.allCases.allSatisfy { $0.option.takesValue && $0.option.names == [$0.name] })
    }

    @Test(arguments: [
        (AgentOption.config.option.helpLine("X"), "  --config FILE           X"),
        (AgentOption.maxConcurrent.option.helpLine("Y"), "  --max-concurrent N      Y"),
        (CommandOption.flag("--json").helpLine("Z"), "  --json                  Z"),
        (CommandOption.helpLine("a-label-of-twenty-two!", "W"), "  a-label-of-twenty-two!  W"),
        (CommandOption.helpLine("a-label-over-twenty-two", "V"), "  a-label-over-twenty-two  V"),
        (CommandOption.helpOptionLine, "  -h, --help              Show help information"),
    ])
    func helpLinesAlignTheirMeaning(_ line: String, _ expected: String) {
        #expect(line == expected)
    }
}

extension CommandOptions.Outcome {
    fileprivate var parsedPassthrough: [String]? {
        if case .parsed(let parsed) = self { parsed.passthrough } else { nil }
    }
}
