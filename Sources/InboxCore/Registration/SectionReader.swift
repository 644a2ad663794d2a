/// Collects diagnostics for one file while its sections are read.
struct DiagnosticSink {
    let path: String
    var diagnostics: [Diagnostic] = []
    /// For a file without lines (a binary property list), the sections' "line" numbers are ordinals standing for
    /// these positions; empty for files with lines.
    var positions: [Int: String] = [:]
    /// What the file's ContentTypes= and type declarations name, for the checks that need the whole type database
    /// (`RegistrationFile.typeReferences`); collected even from sections with errors.
    var typeReferences = TypeReferences()

    /// The location of a line, or of the position the line number stands for.
    func location(_ line: Int) -> SourceLocation {
        guard let position = positions[line] else { return SourceLocation(file: path, line: line) }
        return SourceLocation(file: path, position: position)
    }

    mutating func error(_ line: Int, _ message: String) {
        diagnostics.append(Diagnostic(.error, at: location(line), message))
    }

    mutating func warning(_ line: Int, _ message: String) {
        diagnostics.append(Diagnostic(.warning, at: location(line), message))
    }

    mutating func notice(_ line: Int, _ message: String) {
        diagnostics.append(Diagnostic(.notice, at: location(line), message))
    }

    /// Warns about a key no reader claimed, with the nearest of `known` (the section's key table) when one is close;
    /// `X-` keys are reserved for extensions and pass silently.
    mutating func unknownKey(_ entry: INIEntry, in section: String, known: Set<String> = []) {
        guard !entry.key.hasPrefix("X-") else { return }
        let close = Spelling.closest(to: entry.key, among: known.sorted())
        warning(entry.line, "unknown key '\(entry.key)' in section [\(section)], ignored"
                + (close.map { "; did you mean '\($0)='?" } ?? ""))
    }

    /// The diagnostics in line order.
    var sorted: [Diagnostic] {
        diagnostics.enumerated().sorted { a, b in
            a.element.location.line != b.element.location.line
                ? a.element.location.line < b.element.location.line : a.offset < b.offset
        }.map(\.element)
    }
}

/// Checks for reverse-DNS-ish identifiers: `[A-Za-z0-9.-]+`.
enum IdentifierSyntax {
    static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
    }
}

/// Type identifiers: `[A-Za-z0-9.+_-]+`, the handler identifier characters plus the `+` and `_` of MIME subtypes
/// (so that dynamic identifiers such as `dyn.mime.image.svg+xml` can be named).
enum TypeIdentifierSyntax {
    static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255 && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "_")
        }
    }
}

/// Readers for the sections that describe types: [DocumentType], [ExportedType], [ImportedType].
enum SectionReader {
    /// Adds a space-separated list to `list`, checking each word; an empty value clears the list (systemd semantics).
    /// Returns false if a word was invalid.
    static func readList(_ entry: INIEntry, into list: inout [String], what: String,
                         isValid: (String) -> Bool = { _ in true }, sink: inout DiagnosticSink) -> Bool {
        guard !entry.value.isEmpty else {
            list.removeAll()
            return true
        }
        let words = entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        var valid = true
        for bad in words where !isValid(bad) {
            sink.error(entry.line, "invalid \(what) '\(bad.abbreviated)' in \(entry.spelling)")
            valid = false
        }
        list += words
        return valid
    }

    /// Every key `readDocumentType` knows; keep in step with its switch.
    static let documentTypeKeys: Set<String> = ["Name", "ContentTypes", "NamePatterns", "Rank", "Role", "IconFiles"]
    /// Every key `readTypeDeclaration` knows; keep in step with its switch.
    static let typeDeclarationKeys: Set<String> = ["Identifier", "Description", "ConformsTo", "Extensions", "MIMETypes"]

    static func readDocumentType(_ section: INISection, sink: inout DiagnosticSink) -> DocumentType? {
        var name: String?
        var contentTypes: [String] = []
        var rank = HandlerRank.default
        var role = HandlerRole.viewer
        var iconFiles: [String] = []
        var namePatterns: [NamePattern] = []
        var valid = true
        for entry in section.entries {
            switch entry.key {
            case "Name":
                name = entry.value.isEmpty ? nil : entry.value
            case "NamePatterns":
                if entry.value.isEmpty { namePatterns.removeAll() }
                for word in entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                    do {
                        namePatterns.append(try NamePattern(String(word)))
                    } catch {
                        sink.error(entry.line, "invalid name pattern '\(String(word).abbreviated)' in \(entry.spelling): \(error)")
                        valid = false
                    }
                }
            case "ContentTypes":
                // UTIs, or MIME types (`image/png`), which are taken as the UTI the type database gives them.
                if !readList(entry, into: &contentTypes, what: "type identifier or MIME type",
                             isValid: { TypeIdentifierSyntax.isValid($0) || MIMEDatabase.isMIMEType($0) },
                             sink: &sink) { valid = false }
                for word in entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" })
                where TypeIdentifierSyntax.isValid(String(word)) || MIMEDatabase.isMIMEType(String(word)) {
                    sink.typeReferences.claims.append(.init(type: String(word), location: sink.location(entry.line)))
                }
            case "Rank":
                if entry.value.isEmpty {
                    rank = .default
                } else if let parsed = HandlerRank(parsing: entry.value) {
                    rank = parsed
                } else {
                    sink.error(entry.line, "invalid \(entry.spelling) '\(entry.value.abbreviated)': expected Owner, Default, Alternate or None")
                    valid = false
                }
            case "Role":
                if entry.value.isEmpty {
                    role = .viewer
                } else if let parsed = HandlerRole(parsing: entry.value) {
                    role = parsed
                } else {
                    sink.error(entry.line, "invalid \(entry.spelling) '\(entry.value.abbreviated)': expected Editor, Viewer, Shell or None")
                    valid = false
                }
            case "IconFiles":
                _ = readList(entry, into: &iconFiles, what: "icon file", sink: &sink)
            default:
                sink.unknownKey(entry, in: section.name, known: documentTypeKeys)
            }
        }
        guard !contentTypes.isEmpty || !namePatterns.isEmpty else {
            sink.error(section.line, "[DocumentType] without ContentTypes= or NamePatterns=")
            return nil
        }
        guard valid else { return nil }
        var type = DocumentType(name: name ?? contentTypes.first ?? namePatterns[0].text, contentTypes: contentTypes,
                                rank: rank, role: role, iconFiles: iconFiles, location: sink.location(section.line))
        type.namePatterns = namePatterns
        return type
    }

    /// Reads an [ExportedType], [ImportedType] or type-table [Type] section; `origin` makes the declaration's
    /// origin from the section's location.
    static func readTypeDeclaration(_ section: INISection, origin: (SourceLocation) -> TypeDeclaration.Origin,
                                    sink: inout DiagnosticSink) -> TypeDeclaration? {
        var identifier: String?
        var description = ""
        var conformsTo: [String] = []
        var extensions: [String] = []
        var mimeTypes: [String] = []
        var valid = true
        for entry in section.entries {
            switch entry.key {
            case "Identifier":
                if entry.value.isEmpty || TypeIdentifierSyntax.isValid(entry.value) {
                    identifier = entry.value.isEmpty ? nil : entry.value
                    if !entry.value.isEmpty { sink.typeReferences.declared.insert(entry.value) }
                } else {
                    sink.error(entry.line, "invalid \(entry.spelling) '\(entry.value.abbreviated)': use letters, digits, '.', '-', '+' and '_'")
                    valid = false
                }
            case "Description":
                description = entry.value
            case "ConformsTo":
                if !readList(entry, into: &conformsTo, what: "type identifier", isValid: TypeIdentifierSyntax.isValid,
                             sink: &sink) { valid = false }
            case "Extensions":
                if !readList(entry, into: &extensions, what: "extension", isValid: { !$0.contains("/") && $0 != "." },
                             sink: &sink) { valid = false }
            case "MIMETypes":
                if !readList(entry, into: &mimeTypes, what: "MIME type", isValid: isMIMEType, sink: &sink) { valid = false }
            default:
                sink.unknownKey(entry, in: section.name, known: typeDeclarationKeys)
            }
        }
        guard let identifier else {
            if valid { sink.error(section.line, "[\(section.name)] without Identifier=") }
            return nil
        }
        guard valid else { return nil }
        let location = sink.location(section.line)
        return TypeDeclaration(identifier: identifier, description: description, conformsTo: conformsTo,
                               extensions: extensions, mimeTypes: mimeTypes,
                               origin: origin(location))
    }

    private static func isMIMEType(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
    }
}
