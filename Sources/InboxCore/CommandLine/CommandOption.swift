/// One option a command declares: its names (the first is the one `ParsedOptions` is asked with), whether it takes
/// a value, and for generated help, the value's placeholder and what the option does.
public struct CommandOption: Sendable {
    public let names: [String]
    public let takesValue: Bool
    /// The placeholder help shows after the name (`FILE` in `--config FILE`).
    public let valueName: String?
    public let help: String?

    public init(names: [String], takesValue: Bool, valueName: String? = nil, help: String? = nil) {
        precondition(!names.isEmpty, "an option needs a name")
        self.names = names
        self.takesValue = takesValue
        self.valueName = valueName
        self.help = help
    }

    /// An option without a value, as `--json` or `-f, --follow`.
    public static func flag(_ name: String, _ aliases: String...) -> CommandOption {
        CommandOption(names: [name] + aliases, takesValue: false)
    }

    /// An option with a value (`--type UTI` or `--type=UTI`); given again, the last value wins unless the command
    /// reads them all with `ParsedOptions.values`.
    public static func value(_ name: String, _ aliases: String...) -> CommandOption {
        CommandOption(names: [name] + aliases, takesValue: true)
    }

    /// The option's line in an OPTIONS section: `  --config FILE           meaning`.
    public func helpLine(_ meaning: String) -> String {
        Self.helpLine(([names[0]] + (valueName.map { [$0] } ?? [])).joined(separator: " "), meaning)
    }

    /// One row of an OPTIONS or SUBCOMMANDS section: the label indented by two, the meaning in the column after it.
    public static func helpLine(_ label: String, _ meaning: String) -> String {
        let padded = label.count >= 22 ? label : label + String(repeating: " ", count: 22 - label.count)
        return "  " + padded + "  " + meaning
    }

    /// `  -h, --help              Show help information`, the last line of every OPTIONS section.
    public static let helpOptionLine = helpLine("-h, --help", "Show help information")
}
