/// Parses `handlers.d/*.handler` files (systemd unit-file syntax) and `*.plist` files (Info.plist, XML or binary)
/// into registrations with file:line diagnostics.
public enum RegistrationParser {
    /// Files larger than this are rejected unread.
    public static let maximumSize = 1 << 20

    private static let knownSections: Set<String> = ["Handler", "DocumentType", "ExportedType", "ImportedType"]

    /// Parses one file; `path` is used only in diagnostics and `HandlerRegistration.path`, and its stem
    /// (the file name without ".handler" or ".plist") is the default identifier. Any error rejects the whole file.
    /// A `.plist` path or a binary property list is read as an Info.plist (see `InfoPlist`).
    /// `bundle` is the app bundle an Info.plist came in (its name is then the default identifier, and its program
    /// the default command).
    public static func parse(_ bytes: [UInt8], path: String, bundle: InfoPlistBundle? = nil) -> RegistrationFile {
        if path.hasSuffix(".plist") || PropertyList.isBinary(bytes) || bundle != nil {
            return InfoPlist.parse(bytes, path: path, bundle: bundle)
        }
        let document = INILexer.lex(bytes, path: path, maximumSize: maximumSize)
        if bytes.count > maximumSize { return RegistrationFile(registration: nil, diagnostics: document.diagnostics) }
        return build(document.sections, diagnostics: document.diagnostics, path: path)
    }

    /// Turns sections (from a `.handler` file, or made from an Info.plist) into a registration. `positions` stands
    /// in for lines in files that have none (see `DiagnosticSink`); `terms` words the messages about the whole file.
    /// An Info.plist's document types and declarations come made (`types`); its sections then hold only [Handler].
    static func build(_ sections: [INISection], diagnostics: [Diagnostic], path: String,
                      positions: [Int: String] = [:], terms: RegistrationTerms = .unit,
                      types: InfoPlistTypes? = nil) -> RegistrationFile {
        var sink = DiagnosticSink(path: path, diagnostics: diagnostics, positions: positions)
        var handler = HandlerSection()
        var documentTypes = types?.documentTypes ?? []
        var exportedTypes = types?.exportedTypes ?? []
        var importedTypes = types?.importedTypes ?? []
        for section in sections {
            switch section.name {
            case "Handler":
                handler.read(section, sink: &sink)
            case "DocumentType":
                if let type = SectionReader.readDocumentType(section, sink: &sink) { documentTypes.append(type) }
            case "ExportedType":
                if let type = SectionReader.readTypeDeclaration(section, origin: { .exported($0) }, sink: &sink) {
                    exportedTypes.append(type)
                }
            case "ImportedType":
                if let type = SectionReader.readTypeDeclaration(section, origin: { .imported($0) }, sink: &sink) {
                    importedTypes.append(type)
                }
            default:
                if !section.name.hasPrefix("X-") {
                    sink.warning(section.line, "unknown section [\(section.name)], ignored")
                }
            }
        }

        let handlerLine = handler.firstLine ?? 1
        if handler.firstLine == nil {
            sink.error(1, "missing [Handler] section")
        } else if handler.exec == nil && !handler.execInvalid && handler.unitLine == nil && handler.printerLine == nil,
                  let message = terms.missingExec {
            sink.error(handlerLine, message)
        }
        let identifier = handler.identifier ?? terms.stem ?? stem(of: path)
        if handler.identifier == nil && !IdentifierSyntax.isValid(identifier) {
            sink.error(handlerLine,
                       "file name '\(identifier.abbreviated)' is not a valid identifier; set \(terms.identifierKey)")
        }
        let hasDocumentTypeSection = sections.contains { $0.name == "DocumentType" }
        if !hasDocumentTypeSection && handler.firstLine != nil, let message = terms.noDocumentTypes {
            sink.warning(handlerLine, message)
        }

        handler.checkActivation(sink: &sink)
        handler.checkUnit(sink: &sink)
        handler.checkPrinter(sink: &sink)
        let diagnostics = sink.sorted
        let runsNoProgram = handler.unit != nil || handler.printer != nil
        guard !diagnostics.containsError, let exec = handler.exec ?? (runsNoProgram ? ExecCommand.none : nil) else {
            return RegistrationFile(registration: nil, diagnostics: diagnostics, typeReferences: sink.typeReferences)
        }
        var registration = HandlerRegistration(
            identifier: identifier, name: handler.name, exec: exec, user: handler.user, group: handler.group,
            timeout: handler.timeout, timeoutDisabled: handler.timeoutDisabled, maxConcurrent: handler.maxConcurrent,
            environment: handler.environment, documentTypes: documentTypes, exportedTypes: exportedTypes,
            importedTypes: importedTypes, path: path)
        registration.readWritePaths = handler.readWritePaths
        registration.readWritePathLocations = handler.readWritePathLocations
        registration.requiresLandlock = handler.requiresLandlock
        registration.outputLimit = handler.outputLimit
        registration.limits = HandlerLimit.Key.allCases.compactMap { handler.limits[$0] }
        registration.activation = handler.activation
        registration.instances = handler.instances
        registration.maxInFlight = handler.maxInFlight
        registration.idleExit = handler.idleExit
        registration.batchSize = exec.takesFileList ? handler.batchSize ?? HandlerRegistration.defaultBatchSize : 1
        registration.batchWindow = handler.batchWindow
        registration.unit = handler.unit
        registration.unitLine = handler.unitLine
        registration.printer = handler.printer
        registration.printerLine = handler.printerLine
        return RegistrationFile(registration: registration, diagnostics: diagnostics, typeReferences: sink.typeReferences)
    }

    /// The file name without its directory and without a ".handler" or ".plist" suffix.
    static func stem(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        for suffix in [".handler", ".plist"] where name.hasSuffix(suffix) { return String(name.dropLast(suffix.count)) }
        return name
    }

    /// The keys of [Handler], Limit*= included.
    static var handlerKeys: Set<String> { HandlerSection.keys }
}

/// How `build` words its messages about the file as a whole: in unit-file terms, or an Info.plist's.
struct RegistrationTerms: Sendable {
    /// nil when the caller has reported a bad Exec itself.
    var missingExec: String? = "missing Exec= in [Handler]"
    var identifierKey = "Identifier="
    /// nil when the caller checks for document types itself.
    var noDocumentTypes: String? = "no [DocumentType] section: this handler opens no files"
    /// The default identifier when it is not the file's stem (a bundle's name).
    var stem: String?

    static let unit = RegistrationTerms()
}

/// What the [Handler] sections of a file say; repeated [Handler] sections add up, later keys override earlier ones.
private struct HandlerSection {
    var firstLine: Int?
    var identifier: String?
    var name: String?
    var exec: ExecCommand?
    var execInvalid = false
    var user: String?
    var group: String?
    var timeout: Duration?
    var timeoutDisabled = false
    var maxConcurrent: Int?
    var environment: [String: String] = [:]
    var readWritePaths: [String] = []
    var readWritePathLocations: [String: SourceLocation] = [:]
    var requiresLandlock = false
    var outputLimit: Int64? = HandlerRegistration.defaultOutputLimit
    var limits: [HandlerLimit.Key: HandlerLimit] = [:]
    var execLine: Int?
    var activation = HandlerActivation.launch
    var instances = 1
    var maxInFlight = 16
    var idleExit: Duration? = .seconds(60)
    var batchSize: Int?
    var batchSizeLine: Int?
    var batchWindow: Duration = .zero
    var batchWindowLine: Int?
    var unit: UnitTemplate?
    var unitLine: Int?
    var printer: PrintQueue?
    var printerLine: Int?
    var activationLine: Int?
    var requireLandlockLine: Int?
    /// Keys a unit's own settings stand in for (ReadWritePaths=, OutputLimit=, Limit*=), with their lines.
    var processOnlyKeys: [(key: String, line: Int)] = []

    /// Every key `read` knows; keep in step with its switch.
    static let keys: Set<String> = Set(["Identifier", "Name", "Exec", "User", "Group", "TimeoutSec", "MaxConcurrent",
                                        "Environment", "ReadWritePaths", "RequireLandlock", "OutputLimit",
                                        "Activation", "Instances", "MaxInFlight", "IdleExitSec", "BatchSize",
                                        "BatchWindowSec", "Unit", "Print"]
                                       + HandlerLimit.Key.allCases.map(\.rawValue))

    /// What Activation= and the batch keys allow of Exec=, checked once the whole section is read: a resident
    /// instance serves many files, so a field code naming one file has nothing to stand for.
    mutating func checkActivation(sink: inout DiagnosticSink) {
        guard let exec else { return }
        let line = execLine ?? firstLine ?? 1
        if activation == .resident {
            if let code = exec.singleFileFieldCodes.first {
                sink.error(line, "%\(code) names one file, and a resident handler (Activation=resident) serves many: "
                           + "it gets each file as a message on fd 3; remove %\(code) from Exec=")
            } else if exec.takesFileList {
                sink.error(line, "%F and %U launch a process per batch; a resident handler (Activation=resident) "
                           + "gets each file as a message on fd 3: remove them from Exec=")
            }
        }
        if !exec.takesFileList {
            if let batchSizeLine { sink.warning(batchSizeLine, "BatchSize= has no effect without %F or %U in Exec=, ignored") }
            if let batchWindowLine {
                sink.warning(batchWindowLine, "BatchWindowSec= has no effect without %F or %U in Exec=, ignored")
            }
        }
    }

    /// What Unit= allows of the other keys, checked once the whole section is read: the unit's ExecStart= runs the
    /// handler, PID 1 starts it, and its sandbox and limits are the unit's own.
    mutating func checkUnit(sink: inout DiagnosticSink) {
        guard unit != nil, let line = unitLine else { return }
        if exec != nil || execInvalid {
            sink.error(execLine ?? line, "Exec= and Unit= exclude each other: the unit's ExecStart= runs the handler; "
                       + "remove Exec=")
        }
        if activation == .resident {
            sink.error(activationLine ?? line, "Activation=resident and Unit= exclude each other: each delivery starts "
                       + "an instance of the unit")
        }
        if requiresLandlock {
            sink.error(requireLandlockLine ?? line, "RequireLandlock=yes cannot hold with Unit=: the unit runs outside "
                       + "the agent's Landlock; confine it with the unit's own settings")
        }
        for (key, keyLine) in processOnlyKeys {
            sink.warning(keyLine, "\(key)= has no effect with Unit= (set it in the unit), ignored")
        }
    }

    /// What Print= allows of the other keys, checked once the whole section is read: the agent's own print job runs
    /// in place of a program, one per delivery, under the registration's identity and sandbox.
    mutating func checkPrinter(sink: inout DiagnosticSink) {
        guard printer != nil, let line = printerLine else { return }
        if exec != nil || execInvalid {
            sink.error(execLine ?? line, "Exec= and Print= exclude each other: each delivery is printed on the "
                       + "destination, and no program runs; remove Exec=")
        }
        if unit != nil {
            sink.error(unitLine ?? line, "Unit= and Print= exclude each other: remove one")
        }
        if activation == .resident {
            sink.error(activationLine ?? line, "Activation=resident and Print= exclude each other: each delivery is "
                       + "a print job of its own")
        }
        if let batchSizeLine { sink.warning(batchSizeLine, "BatchSize= has no effect with Print=, ignored") }
        if let batchWindowLine { sink.warning(batchWindowLine, "BatchWindowSec= has no effect with Print=, ignored") }
    }

    mutating func read(_ section: INISection, sink: inout DiagnosticSink) {
        if firstLine == nil { firstLine = section.line }
        for entry in section.entries {
            let value = entry.value
            switch entry.key {
            case "Identifier":
                if value.isEmpty || IdentifierSyntax.isValid(value) {
                    identifier = value.isEmpty ? nil : value
                } else {
                    sink.error(entry.line, "invalid \(entry.spelling) '\(value.abbreviated)': use letters, digits, '.' and '-'")
                }
            case "Name":
                name = value.isEmpty ? nil : value
            case "Exec":
                execLine = entry.line
                do {
                    exec = value.isEmpty ? nil : try ExecCommand(parsing: value)
                } catch {
                    sink.error(entry.line, error.message)
                    execInvalid = true
                }
            case "User":
                user = Self.account(value, key: "User", line: entry.line, sink: &sink)
            case "Group":
                group = Self.account(value, key: "Group", line: entry.line, sink: &sink)
            case "TimeoutSec":
                do {
                    timeout = value.isEmpty ? nil : try TimeSpan.parse(value)
                    timeoutDisabled = value == "infinity"
                } catch {
                    sink.error(entry.line, "invalid TimeoutSec=: \(error.message)")
                }
            case "MaxConcurrent":
                maxConcurrent = value.isEmpty ? nil : Self.positiveInteger(value, key: "MaxConcurrent", line: entry.line, sink: &sink)
            case "Environment":
                Self.readEnvironment(value, line: entry.line, into: &environment, sink: &sink)
            case "ReadWritePaths":
                if !value.isEmpty { processOnlyKeys.append((entry.key, entry.line)) }
                // Like systemd: space-separated, repeatable, an empty value clears; a leading '-' (missing is
                // fine) is accepted and dropped, since a missing path grants nothing anyway.
                if value.isEmpty { readWritePaths.removeAll() }
                for word in value.split(separator: " ") {
                    let path = word.hasPrefix("-") ? String(word.dropFirst()) : String(word)
                    if path.hasPrefix("/") && !path.utf8.contains(0) {
                        readWritePaths.append(path)
                        readWritePathLocations[path] = sink.location(entry.line)
                    } else {
                        sink.error(entry.line, "ReadWritePaths= needs absolute paths, got '\(String(word).abbreviated)'")
                    }
                }
            case "RequireLandlock":
                requireLandlockLine = entry.line
                if let flag = BooleanSyntax.parse(value) {
                    requiresLandlock = flag
                } else {
                    sink.error(entry.line, "invalid RequireLandlock= '\(value.abbreviated)': expected yes or no")
                }
            case "OutputLimit":
                if !value.isEmpty { processOnlyKeys.append((entry.key, entry.line)) }
                if value.isEmpty {
                    outputLimit = HandlerRegistration.defaultOutputLimit
                } else if let limit = HandlerRegistration.parseOutputLimit(value) {
                    outputLimit = limit
                } else {
                    sink.error(entry.line, "invalid \(entry.spelling) '\(value.abbreviated)': expected a size (64K, 1M) or infinity")
                }
            case "Activation":
                activationLine = entry.line
                if value.isEmpty {
                    activation = .launch
                } else if let parsed = HandlerActivation(rawValue: value) {
                    activation = parsed
                } else {
                    sink.error(entry.line, "invalid \(entry.spelling) '\(value.abbreviated)': expected launch or resident")
                }
            case "Instances":
                instances = value.isEmpty ? 1 : Self.positiveInteger(value, key: "Instances", line: entry.line, maximum: 64,
                                                                     sink: &sink) ?? instances
            case "MaxInFlight":
                maxInFlight = value.isEmpty ? 16 : Self.positiveInteger(value, key: "MaxInFlight", line: entry.line,
                                                                        maximum: 1024, sink: &sink) ?? maxInFlight
            case "BatchSize":
                batchSize = value.isEmpty ? nil : Self.positiveInteger(value, key: "BatchSize", line: entry.line,
                                                                       maximum: 4096, sink: &sink)
                batchSizeLine = value.isEmpty ? nil : entry.line
            case "IdleExitSec":
                do {
                    idleExit = value.isEmpty ? .seconds(60) : value == "infinity" ? nil : try TimeSpan.parse(value)
                } catch {
                    sink.error(entry.line, "invalid \(entry.spelling): \(error.message)")
                }
            case "BatchWindowSec":
                do {
                    batchWindow = value.isEmpty ? .zero : try TimeSpan.parse(value) ?? .seconds(61)
                    if batchWindow > .seconds(60) {
                        sink.error(entry.line, "invalid \(entry.spelling) '\(value.abbreviated)': at most 60s")
                        batchWindow = .zero
                    }
                } catch {
                    sink.error(entry.line, "invalid \(entry.spelling): \(error.message)")
                }
                batchWindowLine = value.isEmpty ? nil : entry.line
            case "Unit":
                unitLine = value.isEmpty ? nil : entry.line
                do {
                    unit = value.isEmpty ? nil : try UnitTemplate(parsing: value)
                } catch {
                    sink.error(entry.line, error.message)
                }
            case "Print":
                printerLine = value.isEmpty ? nil : entry.line
                do {
                    printer = value.isEmpty ? nil : try PrintQueue(parsing: value)
                } catch {
                    sink.error(entry.line, error.message)
                }
            default:
                if let key = HandlerLimit.Key(rawValue: entry.key) {
                    if !value.isEmpty { processOnlyKeys.append((entry.key, entry.line)) }
                    if value.isEmpty {
                        limits[key] = nil
                    } else if let limit = HandlerLimit.parse(value, key: key) {
                        limits[key] = limit
                    } else {
                        sink.error(entry.line, "invalid \(entry.key)= '\(value.abbreviated)': expected a number, SOFT:HARD or infinity")
                    }
                } else {
                    sink.unknownKey(entry, in: section.name, known: Self.keys)
                }
            }
        }
    }

    /// A user or group name or number; empty means unset.
    private static func account(_ value: String, key: String, line: Int, sink: inout DiagnosticSink) -> String? {
        guard !value.isEmpty else { return nil }
        let valid = value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: "/") }
        guard valid, value.utf8.count <= 256 else {
            sink.error(line, "invalid \(key)= '\(value.abbreviated)'")
            return nil
        }
        return value
    }

    static func positiveInteger(_ value: String, key: String, line: Int, sink: inout DiagnosticSink) -> Int? {
        guard let number = Int(value), number > 0 else {
            sink.error(line, "\(key)= must be a positive integer, got '\(value.abbreviated)'")
            return nil
        }
        return number
    }

    static func positiveInteger(_ value: String, key: String, line: Int, maximum: Int, sink: inout DiagnosticSink) -> Int? {
        guard let number = positiveInteger(value, key: key, line: line, sink: &sink) else { return nil }
        guard number <= maximum else {
            sink.error(line, "\(key)= must be at most \(maximum), got \(number)")
            return nil
        }
        return number
    }

    /// systemd Environment=: quoted words of NAME=value; an empty value clears earlier assignments.
    private static func readEnvironment(_ value: String, line: Int, into environment: inout [String: String],
                                        sink: inout DiagnosticSink) {
        guard !value.isEmpty else {
            environment.removeAll()
            return
        }
        let words: [String]
        do {
            words = try WordSplitter.split(value)
        } catch {
            sink.error(line, "bad quoting in Environment=: \(error.message)")
            return
        }
        for word in words {
            guard let equals = word.firstIndex(of: "="), isVariableName(word[..<equals]) else {
                sink.warning(line, "invalid environment assignment '\(word.abbreviated)', ignored")
                continue
            }
            environment[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
    }

    private static func isVariableName(_ name: Substring) -> Bool {
        guard let first = name.utf8.first, !(first >= 0x30 && first <= 0x39) else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_")
        }
    }
}

/// systemd's booleans: 1/yes/y/true/t/on and 0/no/n/false/f/off, any case.
enum BooleanSyntax {
    static func parse(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "yes", "y", "true", "t", "on": true
        case "0", "no", "n", "false", "f", "off": false
        default: nil
        }
    }
}
