/// What one command accepts on its command line, declared once: its own options, which of the agent's options it
/// takes too, and how many positional arguments. `parse` does the scanning every command shares.
public struct CommandOptions: Sendable {
    /// How many positional arguments the command takes; one more is an "unexpected argument".
    public enum Positionals: Sendable {
        case none, atMostOne, any
        /// None of its own; the words after `--` are kept, untouched, for the program the command runs
        /// (`ParsedOptions.passthrough`).
        case passthrough
    }

    /// What `parse` found: help was asked for, a usage error, or the options to run with.
    public enum Outcome: Equatable, Sendable {
        case help
        case usageError(UsageError)
        case parsed(ParsedOptions)
    }

    public let options: [CommandOption]
    /// The agent's options the command takes, less those it declares itself (its own `--inbox` wins).
    public let agentOptions: [AgentOption]
    public let positionals: Positionals

    public init(_ options: [CommandOption] = [], agentOptions: [AgentOption] = [], positionals: Positionals) {
        let declared = Set(options.flatMap(\.names))
        self.options = options
        self.agentOptions = agentOptions.filter { !declared.contains($0.name) }
        self.positionals = positionals
    }

    /// Scans `arguments`, then lets `check` look at the whole (a missing argument, options that exclude each other);
    /// what it throws is a usage error too.
    public func parse(_ arguments: [String],
                      check: (ParsedOptions) throws(UsageError) -> Void = { _ in }) -> Outcome {
        do throws(UsageError) {
            guard let parsed = try scan(arguments) else { return .help }
            try check(parsed)
            return .parsed(parsed)
        } catch {
            return .usageError(error)
        }
    }

    /// The options and arguments in `arguments`, or nil when help was asked for. The first `-h`/`--help` or usage
    /// error ends the scan, unless the command declares `--help` itself: then it is a flag like any other.
    public func scan(_ arguments: [String]) throws(UsageError) -> ParsedOptions? {
        var tokenizer = ArgumentTokenizer(arguments)
        var parsed = ParsedOptions(declared: Set(options.map { $0.names[0] }), agentOptions: Set(agentOptions))
        while let token = tokenizer.next() {
            switch token {
            case .option(let name, let inline):
                if let option = options.first(where: { $0.names.contains(name) }) {
                    let value: String?
                    if option.takesValue {
                        value = try tokenizer.value(for: name, inline: inline)
                    } else if inline != nil {
                        throw .takesNoValue(name)
                    } else {
                        value = nil
                    }
                    parsed.given.append(ParsedOptions.Given(name: option.names[0], value: value))
                } else if name == "-h" || name == "--help" {
                    return nil
                } else if let agent = agentOptions.first(where: { $0.name == name }) {
                    parsed.given.append(ParsedOptions.Given(name: agent.name, value: try tokenizer.value(for: name, inline: inline)))
                } else {
                    throw .unknownOption(name, known: suggestions)
                }
            case .positional(let word):
                switch positionals {
                case .passthrough where tokenizer.onlyPositional: parsed.passthrough.append(word)
                case .none, .passthrough: throw .unexpectedArgument(word)
                case .atMostOne where !parsed.positionals.isEmpty: throw .unexpectedArgument(word)
                case .atMostOne, .any: parsed.positionals.append(word)
                }
            }
        }
        return parsed
    }

    /// The long names an unknown option may be a misspelling of (a one-letter `-x` is too short to guess from).
    private var suggestions: [String] {
        (options.flatMap(\.names) + agentOptions.map(\.name) + ["--help"]).filter { $0.hasPrefix("--") }
    }
}
