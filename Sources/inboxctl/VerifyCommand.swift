import InboxCore
import InboxSystem

/// `inboxctl verify [PATH...]`: what the agent would say about these files, without the agent.
enum VerifyCommand: InboxctlCommand {
    static let name = "verify"
    static let summary = "Check registration and configuration files"
    static let usage = "inboxctl verify [--handlers DIR]... [--runtime-dir DIR] [--strict] [--json] [PATH...]"

    static let help = """
        OVERVIEW: Check registration files and configuration files without the agent.

        Each problem is printed as 'file:line: message' (a binary plist has no lines: 'file:
        key path: message'), then, when no file has an error, one line: 'N registrations, M
        warnings'. The exit status is 1 when any file has an error, or with --strict a warning
        (an unknown key, a content type no type declares: what the agent loads anyway; a path
        ReadWritePaths= grants, or a directory inboxd.conf names, that the running agent's sandbox
        makes read-only, hides or keeps private, with the drop-in that cures it). A PATH
        may be a registration (*.handler, an Info.plist *.plist, or a bundle NAME.app or
        NAME.bundle), a directory of them, defaults.conf or inboxd.conf. With no PATH, the
        handlers.d search path is checked (or the --handlers directories).

        USAGE: \(usage)

        OPTIONS:
          --handlers DIR          Check the registrations in DIR (repeatable)
          --runtime-dir DIR       The running agent whose sandbox paths are checked against (the
                                  instance's by default: /run/inboxd for root)
          --strict                Fail on warnings too (for CI and configuration management)
          --json                  Print one JSON document: every problem, with its file and line
          -h, --help              Show help information

        """

    /// The host's MIME database, so that a misspelt MIME type in ContentTypes= is noticed as the agent would.
    static var hostMIME: MIMEDatabase { MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories()).database }

    static let options = CommandOptions([.value("--handlers"), .value("--runtime-dir"), .flag("--strict"), .flag("--json")],
                                        agentOptions: false,
                                        positionals: .any)

    /// What was checked: the problems found, and how many registrations (that load) and configuration files.
    struct Checked {
        var diagnostics: [Diagnostic] = []
        var registrations = 0
        var configurationFiles = 0

        static func += (left: inout Checked, right: Checked) {
            left.diagnostics += right.diagnostics
            left.registrations += right.registrations
            left.configurationFiles += right.configurationFiles
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        let paths = parsed.positionals, directories = parsed.values("--handlers")
        let runtime = parsed.value("--runtime-dir") ?? instanceRuntime
        let strict = parsed.flag("--strict"), json = parsed.flag("--json")
        if paths.isEmpty {
            // The search path of the instance inboxctl runs as: a user's own handlers.d comes first, as for their agent.
            let defaults = AgentSettings.defaults(environment: CurrentProcess.environmentVariables,
                                                  isRoot: CurrentProcess.isRoot).handlers
            let searchPath = directories.isEmpty ? defaults : directories
            let loaded = RegistrationLoader.load(directories: searchPath, mime: hostMIME)
            let missing = RegistrationLoader.missingDirectoryWarnings(loaded, defaults: defaults)
            let sandbox = sandboxDiagnostics(loaded.registrations, runtime: runtime)
            let checked = Checked(diagnostics: missing + loaded.diagnostics + sandbox,
                                  registrations: loaded.registrations.count)
            return report(checked, checked: "the handlers.d search path", strict: strict, json: json)
        }
        var checked = Checked()
        for path in paths {
            checked += check(path, handlers: directories, runtime: runtime)
        }
        return report(checked, checked: paths.count == 1 ? paths[0] : "\(paths.count) paths", strict: strict, json: json)
    }

    static func check(_ path: String, handlers: [String] = [], runtime: String = instanceRuntime) -> Checked {
        let name = lastPathComponent(path)
        let isBundle = RegistrationBundle.isBundleName(name) && RegistrationBundle.isDirectory(path)
        if !isBundle, let st = try? FileSystem.status(path), EntryKind(mode: st.st_mode) == .directory {
            let loaded = RegistrationLoader.load(directories: [path], mime: hostMIME)
            return Checked(diagnostics: loaded.diagnostics + sandboxDiagnostics(loaded.registrations, runtime: runtime),
                           registrations: loaded.registrations.count)
        }
        if isBundle || RegistrationLoader.suffixes.contains(where: { name.hasSuffix($0) }) {
            let parsed: RegistrationFile
            switch RegistrationLoader.parse(path) {
            case .failure(let diagnostic): return Checked(diagnostics: [diagnostic])
            case .success(let file): parsed = file
            }
            let declarations = (parsed.registration?.exportedTypes ?? []) + (parsed.registration?.importedTypes ?? [])
            let (database, typeDiagnostics) = TypeDatabase.builtin.attaching(hostMIME).adding(declarations)
            let unknown = parsed.typeReferences.unknownClaims(in: database)
            let program = parsed.registration.flatMap { RegistrationLoader.programRefusal($0) }
                ?? parsed.registration.flatMap { RegistrationLoader.unitRefusal($0) }
            var registrations = parsed.registration.map { [$0] } ?? []
            let claims = ClaimResolver.resolve(&registrations, database: database,
                                               alreadyReported: parsed.typeReferences.unknownIdentifiers(in: database)).diagnostics
            let printer = parsed.registration.flatMap(printerDiagnostic)
            let sandbox = program == nil ? sandboxDiagnostics(registrations, runtime: runtime) : []
            let diagnostics = parsed.diagnostics + typeDiagnostics + unknown + claims + (program.map { [$0] } ?? [])
                + (printer.map { [$0] } ?? []) + sandbox
            let loads = parsed.registration != nil && program == nil && !diagnostics.contains(where: \.isError)
            return Checked(diagnostics: diagnostics, registrations: loads ? 1 : 0)
        }
        let diagnostics: [Diagnostic]
        switch readBounded(path, limit: RegistrationParser.maximumSize) {
        case .failure(let error):
            return Checked(diagnostics: [Diagnostic(.error, at: SourceLocation(file: path, line: 1), error.description)])
        case .success(let bytes):
            if name == "defaults.conf" {
                diagnostics = ConfigurationParser.parseDefaults(bytes, path: path).diagnostics
            } else if name.hasSuffix(".conf") {
                diagnostics = agentDiagnostics(bytes, path: path, handlers: handlers, runtime: runtime)
            } else {
                return Checked(diagnostics: [Diagnostic(.error, at: SourceLocation(file: path, line: 1),
                                                        "not a registration (*.handler, *.plist), defaults.conf or inboxd.conf")])
            }
        }
        return Checked(diagnostics: diagnostics, configurationFiles: 1)
    }

    /// The runtime directory of the instance inboxctl runs as (the system's for root): where its agent says its PID.
    static var instanceRuntime: String {
        AgentSettings.defaults(environment: CurrentProcess.environmentVariables, isRoot: CurrentProcess.isRoot).runtime
    }

    /// What the running agent's sandbox does to the paths these registrations grant (ReadWritePaths=): a warning per
    /// path it makes read-only, hides or keeps private (its handlers run inside it), with the cure; a notice once when
    /// there is no agent to ask or its view cannot be read.
    static func sandboxDiagnostics(_ registrations: [HandlerRegistration], runtime: String) -> [Diagnostic] {
        let granting = registrations.filter { !$0.readWritePaths.isEmpty && $0.unit == nil }
        guard let first = granting.first else { return [] }
        switch AgentView.find(runtime: runtime) {
        case .success(let view):
            return view.diagnostics(for: granting)
        case .failure(let why):
            let location = first.readWritePathLocations[first.readWritePaths[0]] ?? SourceLocation(file: first.path, line: 1)
            return [Diagnostic(.notice, at: location, "ReadWritePaths= not checked against the agent's sandbox: \(why)")]
        }
    }

    /// The same for the directories inboxd.conf names for the agent to write (drop Inboxes, StateDirectory=).
    static func sandboxDiagnostics(_ configuration: AgentConfiguration, path: String, runtime: String) -> [Diagnostic] {
        guard !configuration.inboxes.isEmpty || !configuration.inboxSections.isEmpty
                || configuration.stateDirectory != nil else { return [] }
        switch AgentView.find(runtime: runtime) {
        case .success(let view):
            return view.findings(for: configuration).map { finding, location in
                Diagnostic(.warning, at: location ?? SourceLocation(file: path, line: 1), finding.message(unit: view.unit))
            }
        case .failure(let why):
            return [Diagnostic(.notice, at: SourceLocation(file: path, line: 1),
                               "directories not checked against the agent's sandbox: \(why)")]
        }
    }

    /// A `Print=` destination the CUPS server does not know, or one that is stopped or refuses jobs: a warning at its
    /// line (it may be added or started later, and the hot folder waits for it); a server that does not answer (it
    /// may not run where the registration is written), a notice.
    static func printerDiagnostic(_ registration: HandlerRegistration) -> Diagnostic? {
        guard let printer = registration.printer, let line = registration.printerLine else { return nil }
        let location = SourceLocation(file: registration.path, line: line)
        switch PrintDestination.find(printer.description) {
        case .success(let destination):
            guard let problem = destination.checkReady() else { return nil }
            return Diagnostic(.warning, at: location, "Print=\(printer): \(problem); files wait until it takes jobs")
        case .failure(.unreachable(let message)):
            return Diagnostic(.notice, at: location, "Print=\(printer) not checked: no CUPS server answers (\(message))")
        case .failure(let error):
            return Diagnostic(.warning, at: location, "Print=\(printer): \(error) on the CUPS server; `lpstat -e` lists "
                              + "the destinations")
        }
    }

    /// inboxd.conf's diagnostics, and a warning for each [Inbox] bound to a handler that its search path (--handlers,
    /// its HandlersDirectory=, or the instance's) does not register.
    static func agentDiagnostics(_ bytes: [UInt8], path: String, handlers: [String], runtime: String) -> [Diagnostic] {
        let (configuration, parsed) = ConfigurationParser.parseAgent(bytes, path: path)
        let diagnostics = parsed + sandboxDiagnostics(configuration, path: path, runtime: runtime)
        guard configuration.inboxSections.contains(where: { $0.handler != nil }) else { return diagnostics }
        let searchPath = !handlers.isEmpty ? handlers
            : !configuration.handlerDirectories.isEmpty ? configuration.handlerDirectories
            : AgentSettings.defaults(environment: CurrentProcess.environmentVariables, isRoot: CurrentProcess.isRoot).handlers
        let registered = RegistrationLoader.load(directories: searchPath, mime: hostMIME).registrations.map(\.identifier)
        return diagnostics + InboxSection.unregisteredHandlers(configuration.inboxSections, registered: registered)
    }

    /// Prints the problems, each file's in line order, then one line: the count of problems that fail (on stderr) or
    /// what was checked (on stdout). Warnings fail only with `strict`; notices never do.
    static func report(_ checked: Checked, checked what: String, strict: Bool, json: Bool) -> CInt {
        let diagnostics = inLineOrder(checked.diagnostics)
        let errors = diagnostics.filter { $0.severity == .error }.count
        let warnings = diagnostics.filter { $0.severity == .warning }.count
        let notices = diagnostics.count - errors - warnings
        let failed = errors > 0 || (strict && warnings > 0)
        if json {
            Inboxctl.write(JSONText.object([
                ("checked", JSON.quote(what)), ("registrations", String(checked.registrations)),
                ("errors", String(errors)), ("warnings", String(warnings)), ("notices", String(notices)),
                ("strict", String(strict)),
                ("diagnostics", "[" + diagnostics.map(jsonObject).joined(separator: ",") + "]"),
            ]) + "\n", to: 1)
            return failed ? 1 : 0
        }
        for diagnostic in diagnostics { Inboxctl.write(diagnostic.description + "\n", to: 1) }
        if errors > 0 {
            Inboxctl.write("\(what): \(errors) error(s)\n", to: 2)
            return 1
        }
        if failed {
            Inboxctl.write("\(what): \(counted(warnings, "warning")), which fail under --strict\n", to: 2)
            return 1
        }
        var summary: [String] = []
        if checked.registrations > 0 || checked.configurationFiles == 0 {
            summary.append(counted(checked.registrations, "registration"))
        }
        if checked.configurationFiles > 0 { summary.append(counted(checked.configurationFiles, "configuration file")) }
        summary.append(counted(warnings, "warning"))
        if notices > 0 { summary.append(counted(notices, "notice")) }
        Inboxctl.write(summary.joined(separator: ", ") + "\n", to: 1)
        return 0
    }

    /// "1 warning", "2 warnings".
    static func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// Each file's problems by line, files in the order they were checked (each check reports its own kinds in turn:
    /// the parser's, then the types', then the claims').
    static func inLineOrder(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        var order: [String: Int] = [:]
        for diagnostic in diagnostics where order[diagnostic.location.file] == nil {
            order[diagnostic.location.file] = order.count
        }
        return diagnostics.enumerated().sorted { a, b in
            let (fileA, fileB) = (order[a.element.location.file]!, order[b.element.location.file]!)
            if fileA != fileB { return fileA < fileB }
            if a.element.location.line != b.element.location.line { return a.element.location.line < b.element.location.line }
            return a.offset < b.offset
        }.map(\.element)
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
