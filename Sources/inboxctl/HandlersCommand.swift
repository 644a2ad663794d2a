import InboxCore
import InboxSystem

/// `inboxctl handlers [FILE | --type UTI] [--json]`: the registrations in force, or the "Open In" list for a file.
enum HandlersCommand: InboxctlCommand {
    static let name = "handlers"
    static let summary = "List handlers, or those that would open a file or type"
    static let usage = "inboxctl handlers [FILE | --type UTI] [--json]"

    static let help = """
        OVERVIEW: List the registered handlers, or the handlers that would open a file or a type.

        With no argument, every registration file in the search path with its state: active, masked (a
        symlink to /dev/null) or broken (with its first error as file:line), and its document types.
        A registration whose ReadWritePaths= the running agent's sandbox makes read-only, hides or
        keeps private (its handlers run inside it) is marked, with a 'sandbox:' line and the cure.
        With FILE or --type UTI, the candidate handlers, best first: their rank, the type they matched,
        its distance from the file's type, the name pattern that matched FILE's name and whether
        defaults.conf prefers them; the chosen one is marked with '*' and the reason. A FILE in an Inbox
        bound to a handler ([Inbox] Handler= in inboxd.conf) has that handler only, if it opens it.
        With --type, the document types that claim files of the type by name are listed after.
        A FILE that is a directory is taken as a package document, typed as 'inboxctl info' does.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file whose handlers to list (opened read-only, never moved)

        OPTIONS:
          --type UTI              The handlers of a type (a UTI, a MIME type or a dyn.mime. identifier)
          --json                  Print one JSON document
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.value("--type"), .flag("--json")], agentOptions: true, positionals: .atMostOne)

    /// The usage errors that the options one by one cannot show.
    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if !parsed.positionals.isEmpty && parsed.flag("--type") {
            throw UsageError(message: "give FILE or '--type', not both")
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        let json = parsed.flag("--json")
        let file = parsed.positionals.first, type = parsed.value("--type")
        guard let settings = parsed.agent.settings() else { return 1 }
        guard file != nil || type != nil else {
            let loaded = HandlerCatalog.load(settings).loaded
            // What the running agent's sandbox does to the paths registrations grant (its handlers run inside it).
            var sandbox: [Diagnostic] = []
            var unchecked: String?
            if loaded.registrations.contains(where: { !$0.readWritePaths.isEmpty && $0.unit == nil }) {
                switch AgentView.find(runtime: settings.runtimeDirectory) {
                case .success(let view): sandbox = view.diagnostics(for: loaded.registrations)
                case .failure(let why): unchecked = why.description
                }
            }
            Inboxctl.write(json ? registrationsJSON(loaded, sandbox: sandbox)
                           : registrationsText(loaded, sandbox: sandbox) + bindingsText(settings.inboxSections, loaded)
                               + (unchecked.map { "ReadWritePaths= not checked against the agent's sandbox: \($0).\n" } ?? ""), to: 1)
            return 0
        }
        guard let inspection = Inspection(settings) else { return 1 }
        let identifier: String
        let subject: String
        var selection: Selection
        var binding: Routing.Binding?
        if let type {
            guard let known = inspection.loaded.database.knownIdentifier(type) else {
                var message = "inboxctl: unknown type '\(type)'"
                if let close = Spelling.closest(to: type, among: inspection.loaded.database.allIdentifiers) {
                    message += "; did you mean '\(close)'?"
                }
                Inboxctl.write(message + "\n", to: 2)
                return 1
            }
            identifier = known
            subject = identifier
            selection = inspection.select(identifier)
        } else if let file {
            switch inspection.inspect(file) {
            case .success(let report):
                identifier = report.resolved.identifier
                subject = "\(report.name) (\(identifier))"
                selection = inspection.select(report)
                binding = inspection.subject(of: report).binding
            case .failure(let message):
                Inboxctl.write("inboxctl: \(file): \(message)\n", to: 2)
                return 1
            }
        } else {
            return 1
        }
        let byName = type != nil ? nameClaims(of: identifier, inspection) : []
        if json {
            var pairs = [("contentType", JSON.quote(identifier))] + selectionJSONPairs(selection, inspection)
            if file != nil { pairs.append(("binding", bindingJSON(binding))) }
            if type != nil {
                pairs.append(("byName", "[" + byName.map { claim in
                    JSONText.object([("handler", JSON.quote(claim.handler)), ("documentType", JSON.quote(claim.type.name)),
                                     ("namePatterns", JSONText.array(claim.type.namePatterns.map(\.text))),
                                     ("rank", JSON.quote(claim.type.rank.name))])
                }.joined(separator: ",") + "]"))
            }
            Inboxctl.write(JSONText.object(pairs) + "\n", to: 1)
        } else {
            var text = "Handlers for \(subject):\n" + candidatesText(selection, inspection)
            if !byName.isEmpty {
                text += "By name, for files of this type named so:\n" + byName.map { claim in
                    "    \(claim.handler)  \(claim.type.namePatterns.map(\.text).joined(separator: " "))  \(claim.type.rank.name)\n"
                }.joined()
            }
            Inboxctl.write(text, to: 1)
        }
        return 0
    }

    /// The document types with NamePatterns= that files of `type` can match by name (Rank=None never opens files).
    static func nameClaims(of type: String, _ inspection: Inspection) -> [(handler: String, type: DocumentType)] {
        let chain = Set(inspection.catalog.conformanceChain(of: type))
        return inspection.loaded.registrations.flatMap { registration in
            registration.documentTypes.filter { documentType in
                !documentType.namePatterns.isEmpty && documentType.rank != .none
                    && (documentType.contentTypes.isEmpty || documentType.contentTypes.contains { chain.contains($0) })
            }.map { (registration.identifier, $0) }
        }
    }

    /// A binding as JSON, or null.
    static func bindingJSON(_ binding: Routing.Binding?) -> String {
        binding.map { JSONText.object([("inbox", JSON.quote($0.inbox)), ("handler", JSON.quote($0.handler))]) } ?? "null"
    }

    // MARK: The "Open In" list

    /// One line per candidate, aligned, the chosen one marked '*', then the reason.
    static func candidatesText(_ selection: Selection, _ inspection: Inspection) -> String {
        guard let chosen = selection.chosen else { return "  none (\(selection.reason))\n" }
        let handlerWidth = selection.candidates.map(\.handler.count).max() ?? 0
        let typeWidth = selection.candidates.map(\.matchedType.count).max() ?? 0
        var text = ""
        for (index, candidate) in selection.candidates.enumerated() {
            text += (index == 0 ? "  * " : "    ") + "\(index + 1)".padding(to: 3)
                + candidate.handler.padding(to: handlerWidth + 2) + candidate.rank.name.padding(to: 11)
                + candidate.matchedType.padding(to: typeWidth + 2) + "distance \(candidate.distance)"
                + (candidate.namePattern.map { "  name \($0)" } ?? "")
                + (candidate.preferred ? "  preferred" : "") + "\n"
        }
        return text + "  Chosen: \(chosen.handler) (\(selection.reason))\n"
    }

    /// The `candidates`, `chosen` and `reason` members of a JSON object.
    static func selectionJSONPairs(_ selection: Selection, _ inspection: Inspection) -> [(String, String)] {
        let candidates = selection.candidates.enumerated().map { index, candidate in
            JSONText.object([
                ("position", String(index + 1)),
                ("handler", JSON.quote(candidate.handler)),
                ("name", inspection.loaded.registration(candidate.handler).map { JSON.quote($0.name) } ?? "null"),
                ("documentType", JSON.quote(candidate.documentType.name)),
                ("rank", JSON.quote(candidate.rank.name)),
                ("role", JSON.quote(candidate.documentType.role.name)),
                ("matchedType", JSON.quote(candidate.matchedType)),
                ("distance", String(candidate.distance)),
                ("preferred", String(candidate.preferred)),
                ("namePattern", candidate.namePattern.map(JSON.quote) ?? "null"),
                ("chosen", String(index == 0)),
            ])
        }
        return [
            ("candidates", "[" + candidates.joined(separator: ",") + "]"),
            ("chosen", selection.chosen.map { JSON.quote($0.handler) } ?? "null"),
            ("reason", JSON.quote(selection.reason)),
        ]
    }

    // MARK: Registrations

    /// A registration file and what became of it.
    struct Entry {
        let identifier: String
        let state: String
        let path: String
        let error: String?
        let registration: HandlerRegistration?
        /// What the registration loaded despite (`file:line: message`), in line order.
        var warnings: [String] = []
        /// Paths it grants that the running agent's sandbox makes read-only, hides or keeps private.
        var sandbox: [String] = []
    }

    static func entries(_ loaded: LoadedRegistrations, sandbox: [Diagnostic] = []) -> [Entry] {
        func stem(_ path: String) -> String {
            let name = lastPathComponent(path)
            let suffixes = RegistrationLoader.suffixes + RegistrationBundle.suffixes
            guard let suffix = suffixes.first(where: { name.hasSuffix($0) }) else { return name }
            return String(name.dropLast(suffix.count))
        }
        func inFile(_ diagnostic: Diagnostic, _ path: String) -> Bool {
            diagnostic.location.file == path || diagnostic.location.file.hasPrefix(path + "/")
        }
        let warnings = loaded.diagnostics.filter { $0.severity == .warning }
        var entries = loaded.registrations.map { registration in
            Entry(identifier: registration.identifier, state: "active", path: registration.path, error: nil,
                  registration: registration, warnings: warnings.filter { inFile($0, registration.path) }
                      .sorted { $0.location.line < $1.location.line }.map { "\($0.location): \($0.message)" },
                  sandbox: sandbox.filter { inFile($0, registration.path) }.map { "\($0.location): \($0.message)" })
        }
        entries += loaded.masked.map {
            Entry(identifier: stem($0), state: "masked", path: $0, error: nil, registration: nil)
        }
        entries += loaded.rejected.map { path in
            // A bundle's diagnostics are in its Info.plist.
            let first = loaded.diagnostics.first {
                $0.isError && ($0.location.file == path || $0.location.file.hasPrefix(path + "/"))
            }
            return Entry(identifier: stem(path), state: "broken", path: path, error: first?.description,
                         registration: nil)
        }
        return entries.sorted { stem($0.path) < stem($1.path) }
    }

    static func registrationsText(_ loaded: LoadedRegistrations, sandbox: [Diagnostic] = []) -> String {
        let entries = entries(loaded, sandbox: sandbox)
        guard !entries.isEmpty else { return "No registrations.\n" }
        let width = entries.map(\.identifier.count).max() ?? 0
        var text = ""
        for entry in entries {
            text += entry.identifier.padding(to: width + 2) + entry.state.padding(to: 8) + entry.path
                + (entry.sandbox.isEmpty ? "" : "  (cannot write what it is granted: see sandbox)") + "\n"
            if let error = entry.error { text += "  error: \(error)\n" }
            for problem in entry.sandbox { text += "  sandbox: \(problem)\n" }
            for warning in entry.warnings { text += "  warning: \(warning)\n" }
            for documentType in entry.registration?.documentTypes ?? [] {
                let types = documentType.contentTypes.isEmpty ? "any type" : documentType.contentTypes.joined(separator: " ")
                let names = documentType.namePatterns.isEmpty ? ""
                    : " named " + documentType.namePatterns.map(\.text).joined(separator: " ")
                text += "  \(documentType.name): \(types)\(names) "
                    + "(\(documentType.rank.name), \(documentType.role.name)\(documentType.isPackage ? ", package" : ""))\n"
            }
        }
        return text
    }

    /// The Inboxes bound to a handler, and whether it is registered.
    static func bindingsText(_ sections: [InboxSection], _ loaded: LoadedRegistrations) -> String {
        let bound = sections.compactMap { section in section.handler.map { (section.path, $0) } }
        guard !bound.isEmpty else { return "" }
        let width = bound.map(\.0.count).max() ?? 0
        return "Inboxes bound to a handler:\n" + bound.map { path, handler in
            "  " + path.padding(to: width + 2) + handler
                + (loaded.registration(handler) == nil ? " (not registered: its files wait in unhandled/)" : "") + "\n"
        }.joined()
    }

    static func registrationsJSON(_ loaded: LoadedRegistrations, sandbox: [Diagnostic] = []) -> String {
        let objects = entries(loaded, sandbox: sandbox).map { entry in
            let documentTypes = (entry.registration?.documentTypes ?? []).map { documentType in
                JSONText.object([
                    ("name", JSON.quote(documentType.name)),
                    ("contentTypes", JSONText.array(documentType.contentTypes)),
                    ("rank", JSON.quote(documentType.rank.name)),
                    ("role", JSON.quote(documentType.role.name)),
                    ("iconFiles", JSONText.array(documentType.iconFiles)),
                    ("extensions", JSONText.array(documentType.extensions)),
                    ("namePatterns", JSONText.array(documentType.namePatterns.map(\.text))),
                    ("isPackage", String(documentType.isPackage)),
                ])
            }
            return JSONText.object([
                ("identifier", JSON.quote(entry.identifier)),
                ("name", entry.registration.map { JSON.quote($0.name) } ?? "null"),
                ("state", JSON.quote(entry.state)),
                ("path", JSON.quote(entry.path)),
                ("error", entry.error.map(JSON.quote) ?? "null"),
                ("warnings", JSONText.array(entry.warnings)),
                ("sandbox", JSONText.array(entry.sandbox)),
                ("documentTypes", "[" + documentTypes.joined(separator: ",") + "]"),
            ])
        }
        return "[" + objects.joined(separator: ",\n") + "]\n"
    }
}
