import InboxCore
import InboxSystem

/// `inboxctl verify [PATH...]`: what the agent would say about these files, without the agent.
enum VerifyCommand: InboxctlCommand {
    static let name = "verify"
    static let summary = "Check registration and configuration files"
    static let usage = "inboxctl verify [--handlers DIR]... [PATH...]"

    static let help = """
        OVERVIEW: Check registration files and configuration files without the agent.

        Each problem is printed as 'file:line: message' (a binary plist has no lines: 'file:
        key path: message'); the exit status is 1 when any file has an error. A PATH may be a
        registration (*.handler, or an Info.plist *.plist), a directory of them, defaults.conf
        or inboxd.conf. With no PATH, the handlers.d search path is checked (or the --handlers
        directories).

        USAGE: \(usage)

        OPTIONS:
          --handlers DIR          Check the registrations in DIR (repeatable)
          -h, --help              Show help information

        """

    /// The host's MIME database, so that a misspelt MIME type in ContentTypes= is noticed as the agent would.
    static var hostMIME: MIMEDatabase { MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories()).database }

    static let options = CommandOptions([.value("--handlers")], agentOptions: false, positionals: .any)

    static func run(_ parsed: ParsedOptions) -> CInt {
        let paths = parsed.positionals, directories = parsed.values("--handlers")
        if paths.isEmpty {
            // The search path of the instance inboxctl runs as: a user's own handlers.d comes first, as for their agent.
            let searchPath = directories.isEmpty
                ? AgentSettings.defaults(environment: CurrentProcess.environmentVariables, isRoot: CurrentProcess.isRoot).handlers
                : directories
            return report(RegistrationLoader.load(directories: searchPath, mime: hostMIME).diagnostics, checked: "the handlers.d search path")
        }
        var diagnostics: [Diagnostic] = []
        for path in paths {
            diagnostics += check(path)
        }
        return report(diagnostics, checked: paths.count == 1 ? paths[0] : "\(paths.count) paths")
    }

    static func check(_ path: String) -> [Diagnostic] {
        if let st = try? FileSystem.status(path), EntryKind(mode: st.st_mode) == .directory {
            return RegistrationLoader.load(directories: [path], mime: hostMIME).diagnostics
        }
        let name = lastPathComponent(path)
        if RegistrationLoader.suffixes.contains(where: { name.hasSuffix($0) }) {
            let bytes: [UInt8]
            switch RegistrationLoader.read(path) {
            case .failure(let diagnostic): return [diagnostic]
            case .success(let read): bytes = read
            }
            let parsed = RegistrationParser.parse(bytes, path: path)
            let declarations = (parsed.registration?.exportedTypes ?? []) + (parsed.registration?.importedTypes ?? [])
            let (database, typeDiagnostics) = TypeDatabase.builtin.attaching(hostMIME).adding(declarations)
            let unknown = parsed.registration.map { RegistrationLoader.unknownMIMETypes(in: $0, database: database) }
            let program = parsed.registration.flatMap { RegistrationLoader.programRefusal($0) }
            return parsed.diagnostics + typeDiagnostics + (unknown ?? []) + (program.map { [$0] } ?? [])
        }
        switch readBounded(path, limit: RegistrationParser.maximumSize) {
        case .failure(let error):
            return [Diagnostic(.error, at: SourceLocation(file: path, line: 1), error.description)]
        case .success(let bytes):
            if name == "defaults.conf" { return ConfigurationParser.parseDefaults(bytes, path: path).diagnostics }
            if name.hasSuffix(".conf") { return ConfigurationParser.parseAgent(bytes, path: path).diagnostics }
            return [Diagnostic(.error, at: SourceLocation(file: path, line: 1),
                               "not a registration (*.handler, *.plist), defaults.conf or inboxd.conf")]
        }
    }

    static func report(_ diagnostics: [Diagnostic], checked: String) -> CInt {
        for diagnostic in diagnostics { Inboxctl.write(diagnostic.description + "\n", to: 1) }
        let errors = diagnostics.filter { $0.severity == .error }.count
        if errors > 0 {
            Inboxctl.write("\(checked): \(errors) error(s)\n", to: 2)
            return 1
        }
        return 0
    }
}
