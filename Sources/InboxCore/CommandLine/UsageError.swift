/// A problem with a command line: `message` is what follows "Error: "; `token` is the word at fault, when one is,
/// and `suggestion` the close match the message offers.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public let token: String?
    public let suggestion: String?

    /// A problem the scan cannot see (a missing argument, options that exclude each other), worded by the caller.
    public init(message: String, token: String? = nil, suggestion: String? = nil) {
        self.message = message
        self.token = token
        self.suggestion = suggestion
    }

    public var description: String { message }

    /// "unknown option '--jsno'; did you mean '--json'?", the suggestion taken from `known`.
    public static func unknownOption(_ name: String, known: some Sequence<String>) -> UsageError {
        suggesting("unknown option", name, among: known)
    }

    /// "unknown subcommand 'verfy'; did you mean 'verify'?", the suggestion taken from `known`.
    public static func unknownSubcommand(_ name: String, known: some Sequence<String>) -> UsageError {
        suggesting("unknown subcommand", name, among: known)
    }

    /// "unexpected argument 'stray'": a positional argument the command has no room for.
    public static func unexpectedArgument(_ word: String) -> UsageError {
        UsageError(message: "unexpected argument '\(word)'", token: word)
    }

    /// "missing value for '--state'": an option that takes a value came last.
    public static func missingValue(for name: String) -> UsageError {
        UsageError(message: "missing value for '\(name)'", token: name)
    }

    /// "option '--json' takes no value": a flag given as `--json=yes`.
    public static func takesNoValue(_ name: String) -> UsageError {
        UsageError(message: "option '\(name)' takes no value", token: name)
    }

    private static func suggesting(_ what: String, _ word: String, among known: some Sequence<String>) -> UsageError {
        let close = Spelling.closest(to: word, among: known)
        let hint = close.map { "; did you mean '\($0)'?" } ?? ""
        return UsageError(message: "\(what) '\(word)'\(hint)", token: word, suggestion: close)
    }
}
