/// Walks an Info.plist's top-level dict and makes the sections a `.handler` file would have.
///
/// Each entry keeps the line of its value (XML). A binary file has no lines: each entry gets an ordinal instead,
/// and `sink.positions` maps it to the key path, which is what its diagnostics then show.
struct InfoPlistMapper {
    var sink: DiagnosticSink
    /// True when InboxdHandler or its Exec was reported as wrong, so `build` need not also call Exec missing.
    private(set) var execReported = false
    private var nextOrdinal = 1

    init(path: String) {
        sink = DiagnosticSink(path: path)
    }

    /// The [Handler] section first, then [DocumentType], [ExportedType] and [ImportedType] in file order.
    mutating func sections(_ entries: [PropertyListEntry], root: PropertyListLocation) -> [INISection] {
        let rootLine = line(root, "")
        var handler = INISection(name: "Handler", line: rootLine, entries: [])
        var names: [String: INIEntry] = [:]
        var documentTypes: [INISection] = []
        var declarations: [INISection] = []
        var sawDocumentTypes = false
        for entry in entries {
            let key = entry.key
            switch key {
            case "CFBundleIdentifier", "CFBundleName", "CFBundleDisplayName":
                guard let text = string(entry.value, key, key) else { continue }
                let converted = INIEntry(key: key == "CFBundleIdentifier" ? "Identifier" : "Name", value: text,
                                         line: line(entry.value.location, key), label: key)
                if key == "CFBundleIdentifier" { handler.entries.append(converted) } else { names[key] = converted }
            case "InboxdHandler":
                readHandler(entry.value, into: &handler)
            case "CFBundleDocumentTypes":
                // Only an empty list earns the warning below; anything else that is wrong is an error of its own.
                if case .array(let items) = entry.value.value, items.isEmpty {} else { sawDocumentTypes = true }
                for (path, fields, location) in dicts(entry.value, key) {
                    if let section = documentType(fields, path, location) { documentTypes.append(section) }
                }
            case "UTExportedTypeDeclarations", "UTImportedTypeDeclarations":
                let name = key == "UTExportedTypeDeclarations" ? "ExportedType" : "ImportedType"
                for (path, fields, location) in dicts(entry.value, key) {
                    if let section = typeDeclaration(fields, path, location, name: name) { declarations.append(section) }
                }
            default:
                // Apple's other keys (CFBundleVersion, ...) mean nothing here; ours must be spelled right.
                if key.hasPrefix("Inboxd") {
                    sink.warning(line(entry.keyLocation, key), "unknown key '\(key.abbreviated)', ignored")
                }
            }
        }
        if let name = names["CFBundleName"] ?? names["CFBundleDisplayName"] { handler.entries.append(name) }
        if !sawDocumentTypes { sink.warning(rootLine, "no CFBundleDocumentTypes: this handler opens no files") }
        return [handler] + documentTypes + declarations
    }

    /// InboxdHandler: the [Handler] keys other than Identifier= and Name=, which come from CFBundle keys.
    private mutating func readHandler(_ node: PropertyListNode, into handler: inout INISection) {
        guard case .dict(let entries) = node.value else {
            sink.error(line(node.location, "InboxdHandler"), "InboxdHandler must be a dict, not \(node.value.kind)")
            execReported = true
            return
        }
        for entry in entries {
            let key = entry.key
            let path = "InboxdHandler." + key
            if key == "Identifier" || key == "Name" {
                let instead = key == "Identifier" ? "CFBundleIdentifier" : "CFBundleName"
                sink.warning(line(entry.keyLocation, path),
                             "unknown key '\(key)' in InboxdHandler, ignored: use \(instead)")
            } else if RegistrationParser.handlerKeys.contains(key) {
                if let text = handlerValue(entry.value, key, path) {
                    handler.entries.append(INIEntry(key: key, value: text, line: line(entry.value.location, path)))
                } else if key == "Exec" {
                    execReported = true
                }
            } else if !key.hasPrefix("X-") {
                sink.warning(line(entry.keyLocation, path), "unknown key '\(key.abbreviated)' in InboxdHandler, ignored")
            }
        }
    }

    /// One CFBundleDocumentTypes entry as a [DocumentType]; nil (reported) if it claims no types.
    private mutating func documentType(_ fields: [PropertyListEntry], _ path: String,
                                       _ location: PropertyListLocation) -> INISection? {
        var section = INISection(name: "DocumentType", line: line(location, path), entries: [])
        var claimsTypes = false
        var typesInvalid = false
        for field in fields {
            let fieldPath = path + "." + field.key
            let key: String
            switch field.key {
            case "CFBundleTypeName": key = "Name"
            case "LSHandlerRank": key = "Rank"
            case "CFBundleTypeRole": key = "Role"
            case "CFBundleTypeIconFiles", "LSItemContentTypes", "CFBundleTypeMIMETypes":
                guard let words = list(field.value, field.key, fieldPath, singleString: false) else {
                    typesInvalid = typesInvalid || field.key != "CFBundleTypeIconFiles"
                    continue
                }
                let isIcons = field.key == "CFBundleTypeIconFiles"
                claimsTypes = claimsTypes || (!isIcons && !words.isEmpty)
                // An empty list would clear what came before, as an empty Key= does; an empty array adds nothing.
                if !words.isEmpty {
                    section.entries.append(INIEntry(key: isIcons ? "IconFiles" : "ContentTypes",
                                                    value: words.joined(separator: " "),
                                                    line: line(field.value.location, fieldPath), label: field.key))
                }
                continue
            default:
                continue
            }
            if let text = string(field.value, field.key, fieldPath) {
                section.entries.append(INIEntry(key: key, value: text, line: line(field.value.location, fieldPath),
                                                label: field.key))
            }
        }
        guard claimsTypes || typesInvalid else {
            sink.error(section.line, "document type without LSItemContentTypes or CFBundleTypeMIMETypes")
            return nil
        }
        return typesInvalid ? nil : section
    }

    /// One UTExportedTypeDeclarations or UTImportedTypeDeclarations entry; nil (reported) without an identifier.
    private mutating func typeDeclaration(_ fields: [PropertyListEntry], _ path: String, _ location: PropertyListLocation,
                                          name: String) -> INISection? {
        var section = INISection(name: name, line: line(location, path), entries: [])
        var identified = false
        var identifierInvalid = false
        for field in fields {
            let fieldPath = path + "." + field.key
            switch field.key {
            case "UTTypeIdentifier", "UTTypeDescription":
                let isIdentifier = field.key == "UTTypeIdentifier"
                guard let text = string(field.value, field.key, fieldPath) else {
                    identifierInvalid = identifierInvalid || isIdentifier
                    continue
                }
                identified = identified || (isIdentifier && !text.isEmpty)
                section.entries.append(INIEntry(key: isIdentifier ? "Identifier" : "Description", value: text,
                                                line: line(field.value.location, fieldPath), label: field.key))
            case "UTTypeConformsTo":
                appendList(field.value, field.key, fieldPath, as: "ConformsTo", to: &section)
            case "UTTypeTagSpecification":
                guard case .dict(let tags) = field.value.value else {
                    sink.error(line(field.value.location, fieldPath),
                               "UTTypeTagSpecification must be a dict, not \(field.value.value.kind)")
                    continue
                }
                for tag in tags {
                    let tagKey = tag.key == "public.filename-extension" ? "Extensions"
                        : tag.key == "public.mime-type" ? "MIMETypes" : nil
                    guard let tagKey else { continue }
                    appendList(tag.value, tag.key, fieldPath + "." + tag.key, as: tagKey, to: &section)
                }
            default:
                continue
            }
        }
        guard identified || identifierInvalid else {
            sink.error(section.line, "type declaration without UTTypeIdentifier")
            return nil
        }
        return identifierInvalid ? nil : section
    }

    /// The dicts of an array of dicts, each with its key path; wrong types are reported and skipped.
    private mutating func dicts(_ node: PropertyListNode,
                                _ key: String) -> [(String, [PropertyListEntry], PropertyListLocation)] {
        guard case .array(let items) = node.value else {
            sink.error(line(node.location, key), "\(key) must be an array of dicts, not \(node.value.kind)")
            return []
        }
        var result: [(String, [PropertyListEntry], PropertyListLocation)] = []
        for (index, item) in items.enumerated() {
            let path = "\(key)[\(index)]"
            guard case .dict(let fields) = item.value else {
                sink.error(line(item.location, path), "\(path) must be a dict, not \(item.value.kind)")
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
}
