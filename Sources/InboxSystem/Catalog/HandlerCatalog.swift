import InboxCore

/// Everything the agent knows about handlers, loaded in one place and in one order — the host's MIME database, then
/// the registrations in the handlers.d search path (with the types they declare), then who each handler runs as,
/// then the administrator's preferences — and swapped whole on reload. inboxctl loads the same value, so it sees
/// exactly what the agent sees.
public final class HandlerCatalog {
    /// Whether to work out who each handler runs as (the agent does; most inboxctl commands need not).
    public enum IdentityLookup: Sendable {
        case skip
        /// As the agent would: `isRoot` picks identities of their own; they are allocated beside `containersPath`.
        case resolve(isRoot: Bool, containersPath: String)
    }

    public let loaded: LoadedRegistrations
    public let preferences: HandlerPreferences
    /// The bound drop Inboxes by path (`[Inbox] Handler=`).
    private let bindings: [String: Routing.Binding]
    /// Some document type has NamePatterns=: only then does a file's name take part (kept here, since `index` is a
    /// copy of a struct of tables, which the router asks about every file).
    public let hasNamePatterns: Bool
    /// What of libmagic the registrations' claims can use: the sniffer asks no more (ContentNeeds).
    public let contentNeeds: ContentNeeds
    public let identities: [String: Result<Identity, Identity.LookupError>]
    /// What was wrong while loading, for the journal or the terminal; none of it stopped the load.
    public let problems: [Problem]
    /// When it was loaded (the event loop's monotonic clock, or zero).
    public let loadedAt: Duration
    private let byIdentifier: [String: HandlerRegistration]
    private var chains: [String: [String]] = [:]
    /// The choice for each type no sender asked about: the same until the catalog is swapped.
    private var decisions: [String: Routing.Decision] = [:]

    /// One thing wrong with the configuration: a diagnostic of a file (with its location), or a sentence.
    public enum Problem: Sendable {
        /// A registration, defaults.conf or MIME database diagnostic.
        case diagnostic(Diagnostic)
        /// A file that could not be read (a warning), or a handler whose identity cannot be resolved (an error).
        case message(String, file: String?, severity: Diagnostic.Severity)
        /// The host's MIME database.
        case mime(String)
    }

    public var database: TypeDatabase { loaded.database }
    public var index: SelectionIndex { loaded.index }
    public var registrations: [HandlerRegistration] { loaded.registrations }

    init(loaded: LoadedRegistrations, preferences: HandlerPreferences, bindings: [String: Routing.Binding] = [:],
         identities: [String: Result<Identity, Identity.LookupError>], problems: [Problem], loadedAt: Duration) {
        self.loaded = loaded
        self.bindings = bindings
        hasNamePatterns = loaded.index.hasNamePatterns
        contentNeeds = ContentNeeds.of(loaded.registrations, in: loaded.database)
        self.preferences = preferences
        self.identities = identities
        self.problems = problems
        self.loadedAt = loadedAt
        byIdentifier = Dictionary(loaded.registrations.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Loads what `settings` name: `mimeDirectories`, `handlerDirectories`, `defaultsFile`. With `view` (the agent's
    /// own, or the running agent's for inboxctl), each path a registration grants and each directory the agent
    /// writes is checked against it: one its sandbox makes read-only, hides or keeps private is a warning with the
    /// cure (`ServiceView`).
    public static func load(_ settings: AgentSettings, identities lookup: IdentityLookup = .skip,
                            view: ServiceView? = nil, at time: Duration = .zero) -> HandlerCatalog {
        var problems: [Problem] = []
        let (mime, mimeProblems) = MIMEDatabaseLoader.load(directories: settings.mimeDirectories)
        problems += mimeProblems.map { .mime($0) }
        let loaded = RegistrationLoader.load(directories: settings.handlerDirectories, mime: mime)
        let defaultSearchPath = AgentSettings.defaults(environment: CurrentProcess.environmentVariables,
                                                       isRoot: CurrentProcess.isRoot).handlers
        problems += RegistrationLoader.missingDirectoryWarnings(loaded, defaults: defaultSearchPath).map { .diagnostic($0) }
        problems += loaded.diagnostics.map { .diagnostic($0) }
        if let view {
            problems += view.diagnostics(for: loaded.registrations).map { .diagnostic($0) }
            for (finding, location) in view.findings(for: settings) {
                let text = finding.message(unit: view.unit)
                problems.append(location.map { .diagnostic(Diagnostic(.warning, at: $0, text)) }
                                ?? .message(text, file: nil, severity: .warning))
            }
        }
        var identities: [String: Result<Identity, Identity.LookupError>] = [:]
        if case .resolve(let isRoot, let containersPath) = lookup {
            identities = HandlerIdentities.resolve(loaded.registrations, isRoot: isRoot, containersPath: containersPath)
            for case let (handler, .failure(error)) in identities.sorted(by: { $0.key < $1.key }) {
                let path = loaded.registration(handler)?.path
                problems.append(.message("\(path ?? handler): \(error); deliveries to \(handler) will fail", file: path,
                                         severity: .error))
            }
        }
        let (preferences, diagnostics, problem) = Preferences.load(settings.defaultsFile)
        problems += diagnostics.map { .diagnostic($0) }
        if let problem { problems.append(.message(problem, file: settings.defaultsFile, severity: .warning)) }
        problems += InboxSection.unregisteredHandlers(settings.inboxSections,
                                                      registered: loaded.registrations.map(\.identifier))
            .map { .diagnostic($0) }
        return HandlerCatalog(loaded: loaded, preferences: preferences, bindings: settings.bindings,
                              identities: identities, problems: problems, loadedAt: time)
    }

    /// True if some drop Inbox is bound to a handler.
    public var hasBindings: Bool { !bindings.isEmpty }

    /// The binding of the drop Inbox at `path`, if it is bound.
    public func binding(forInbox path: String) -> Routing.Binding? {
        guard !bindings.isEmpty else { return nil }
        return bindings[path] ?? bindings[ConfigurationParser.normalized(path)]
    }

    /// The registration with this identifier.
    public func registration(_ identifier: String) -> HandlerRegistration? { byIdentifier[identifier] }

    /// Who the handler runs as, when that is someone in particular (nil: the agent's own user, or a lookup failed).
    public func identity(for handler: String) -> Identity? { try? identities[handler]?.get() }

    /// The type's conformance chain, the type first; computed once per type and load.
    public func conformanceChain(of type: String) -> [String] {
        if let chain = chains[type] { return chain }
        let chain = database.conformanceChain(of: type)
        chains[type] = chain
        return chain
    }

    /// Where a file goes (`Routing.decide`). What a sender asked for is decided afresh; the choice among the
    /// registrations alone is made once per type (and bound handler) and kept with the catalog, which a reload
    /// replaces whole. A file's name matters only when a name pattern matches it: without patterns in the load, the
    /// name is not looked at.
    public func decision(for subject: Routing.Subject, request: Routing.Request?) -> Routing.Decision {
        guard request == nil, !matchesNamePattern(subject.name) else {
            return Routing.decide(subject, request: request, index: index, database: database, preferences: preferences)
        }
        let key = subject.binding.map { $0.handler + "\u{0}" + subject.type } ?? subject.type
        if let known = decisions[key] { return known }
        let decision = Routing.decide(Routing.Subject(type: subject.type, binding: subject.binding), request: nil,
                                      index: index, database: database, preferences: preferences)
        decisions[key] = decision
        return decision
    }

    /// Where a file of `type` goes when neither its name nor its Inbox can matter (no bound Inbox, no NamePatterns= in
    /// the load): the per-type cache, with no subject to build per file.
    public func decision(for type: String, request: Routing.Request?) -> Routing.Decision {
        if request == nil, let known = decisions[type] { return known }
        let decision = Routing.decide(Routing.Subject(type: type), request: request, index: index, database: database,
                                      preferences: preferences)
        if request == nil { decisions[type] = decision }
        return decision
    }

    /// True if some document type's NamePatterns= matches the name.
    private func matchesNamePattern(_ name: String?) -> Bool {
        guard let name, hasNamePatterns else { return false }
        return index.anyPatternMatches(lowercased: name.lowercased())
    }

    /// The ranked candidates for a file, as the agent chooses (the "Open In" list; with a binding, its handler only).
    public func candidates(for subject: Routing.Subject, role: HandlerRole? = nil) -> Selection {
        Routing.select(subject, index: index, database: database, preferences: preferences, ranking: .all, role: role)
    }

    /// The ranked candidates for a type, by type alone.
    public func candidates(for type: String, role: HandlerRole? = nil) -> Selection {
        candidates(for: Routing.Subject(type: type), role: role)
    }

    /// "/etc/inboxd/handlers.d, /run/inboxd/handlers.d (missing)": where registrations were looked for.
    public var searchedDescription: String {
        guard !loaded.searched.isEmpty else { return "no directories" }
        return loaded.searched.map { loaded.missingDirectories.contains($0) ? "\($0) (missing)" : $0 }
            .joined(separator: ", ")
    }

    /// Writes each problem to the journal: registration errors with CONFIG_FILE=, CONFIG_LINE= (or CONFIG_POSITION=
    /// for a binary Info.plist, which has no lines), then one summary entry.
    public func report(to logger: Logger) {
        for problem in problems {
            switch problem {
            case .mime(let text):
                logger.log(.warning, "MIME database: \(text)")
            case .diagnostic(let diagnostic):
                let location = diagnostic.location
                logger.log(diagnostic.severity == .error ? .error : diagnostic.severity == .notice ? .notice : .warning,
                           diagnostic.description,
                           event: .registrationError, fields: [
                    "CONFIG_FILE": location.file, "CONFIG_LINE": location.line > 0 ? String(location.line) : nil,
                    "CONFIG_POSITION": location.position.flatMap { $0.isEmpty ? nil : $0 }])
            case .message(let text, let file, let severity):
                logger.log(severity == .error ? .error : .warning, text, event: .registrationError,
                           fields: ["CONFIG_FILE": file])
            }
        }
        logger.log(.info, "Loaded \(loaded.registrations.count) registration(s), \(loaded.rejected.count) rejected, "
                   + "\(loaded.masked.count) masked, from \(searchedDescription)", event: .registrationsLoaded, fields: [
            "INBOX_HANDLERS": loaded.registrations.map(\.identifier).joined(separator: " "),
            "INBOX_HANDLER_DIRECTORIES": loaded.searched.joined(separator: " "),
            "INBOX_REJECTED": loaded.rejected.isEmpty ? nil : loaded.rejected.joined(separator: " ")])
    }
}
