/// Reads an Info.plist registration (`handlers.d/*.plist`, XML or binary): its keys become the sections a
/// `.handler` file has, and `RegistrationParser.build` does the rest, so both formats mean exactly the same.
///
/// | Info.plist | registration |
/// |---|---|
/// | `CFBundleIdentifier`, `CFBundleName` (else `CFBundleDisplayName`) | [Handler] `Identifier=`, `Name=` |
/// | `InboxdHandler` (dict): `Exec`, `User`, `TimeoutSec`, ... | the other [Handler] keys, same names |
/// | `CFBundleDocumentTypes` (array of dicts) | one [DocumentType] each |
/// | `UTExportedTypeDeclarations`, `UTImportedTypeDeclarations` | [ExportedType], [ImportedType] |
///
/// Diagnostics read `path:line: message` for XML; a binary file has no lines, so they name the key path instead:
/// `path: CFBundleDocumentTypes[0].LSHandlerRank: message`.
enum InfoPlist {
    /// `build`'s messages about the whole file, in plist terms.
    static func terms(execReported: Bool, stem: String) -> RegistrationTerms {
        RegistrationTerms(missingExec: execReported ? nil : "no command: missing InboxdHandler → Exec",
                          identifierKey: "CFBundleIdentifier", noDocumentTypes: nil, stem: stem)
    }

    static func parse(_ bytes: [UInt8], path: String, bundle: InfoPlistBundle? = nil) -> RegistrationFile {
        let binary = PropertyList.isBinary(bytes)
        let whole = binary ? SourceLocation(file: path, position: "") : SourceLocation(file: path, line: 1)
        guard bytes.count <= RegistrationParser.maximumSize else {
            return RegistrationFile(registration: nil, diagnostics: [Diagnostic(.error, at: whole,
                "file is \(bytes.count) bytes, larger than the limit of \(RegistrationParser.maximumSize)")])
        }
        func location(_ place: PropertyListLocation) -> SourceLocation {
            switch place {
            case .line(let line): SourceLocation(file: path, line: line)
            case .offset(let offset): SourceLocation(file: path, position: "offset \(offset)")
            }
        }
        var warnings: [PropertyListError] = []
        do {
            let root = try PropertyList.parse(bytes, warnings: &warnings)
            let container = warnings.map { Diagnostic(.warning, at: location($0.location), $0.message) }
            return read(root, path: path, bundle: bundle, diagnostics: container)
        } catch {
            return RegistrationFile(registration: nil, diagnostics: [Diagnostic(.error, at: location(error.location),
                                                                                error.message)])
        }
    }

    /// Reads a parsed Info.plist; its locations (lines or offsets) decide how diagnostics name places.
    static func read(_ root: PropertyListNode, path: String, bundle: InfoPlistBundle? = nil,
                     diagnostics: [Diagnostic] = []) -> RegistrationFile {
        guard case .dict(let entries) = root.value else {
            let location = root.location.line.map { SourceLocation(file: path, line: $0) }
                ?? SourceLocation(file: path, position: "")
            return RegistrationFile(registration: nil, diagnostics: diagnostics + [Diagnostic(.error, at: location,
                "the top level of an Info.plist must be a dict, not \(root.value.kind)")])
        }
        var mapper = InfoPlistMapper(path: path, stem: bundle?.stem, bundle: bundle)
        mapper.sink.diagnostics = diagnostics
        let sections = mapper.sections(entries, root: root.location)
        var file = RegistrationParser.build(sections, diagnostics: mapper.sink.diagnostics, path: path,
                                            positions: mapper.sink.positions,
                                            terms: terms(execReported: mapper.execReported, stem: mapper.stem),
                                            types: mapper.types)
        file.registration?.typeDetails = mapper.types.details
        return file
    }
}

extension PropertyListLocation {
    /// The line, for XML.
    var line: Int? {
        if case .line(let line) = self { return line }
        return nil
    }
}
