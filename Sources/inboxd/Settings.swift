import InboxCore
import InboxSystem

/// Flags override the config file, which overrides the built-in defaults (SettingsResolver); problems in the
/// file are printed as `file:line: message`.
func makeSettings(_ options: AgentCommandLine) -> Result<AgentSettings, UsageError> {
    var overrides = SettingsOverrides()
    overrides.config = options.config
    overrides.inboxes = options.inboxes
    overrides.handlers = options.handlers
    overrides.state = options.state
    overrides.runtimeDirectory = options.runtimeDirectory
    overrides.defaults = options.defaults
    overrides.maxConcurrent = options.maxConcurrent
    overrides.logTarget = options.logTarget
    overrides.logLevel = options.logLevel
    let (settings, diagnostics) = SettingsResolver.resolve(overrides)
    for diagnostic in diagnostics { printError(diagnostic.description) }
    return settings.mapError { error in
        .init(message: error.invalid ? "\(error); not starting" : "\(error)")
    }
}

func printError(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    FileDescriptor.standardError.write(all: line)
}
