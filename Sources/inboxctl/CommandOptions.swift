/// What one subcommand accepts on its command line, declared once: its options, whether it takes the agent's
/// options, and how many positional arguments. `parse` does the scanning every subcommand shares.
struct CommandOptions: Sendable {
    /// One option: its names (the first is the one `ParsedOptions` is asked with) and whether it takes a value.
    struct Option: Sendable {
        let names: [String]
        let takesValue: Bool

        /// An option without a value, as `--json` or `-f, --follow`.
        static func flag(_ name: String, _ aliases: String...) -> Option {
            Option(names: [name] + aliases, takesValue: false)
        }

        /// An option with a value (`--type UTI` or `--type=UTI`); given again, the last value wins unless the
        /// command reads them all with `ParsedOptions.values`.
        static func value(_ name: String, _ aliases: String...) -> Option {
            Option(names: [name] + aliases, takesValue: true)
        }
    }

    /// How many positional arguments the command takes; one more is an "unexpected argument".
    enum Positionals: Sendable {
        case none, atMostOne, any
    }

    /// What `parse` found: help was asked for, a usage error, or the options to run with.
    enum Outcome {
        case help
        case usageError(OptionScanner.UsageError)
        case parsed(ParsedOptions)
    }

    let options: [Option]
    /// Whether the agent's options (`AgentOptions`) are accepted too; a declared option of the same name wins.
    let agentOptions: Bool
    let positionals: Positionals

    init(_ options: [Option] = [], agentOptions: Bool, positionals: Positionals) {
        self.options = options
        self.agentOptions = agentOptions
        self.positionals = positionals
    }

    /// Scans `arguments` in order: the first `-h`/`--help` or usage error ends the scan. `check` then looks at the
    /// whole (a missing argument, options that exclude each other); what it throws is a usage error too.
    func parse(_ arguments: [String],
               check: (ParsedOptions) throws(OptionScanner.UsageError) -> Void = { _ in }) -> Outcome {
        do throws(OptionScanner.UsageError) {
            guard let parsed = try scan(arguments) else { return .help }
            try check(parsed)
            return .parsed(parsed)
        } catch {
            return .usageError(error)
        }
    }

    /// The parsed options, or nil when help was asked for.
    private func scan(_ arguments: [String]) throws(OptionScanner.UsageError) -> ParsedOptions? {
        var scanner = OptionScanner(arguments)
        var parsed = ParsedOptions(declared: Set(options.map { $0.names[0] }))
        while let token = scanner.next() {
            switch token {
            case .option("-h", _), .option("--help", _):
                return nil
            case .option(let name, let inline):
                if let option = options.first(where: { $0.names.contains(name) }) {
                    let key = option.names[0]
                    if option.takesValue {
                        parsed.given[key, default: []].append(try scanner.value(for: name, inline: inline))
                    } else if inline != nil {
                        throw OptionScanner.UsageError(message: "option '\(name)' takes no value")
                    } else {
                        parsed.given[key, default: []].append("")
                    }
                } else if agentOptions, try parsed.agent.take(name, inline: inline, from: &scanner) {
                    continue
                } else {
                    throw .unknownOption(name, known: suggestions)
                }
            case .positional(let word):
                switch positionals {
                case .none: throw OptionScanner.UsageError(message: "unexpected argument '\(word)'")
                case .atMostOne where !parsed.positionals.isEmpty:
                    throw OptionScanner.UsageError(message: "unexpected argument '\(word)'")
                case .atMostOne, .any: parsed.positionals.append(word)
                }
            }
        }
        return parsed
    }

    /// The long names an unknown option may be a misspelling of (a one-letter `-x` is too short to guess from).
    private var suggestions: [String] {
        let agent = agentOptions ? AgentOptions.names.sorted() : []
        return (options.flatMap(\.names) + agent + ["--help"]).filter { $0.hasPrefix("--") }
    }
}

/// The options and arguments of one command line, as `CommandOptions.parse` found them.
struct ParsedOptions {
    /// The agent's options given (empty unless the command accepts them).
    var agent = AgentOptions()
    var positionals: [String] = []
    /// Each option given, by its first name, with its values in order ("" for a flag).
    fileprivate var given: [String: [String]] = [:]
    private let declared: Set<String>

    fileprivate init(declared: Set<String>) {
        self.declared = declared
    }

    /// Whether the option was given.
    func flag(_ name: String) -> Bool {
        !values(name).isEmpty
    }

    /// The option's value, the last one when it was given more than once.
    func value(_ name: String) -> String? {
        values(name).last
    }

    /// Every value given to the option, in order.
    func values(_ name: String) -> [String] {
        precondition(declared.contains(name), "'\(name)' is not a declared option (use its first name)")
        return given[name] ?? []
    }
}
