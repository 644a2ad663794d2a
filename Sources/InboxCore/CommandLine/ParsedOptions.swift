/// The options and arguments of one command line, as `CommandOptions.scan` found them.
public struct ParsedOptions: Equatable, Sendable {
    /// One option as given: its first name, and its value (nil for a flag).
    public struct Given: Equatable, Sendable {
        public let name: String
        public let value: String?

        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    public internal(set) var positionals: [String] = []
    /// The words after `--`, for a command whose positionals are `.passthrough`.
    public internal(set) var passthrough: [String] = []
    /// Every option given, declared or the agent's, in command-line order.
    public internal(set) var given: [Given] = []
    private let declared: Set<String>
    private let agentOptions: Set<AgentOption>

    init(declared: Set<String>, agentOptions: Set<AgentOption>) {
        self.declared = declared
        self.agentOptions = agentOptions
    }

    /// Whether the option was given.
    public func flag(_ name: String) -> Bool {
        precondition(declared.contains(name), "'\(name)' is not a declared option (use its first name)")
        return given.contains { $0.name == name }
    }

    /// The option's value, the last one when it was given more than once.
    public func value(_ name: String) -> String? {
        values(name).last
    }

    /// Every value given to the option, in order.
    public func values(_ name: String) -> [String] {
        precondition(declared.contains(name), "'\(name)' is not a declared option (use its first name)")
        return given.filter { $0.name == name }.compactMap(\.value)
    }

    /// Every value given to one of the agent's options, in order; empty when the command does not take it as the
    /// agent's (it does not accept it, or declares an option of that name itself).
    public func values(_ option: AgentOption) -> [String] {
        guard agentOptions.contains(option) else { return [] }
        return given.filter { $0.name == option.name }.compactMap(\.value)
    }

    /// The agent's option's value, the last one when it was given more than once.
    public func value(_ option: AgentOption) -> String? {
        values(option).last
    }
}
