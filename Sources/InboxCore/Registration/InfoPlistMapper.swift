/// Walks an Info.plist's top-level dict the way LaunchServices reads one: forgiving, entry by entry.
///
/// `InboxdHandler` becomes the [Handler] section that `RegistrationParser.build` reads, with the `.handler` rules
/// (its errors are errors: it is written for inboxd). Apple's keys become document types and type declarations
/// directly: a bad item or entry there is a warning naming its key path (`CFBundleDocumentTypes[3]
/// .LSItemContentTypes[0]`), and is skipped or, where the fix is plain, repaired (whitespace trimmed, a type's
/// conformance to itself dropped). Only a file with no command, or whose document types are all unusable, is broken.
///
/// Each entry keeps the line of its value (XML). A binary file has no lines: each entry gets an ordinal instead,
/// and `sink.positions` maps it to the key path, which is what its diagnostics then show.
struct InfoPlistMapper {
    var sink: DiagnosticSink
    /// True when InboxdHandler or its Exec was reported as wrong, so `build` need not also call Exec missing.
    private(set) var execReported = false
    /// `InboxdHandler` → `BuildSettings`.
    var settings = BuildSettings()
    /// The file's (or bundle's) name without its suffix: the identifier when none is given.
    let stem: String
    /// The bundle the Info.plist is in, if it is in one.
    let bundle: InfoPlistBundle?
    private var nextOrdinal = 1

    /// What the walk found, for `RegistrationParser.build`.
    var types = InfoPlistTypes()

    init(path: String, stem: String? = nil, bundle: InfoPlistBundle? = nil) {
        sink = DiagnosticSink(path: path)
        self.stem = stem ?? RegistrationParser.stem(of: path)
        self.bundle = bundle
    }

    /// The [Handler] section; document types and declarations are left in `types`.
    mutating func sections(_ entries: [PropertyListEntry], root: PropertyListLocation) -> [INISection] {
        let rootLine = line(root, "")
        var handler = INISection(name: "Handler", line: rootLine, entries: [])
        var inboxd = HandlerOverrides()
        if let entry = entries.last(where: { $0.key == "InboxdHandler" }) { inboxd = readSettings(entry.value) }
        var apple: [String: (text: String, line: Int)] = [:]
        var documentTypesEntry: PropertyListEntry?
        for entry in entries {
            let key = entry.key
            switch key {
            case "CFBundleIdentifier", "CFBundleName", "CFBundleDisplayName", "CFBundleExecutable":
                if key == "CFBundleIdentifier" && inboxd.identifier != nil { continue }
                if key != "CFBundleIdentifier" && key != "CFBundleExecutable" && inboxd.name != nil { continue }
                if key == "CFBundleExecutable" && (bundle == nil || inboxd.hasExec) { continue }
                let fallback = switch key {
                case "CFBundleIdentifier": "the identifier comes from the file name ('\(stem.visible)')"
                case "CFBundleExecutable": "the program is the bundle's name ('\(stem.visible)')"
                default: "the name falls back to CFBundleDisplayName, else the identifier"
                }
                guard let text = appleString(entry.value, key, otherwise: fallback) else { continue }
                let cleaned = trimmed(text, entry.value.location, key)
                if key == "CFBundleIdentifier" && !IdentifierSyntax.isValid(cleaned) {
                    warn(entry.value.location, key, "invalid identifier '\(cleaned.visible)' (use letters, digits, "
                         + "'.' and '-'): \(fallback)")
                    continue
                }
                apple[key] = (cleaned, line(entry.value.location, key))
            case "InboxdHandler":
                readHandler(entry.value, into: &handler)
            case "CFBundleDocumentTypes":
                documentTypesEntry = entry
                for (path, fields, location) in dicts(entry.value, key) {
                    if let type = documentType(fields, path, location) { types.documentTypes.append(type) }
                }
            case "UTExportedTypeDeclarations", "UTImportedTypeDeclarations":
                let exported = key == "UTExportedTypeDeclarations"
                for (path, fields, location) in dicts(entry.value, key) {
                    guard let (declaration, details) = typeDeclaration(fields, path, location, exported: exported)
                    else { continue }
                    if exported { types.exportedTypes.append(declaration) } else { types.importedTypes.append(declaration) }
                    if !details.isEmpty { types.details[declaration.identifier] = details }
                }
            default:
                if key.hasPrefix("Inboxd") {
                    warn(entry.keyLocation, key, "unknown key '\(key.visible)', ignored")
                } else if !InfoPlistKeys.topLevelIgnored.contains(key),
                          let close = Spelling.closest(to: key, among: InfoPlistKeys.topLevel) {
                    warn(entry.keyLocation, key, "unknown key '\(key.visible)', ignored; did you mean '\(close)'?")
                }
            }
        }
        if let identifier = inboxd.identifier {
            handler.entries.append(identifier)
        } else if let (text, line) = apple["CFBundleIdentifier"] {
            handler.entries.append(INIEntry(key: "Identifier", value: text, line: line, label: "CFBundleIdentifier"))
        }
        if let name = inboxd.name {
            handler.entries.append(name)
        } else if let (text, line) = apple["CFBundleName"] ?? apple["CFBundleDisplayName"] {
            handler.entries.append(INIEntry(key: "Name", value: text, line: line))
        }
        if let bundle, !inboxd.hasExec { addBundleProgram(bundle, apple["CFBundleExecutable"], rootLine, to: &handler) }
        finishDocumentTypes(documentTypesEntry, rootLine)
        markPackages()
        return [handler]
    }

    /// The bundle's program as the command: `CFBundleExecutable` (else the bundle's name) in Contents/MacOS or
    /// beside the Info.plist, with `%f` appended.
    private mutating func addBundleProgram(_ bundle: InfoPlistBundle, _ executable: (text: String, line: Int)?,
                                           _ rootLine: Int, to handler: inout INISection) {
        let name = executable?.text ?? stem
        let line = executable?.line ?? rootLine
        guard !name.contains("/"), name != ".", name != "..", let program = bundle.programs[name] else {
            sink.error(line, "no command: the bundle has no program '\(name.visible)' in Contents/MacOS or beside "
                       + "its Info.plist (CFBundleExecutable), and InboxdHandler gives no Exec")
            execReported = true
            return
        }
        handler.entries.append(INIEntry(key: "Exec", value: Self.quoted(program) + " %f", line: line,
                                        label: "CFBundleExecutable"))
    }

    /// A CFBundleDocumentTypes with entries of which none is usable leaves the handler nothing to open: an error.
    /// None at all is only a warning (a registration may declare types and open none).
    private mutating func finishDocumentTypes(_ entry: PropertyListEntry?, _ rootLine: Int) {
        guard let entry else {
            sink.warning(rootLine, "no CFBundleDocumentTypes: this handler opens no files")
            return
        }
        guard types.documentTypes.isEmpty, case .array(let items) = entry.value.value else { return }
        if !items.isEmpty {
            sink.error(line(entry.value.location, entry.key), message(entry.value.location, entry.key,
                "no usable document type: each of the \(items.count) entries was skipped"))
        } else {
            sink.warning(rootLine, "no CFBundleDocumentTypes: this handler opens no files")
        }
    }

    /// What InboxdHandler says before the rest is read: the build settings, and Identifier and Name (which win
    /// over CFBundleIdentifier and CFBundleName).
    private mutating func readSettings(_ node: PropertyListNode) -> HandlerOverrides {
        var overrides = HandlerOverrides()
        guard case .dict(let entries) = node.value else { return overrides }
        for entry in entries {
            let path = "InboxdHandler." + entry.key
            switch entry.key {
            case "BuildSettings":
                guard case .dict(let values) = entry.value.value else {
                    warn(entry.value.location, path, "must be a dict of strings, not \(entry.value.value.kind): ignored")
                    continue
                }
                for value in values {
                    guard case .string(let text) = value.value.value else {
                        warn(value.value.location, path + "." + value.key,
                             "must be a string, not \(value.value.value.kind): ignored")
                        continue
                    }
                    settings.values[value.key] = text
                }
            case "Identifier", "Name":
                guard let text = handlerValue(entry.value, entry.key, path) else { continue }
                let converted = INIEntry(key: entry.key, value: text, line: line(entry.value.location, path), label: path)
                if entry.key == "Identifier" { overrides.identifier = converted } else { overrides.name = converted }
            case "Exec", "Unit", "Print":
                // Each stands in for the bundle's program.
                overrides.hasExec = true
            default:
                continue
            }
        }
        return overrides
    }

    /// InboxdHandler: the [Handler] keys with the `.handler` meaning (Identifier and Name are taken by `readSettings`).
    private mutating func readHandler(_ node: PropertyListNode, into handler: inout INISection) {
        guard case .dict(let entries) = node.value else {
            sink.error(line(node.location, "InboxdHandler"), message(node.location, "InboxdHandler",
                                                                    "must be a dict, not \(node.value.kind)"))
            execReported = true
            return
        }
        for entry in entries {
            let key = entry.key
            let path = "InboxdHandler." + key
            if key == "Identifier" || key == "Name" || key == "BuildSettings" {
                continue
            } else if RegistrationParser.handlerKeys.contains(key) {
                if let text = handlerValue(entry.value, key, path) {
                    handler.entries.append(INIEntry(key: key, value: text, line: line(entry.value.location, path)))
                } else if key == "Exec" {
                    execReported = true
                }
            } else if !key.hasPrefix("X-") {
                let close = Spelling.closest(to: key, among: RegistrationParser.handlerKeys.union(["BuildSettings"]))
                warn(entry.keyLocation, path, "unknown key '\(key.visible)' in InboxdHandler, ignored"
                     + (close.map { "; did you mean '\($0)'?" } ?? ""))
            }
        }
    }

    /// The dicts of an array of dicts, each with its key path; anything else is reported and skipped.
    mutating func dicts(_ node: PropertyListNode,
                        _ key: String) -> [(String, [PropertyListEntry], PropertyListLocation)] {
        guard case .array(let items) = node.value else {
            warn(node.location, key, "must be an array of dicts, not \(node.value.kind): ignored")
            return []
        }
        var result: [(String, [PropertyListEntry], PropertyListLocation)] = []
        for (index, item) in items.enumerated() {
            let path = "\(key)[\(index)]"
            guard case .dict(let fields) = item.value else {
                warn(item.location, path, "must be a dict, not \(item.value.kind): entry skipped")
                continue
            }
            result.append((path, fields, item.location))
        }
        return result
    }

    /// The line an entry or section made from `location` gets: its own in XML, or a new ordinal for `keyPath`.
    mutating func line(_ location: PropertyListLocation, _ keyPath: String) -> Int {
        if let line = location.line { return line }
        let ordinal = nextOrdinal
        nextOrdinal += 1
        sink.positions[ordinal] = keyPath
        return ordinal
    }

    /// A message that names its key path: before the text in XML (`file:12: CFBundleDocumentTypes[0]: ...`); in a
    /// binary file the location already is the key path.
    func message(_ location: PropertyListLocation, _ keyPath: String, _ text: String) -> String {
        location.line == nil || keyPath.isEmpty ? text : keyPath + ": " + text
    }

    mutating func warn(_ location: PropertyListLocation, _ keyPath: String, _ text: String) {
        sink.warning(line(location, keyPath), message(location, keyPath, text))
    }

    mutating func notice(_ location: PropertyListLocation, _ keyPath: String, _ text: String) {
        sink.notice(line(location, keyPath), message(location, keyPath, text))
    }
}

/// What InboxdHandler says about the keys Apple's also give.
private struct HandlerOverrides {
    var identifier: INIEntry?
    var name: INIEntry?
    var hasExec = false
}

/// The bundle an Info.plist came in (`NAME.app/` or `NAME.bundle/` in handlers.d): the programs that
/// `CFBundleExecutable` may name, found by the system layer in Contents/MacOS and beside the Info.plist.
public struct InfoPlistBundle: Sendable {
    /// The bundle directory's path.
    public var path: String
    /// Program name → absolute path; Contents/MacOS is looked in first.
    public var programs: [String: String]

    public init(path: String, programs: [String: String]) {
        self.path = path
        self.programs = programs
    }

    /// The bundle's name without `.app` or `.bundle`.
    public var stem: String {
        let name = lastPathComponent(path)
        for suffix in [".app", ".bundle"] where name.hasSuffix(suffix) { return String(name.dropLast(suffix.count)) }
        return name
    }
}

/// The document types and type declarations an Info.plist maps to, read without the INI detour.
struct InfoPlistTypes: Sendable {
    var documentTypes: [DocumentType] = []
    var exportedTypes: [TypeDeclaration] = []
    var importedTypes: [TypeDeclaration] = []
    /// What the declarations say that the type database keeps no field for, by identifier.
    var details: [String: TypeDetails] = [:]
}
