/// Splits a command line into options and positional arguments the way swift-argument-parser does:
/// `--name value`, `--name=value`, short `-h`, `--` ending the options, a lone `-` (stdin) and the empty string as
/// positional arguments. Which options exist and what they mean is the caller's (`CommandOptions`).
public struct ArgumentTokenizer: Sendable {
    /// One word of the command line as the tokenizer sees it.
    public enum Token: Equatable, Sendable {
        /// `--name`, `-n`, or `--name=value` with its `inline` value ("" for `--name=`).
        case option(String, inline: String?)
        case positional(String)
    }

    private var arguments: ArraySlice<String>
    /// True once `--` was read: every word after it is positional.
    public private(set) var onlyPositional = false

    public init(_ arguments: [String]) {
        self.arguments = arguments[...]
    }

    /// The next token; nil at the end.
    public mutating func next() -> Token? {
        guard let word = arguments.popFirst() else { return nil }
        if onlyPositional || !word.hasPrefix("-") || word == "-" { return .positional(word) }
        if word == "--" {
            onlyPositional = true
            return next()
        }
        // Only a long option has an inline value: `-n=5` is the option "-n=5", which no command declares.
        if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
            return .option(String(word[..<equals]), inline: String(word[word.index(after: equals)...]))
        }
        return .option(word, inline: nil)
    }

    /// The value of an option that takes one: its inline `=value`, else the next word as it is (even `-x` or `--`).
    public mutating func value(for name: String, inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard let value = arguments.popFirst() else { throw .missingValue(for: name) }
        return value
    }
}
