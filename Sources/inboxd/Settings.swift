import Glibc
import InboxCore
import InboxSystem

let inboxdVersion = "0.1.0"

/// Flags override the config file, which overrides the built-in defaults.
func makeSettings(_ options: AgentCommandLine) -> Result<AgentSettings, AgentCommandLine.UsageError> {
    var config = AgentConfiguration()
    let configPath = options.config ?? "/etc/inboxd/inboxd.conf"
    if options.config != nil || access(configPath, F_OK) == 0 {
        switch readBounded(configPath, limit: 1 << 20) {
        case .success(let bytes):
            let parsed = ConfigurationParser.parseAgent(bytes, path: configPath)
            let errors = parsed.diagnostics.filter { $0.severity == .error }
            for diagnostic in parsed.diagnostics { printError(diagnostic.description) }
            if !errors.isEmpty {
                return .failure(.init(message: "\(configPath): \(errors.count) error(s); not starting"))
            }
            config = parsed.configuration
        case .failure(let error):
            return .failure(.init(message: "\(configPath): \(error)"))
        }
    }
    let environment = processEnvironment()
    let defaults = AgentSettings.defaults(environment: environment, isRoot: geteuid() == 0)
    let inboxes = !options.inboxes.isEmpty ? options.inboxes : (!config.inboxes.isEmpty ? config.inboxes : [defaults.inbox])
    let handlers = !options.handlers.isEmpty ? options.handlers
        : (!config.handlerDirectories.isEmpty ? config.handlerDirectories : defaults.handlers)
    var policy = RetryPolicy()
    if let attempts = config.maxAttempts { policy.maxAttempts = attempts }
    if let delay = config.retryDelay { policy.retryDelay = delay }
    let defaultsFile = options.defaults ?? "/etc/inboxd/defaults.conf"
    var settings = AgentSettings(
        inboxes: inboxes, handlerDirectories: handlers,
        stateDirectory: options.state ?? config.stateDirectory ?? defaults.state,
        runtimeDirectory: options.runtimeDirectory ?? defaults.runtime,
        defaultsFile: defaultsFile,
        maxConcurrent: options.maxConcurrent ?? config.maxConcurrent ?? 2 * Int(sysconf(CInt(_SC_NPROCESSORS_ONLN))),
        retryPolicy: policy, defaultTimeout: config.defaultTimeoutDisabled ? nil : config.defaultTimeout ?? .seconds(300), stopTimeout: .seconds(10),
        logTarget: options.logTarget ?? .auto, logLevel: options.logLevel ?? .info)
    settings.landlock = config.landlock ?? .auto
    settings.contentSniffing = config.contentSniffing ?? true
    return .success(settings)
}

func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let text = String(cString: entry)
        if let equals = text.firstIndex(of: "=") {
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        pointer += 1
    }
    return result
}

func currentDirectory() -> String {
    var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
    let found = buffer.withUnsafeMutableBufferPointer { pointer in
        pointer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: pointer.count) { getcwd($0, pointer.count) != nil }
    }
    guard found else { return "/" }
    return String(decoding: buffer.prefix(while: { $0 != 0 }), as: UTF8.self)
}

func printError(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    let bytes = Array(line.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
