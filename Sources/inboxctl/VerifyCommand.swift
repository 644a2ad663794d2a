import InboxCore
import InboxSystem

/// `inboxctl verify [PATH...]`: what the agent would say about these files, without the agent.
enum VerifyCommand: InboxctlCommand {
    static let name = "verify"
    static let summary = "Check registration and configuration files"
    static let usage = "inboxctl verify [--handlers DIR]... [--json] [PATH...]"

    static let help = """
        OVERVIEW: Check registration files and configuration files without the agent.

        Each problem is printed as 'file:line: message' (a binary plist has no lines: 'file:
        key path: message'); the exit status is 1 when any file has an error. A PATH may be a
        registration (*.handler, an Info.plist *.plist, or a bundle NAME.app or NAME.bundle), a
        directory of them, defaults.conf or inboxd.conf. With no PATH, the handlers.d search path is checked (or the --handlers
        directories).

        USAGE: \(usage)

        OPTIONS:
          --handlers DIR          Check the registrations in DIR (repeatable)
          --json                  Print one JSON document: every problem, with its file and line
          -h, --help              Show help information

        """

    /// The host's MIME database, so that a misspelt MIME type in ContentTypes= is noticed as the agent would.
    static var hostMIME: MIMEDatabase { MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories()).database }

    static let options = CommandOptions([.value("--handlers"), .flag("--json")], agentOptions: false, positionals: .any)

    static func run(_ parsed: ParsedOptions) -> CInt {
        let paths = parsed.positionals, directories = parsed.values("--handlers")
        if paths.isEmpty {
            // The search path of the instance inboxctl runs as: a user's own handlers.d comes first, as for their agent.
            let defaults = AgentSettings.defaults(environment: CurrentProcess.environmentVariables,
                                                  isRoot: CurrentProcess.isRoot).handlers
            let searchPath = directories.isEmpty ? defaults : directories
            let loaded = RegistrationLoader.load(directories: searchPath, mime: hostMIME)
            let missing = RegistrationLoader.missingDirectoryWarnings(loaded, defaults: defaults)
            return report(missing + loaded.diagnostics, checked: "the handlers.d search path", json: parsed.flag("--json"))
        }
        var diagnostics: [Diagnostic] = []
        for path in paths {
            diagnostics += check(path, handlers: directories)
        }
        return report(diagnostics, checked: paths.count == 1 ? paths[0] : "\(paths.count) paths", json: parsed.flag("--json"))
    }

    static func check(_ path: String, handlers: [String] = []) -> [Diagnostic] {
        let name = lastPathComponent(path)
        let isBundle = RegistrationBundle.isBundleName(name) && RegistrationBundle.isDirectory(path)
        if !isBundle, let st = try? FileSystem.status(path), EntryKind(mode: st.st_mode) == .directory {
            return RegistrationLoader.load(directories: [path], mime: hostMIME).diagnostics
        }
        if isBundle || RegistrationLoader.suffixes.contains(where: { name.hasSuffix($0) }) {
            let parsed: RegistrationFile
            switch RegistrationLoader.parse(path) {
            case .failure(let diagnostic): return [diagnostic]
            case .success(let file): parsed = file
            }
            let declarations = (parsed.registration?.exportedTypes ?? []) + (parsed.registration?.importedTypes ?? [])
            let (database, typeDiagnostics) = TypeDatabase.builtin.attaching(hostMIME).adding(declarations)
            let unknown = parsed.typeReferences.unknownClaims(in: database)
            let program = parsed.registration.flatMap { RegistrationLoader.programRefusal($0) }
            var registrations = parsed.registration.map { [$0] } ?? []
            let claims = ClaimResolver.resolve(&registrations, database: database,
                                               alreadyReported: parsed.typeReferences.unknownIdentifiers(in: database)).diagnostics
            return parsed.diagnostics + typeDiagnostics + unknown + claims + (program.map { [$0] } ?? [])
        }
        switch readBounded(path, limit: RegistrationParser.maximumSize) {
        case .failure(let error):
            return [Diagnostic(.error, at: SourceLocation(file: path, line: 1), error.description)]
        case .success(let bytes):
            if name == "defaults.conf" { return ConfigurationParser.parseDefaults(bytes, path: path).diagnostics }
            if name.hasSuffix(".conf") { return agentDiagnostics(bytes, path: path, handlers: handlers) }
            return [Diagnostic(.error, at: SourceLocation(file: path, line: 1),
                               "not a registration (*.handler, *.plist), defaults.conf or inboxd.conf")]
        }
    }

    /// inboxd.conf's diagnostics, and a warning for each [Inbox] bound to a handler that its search path (--handlers,
    /// its HandlersDirectory=, or the instance's) does not register.
    static func agentDiagnostics(_ bytes: [UInt8], path: String, handlers: [String]) -> [Diagnostic] {
        let (configuration, diagnostics) = ConfigurationParser.parseAgent(bytes, path: path)
        guard configuration.inboxSections.contains(where: { $0.handler != nil }) else { return diagnostics }
        let searchPath = !handlers.isEmpty ? handlers
            : !configuration.handlerDirectories.isEmpty ? configuration.handlerDirectories
            : AgentSettings.defaults(environment: CurrentProcess.environmentVariables, isRoot: CurrentProcess.isRoot).handlers
        let registered = RegistrationLoader.load(directories: searchPath, mime: hostMIME).registrations.map(\.identifier)
        return diagnostics + InboxSection.unregisteredHandlers(configuration.inboxSections, registered: registered)
    }

    static func report(_ diagnostics: [Diagnostic], checked: String, json: Bool) -> CInt {
        let errors = diagnostics.filter { $0.severity == .error }.count
        if json {
            Inboxctl.write(JSONText.object([
                ("checked", JSON.quote(checked)), ("errors", String(errors)),
                ("warnings", String(diagnostics.count - errors)),
                ("diagnostics", "[" + diagnostics.map(jsonObject).joined(separator: ",") + "]"),
            ]) + "\n", to: 1)
            return errors > 0 ? 1 : 0
        }
        for diagnostic in diagnostics { Inboxctl.write(diagnostic.description + "\n", to: 1) }
        if errors > 0 {
            Inboxctl.write("\(checked): \(errors) error(s)\n", to: 2)
            return 1
        }
        return 0
    }

    /// One diagnostic: where (a line, or for a binary plist the key path), how bad, what, and the line as printed.
    static func jsonObject(_ diagnostic: Diagnostic) -> String {
        let location = diagnostic.location
        return JSONText.object([
            ("file", JSON.quote(location.file)),
            ("line", location.position == nil ? String(location.line) : "null"),
            ("position", location.position.flatMap { $0.isEmpty ? nil : JSON.quote($0) } ?? "null"),
            ("severity", JSON.quote(diagnostic.severity == .error ? "error" : "warning")),
            ("message", JSON.quote(diagnostic.message)),
            ("text", JSON.quote(diagnostic.description)),
        ])
    }
}
