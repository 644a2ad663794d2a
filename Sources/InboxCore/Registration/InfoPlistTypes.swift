/// Document types and type declarations, entry by entry: each bad item or entry is a warning and is skipped.
extension InfoPlistMapper {
    /// One CFBundleDocumentTypes entry; nil (reported) when it claims nothing usable.
    ///
    /// `LSItemContentTypes` decides when it is there; only without it do the legacy `CFBundleTypeExtensions` and
    /// `CFBundleTypeMIMETypes` count (as on Apple's platforms), and `CFBundleTypeOSTypes` only for `****`, "every
    /// document" (files here carry no type codes). `*` as an extension means every document too.
    mutating func documentType(_ fields: [PropertyListEntry], _ path: String,
                               _ location: PropertyListLocation) -> DocumentType? {
        var name: String?
        var rank = HandlerRank.default
        var role = HandlerRole.viewer
        var iconFiles: [String] = []
        var singularIcon: [String] = []
        var isPackage = false
        var packageLocation: SourceLocation?
        var contentTypes: [String] = []
        var legacyTypes: [String] = []
        var extensions: [String] = []
        var hasItemContentTypes = false
        var hasLegacy = false
        var onlyTypeCodes = true
        for field in fields {
            let fieldPath = path + "." + field.key
            switch field.key {
            case "CFBundleTypeName":
                name = appleString(field.value, fieldPath, otherwise: "the name comes from its types")
                    .map { trimmed($0, field.value.location, fieldPath) }.flatMap { $0.isEmpty ? nil : $0 }
            case "LSHandlerRank":
                guard let text = appleString(field.value, fieldPath, otherwise: "the rank is Default") else { continue }
                if let parsed = HandlerRank(parsing: text) {
                    rank = parsed
                } else {
                    warn(field.value.location, fieldPath,
                         "invalid rank '\(text.visible)' (expected Owner, Default, Alternate or None): the rank is Default")
                }
            case "CFBundleTypeRole":
                guard let text = appleString(field.value, fieldPath, otherwise: "the role is Viewer") else { continue }
                if let parsed = HandlerRole(parsing: text) {
                    role = parsed
                } else {
                    warn(field.value.location, fieldPath,
                         "invalid role '\(text.visible)' (expected Editor, Viewer, Shell or None): the role is Viewer")
                }
            case "LSItemContentTypes":
                hasItemContentTypes = true
                contentTypes += words(field.value, fieldPath, what: "type identifier", isValid: {
                    TypeIdentifierSyntax.isValid($0) || MIMEDatabase.isMIMEType($0)
                }, arrayExpected: true)
            case "CFBundleTypeMIMETypes":
                hasLegacy = true
                onlyTypeCodes = false
                legacyTypes += words(field.value, fieldPath, what: "MIME type", isValid: MIMEDatabase.isMIMEType,
                                     hint: { TypeIdentifierSyntax.isValid($0) ? "is a type identifier, not a MIME type" : nil },
                                     arrayExpected: true)
            case "CFBundleTypeExtensions":
                hasLegacy = true
                onlyTypeCodes = false
                for ext in words(field.value, fieldPath, what: "extension", isValid: Self.isExtension, arrayExpected: true) {
                    if ext == "*" { legacyTypes.append("public.data") } else { extensions.append(ext.lowercased()) }
                }
            case "CFBundleTypeOSTypes":
                hasLegacy = true
                if words(field.value, fieldPath, what: "type code", isValid: { _ in true }).contains("****") {
                    legacyTypes.append("public.data")
                    onlyTypeCodes = false
                }
            case "CFBundleTypeIconFiles":
                iconFiles += words(field.value, fieldPath, what: "icon file", isValid: { !$0.contains("/") },
                                   arrayExpected: true)
            case "CFBundleTypeIconFile":
                singularIcon = words(field.value, fieldPath, what: "icon file", isValid: { !$0.contains("/") })
            case "LSTypeIsPackage":
                isPackage = boolean(field.value, fieldPath) ?? false
                packageLocation = isPackage ? placed(field.value.location, fieldPath) : nil
            default:
                unknownKey(field, fieldPath, read: InfoPlistKeys.documentType, ignored: InfoPlistKeys.documentTypeIgnored)
            }
        }
        if !hasItemContentTypes {
            contentTypes = legacyTypes
        } else {
            extensions = []
        }
        contentTypes = Self.unique(contentTypes)
        extensions = Self.unique(extensions)
        guard !contentTypes.isEmpty || !extensions.isEmpty else {
            let why = hasItemContentTypes ? "no usable item in LSItemContentTypes"
                : !hasLegacy ? "no LSItemContentTypes, CFBundleTypeExtensions or CFBundleTypeMIMETypes"
                : onlyTypeCodes ? "only CFBundleTypeOSTypes, Mac type codes that files here do not carry"
                : "no usable extension or MIME type"
            warn(location, path, why + ": entry skipped")
            return nil
        }
        var type = DocumentType(name: name ?? contentTypes.first ?? "*." + extensions[0], contentTypes: contentTypes,
                                rank: rank, role: role, iconFiles: Self.unique(iconFiles + singularIcon),
                                location: placed(location, path))
        type.extensions = extensions
        type.isPackage = isPackage
        type.packageLocation = packageLocation
        return type
    }

    /// LSTypeIsPackage on a document type makes the types it claims by LSItemContentTypes that this Info.plist
    /// declares (exports or imports) packages: `com.apple.package` joins their parents, unless a parent already is
    /// one. Types declared elsewhere are left as they are (`ClaimResolver` warns about those that are no packages).
    mutating func markPackages() {
        let claimed = Set(types.documentTypes.filter(\.isPackage).flatMap(\.contentTypes))
        guard !claimed.isEmpty else { return }
        let declaredHere = Set((types.exportedTypes + types.importedTypes).map(\.identifier))
        func mark(_ declarations: inout [TypeDeclaration]) {
            for index in declarations.indices where claimed.contains(declarations[index].identifier) {
                let parents = declarations[index].conformsTo
                // A parent declared here is checked when the database has it all; a built-in one is known now.
                let already = parents.contains { TypeDatabase.builtin.isPackage($0) }
                    || parents.contains { declaredHere.contains($0) && claimed.contains($0) }
                if !already { declarations[index].conformsTo.append(TypeDatabase.packageType) }
            }
        }
        mark(&types.exportedTypes)
        mark(&types.importedTypes)
    }

    /// One UTExportedTypeDeclarations or UTImportedTypeDeclarations entry; nil (reported) without a usable
    /// identifier.
    mutating func typeDeclaration(_ fields: [PropertyListEntry], _ path: String, _ location: PropertyListLocation,
                                  exported: Bool) -> (TypeDeclaration, TypeDetails)? {
        var identifier: String?
        var description = ""
        var conformsTo: [(String, PropertyListLocation, String)] = []
        var extensions: [String] = []
        var mimeTypes: [String] = []
        var details = TypeDetails()
        var identifierSeen = false
        for field in fields {
            let fieldPath = path + "." + field.key
            switch field.key {
            case "UTTypeIdentifier":
                identifierSeen = true
                guard let text = appleString(field.value, fieldPath, otherwise: "declaration skipped") else { continue }
                let cleaned = trimmed(text, field.value.location, fieldPath)
                guard TypeIdentifierSyntax.isValid(cleaned) else {
                    warn(field.value.location, fieldPath, "invalid type identifier '\(cleaned.visible)' (use letters, "
                         + "digits, '.', '-', '+' and '_'): declaration skipped")
                    continue
                }
                identifier = cleaned
            case "UTTypeDescription":
                description = appleString(field.value, fieldPath, otherwise: "no description").map {
                    trimmed($0, field.value.location, fieldPath)
                } ?? ""
            case "UTTypeConformsTo":
                for (word, wordLocation, wordPath) in locatedWords(field.value, fieldPath, what: "type identifier",
                                                                   isValid: TypeIdentifierSyntax.isValid) {
                    conformsTo.append((word, wordLocation, wordPath))
                }
            case "UTTypeTagSpecification":
                guard case .dict(let tags) = field.value.value else {
                    warn(field.value.location, fieldPath, "must be a dict, not \(field.value.value.kind): ignored")
                    continue
                }
                for tag in tags {
                    let tagPath = fieldPath + "." + tag.key
                    switch tag.key {
                    case "public.filename-extension":
                        extensions += words(tag.value, tagPath, what: "extension", isValid: Self.isExtension)
                    case "public.mime-type":
                        mimeTypes += words(tag.value, tagPath, what: "MIME type", isValid: MIMEDatabase.isMIMEType)
                    default:
                        unknownKey(tag, tagPath, read: InfoPlistKeys.tags, ignored: InfoPlistKeys.tagsIgnored)
                    }
                }
            case "UTTypeIconFile", "UTTypeIconFiles":
                details.iconFiles += words(field.value, fieldPath, what: "icon file", isValid: { !$0.contains("/") })
            case "UTTypeReferenceURL":
                details.referenceURL = appleString(field.value, fieldPath, otherwise: "ignored").map {
                    trimmed($0, field.value.location, fieldPath)
                }
            default:
                unknownKey(field, fieldPath, read: InfoPlistKeys.typeDeclaration,
                           ignored: InfoPlistKeys.typeDeclarationIgnored)
            }
        }
        guard let identifier else {
            if !identifierSeen { warn(location, path, "no UTTypeIdentifier: declaration skipped") }
            return nil
        }
        var parents: [String] = []
        for (parent, parentLocation, parentPath) in conformsTo {
            if parent == identifier {
                warn(parentLocation, parentPath, "'\(parent.visible)' is the type itself: dropped")
            } else if !parents.contains(parent) {
                parents.append(parent)
            }
        }
        let place = placed(location, path)
        details.iconFiles = Self.unique(details.iconFiles)
        let declaration = TypeDeclaration(identifier: identifier, description: description, conformsTo: parents,
                                          extensions: Self.unique(extensions.map { $0.lowercased() }),
                                          mimeTypes: Self.unique(mimeTypes.map { $0.lowercased() }),
                                          origin: exported ? .exported(place) : .imported(place))
        return (declaration, details)
    }

    /// A key no reader claims, in a dict whose keys are known: a warning (with the likely intended key), unless
    /// Apple defines it for something that has no meaning here.
    private mutating func unknownKey(_ field: PropertyListEntry, _ path: String, read: Set<String>, ignored: Set<String>) {
        guard !ignored.contains(field.key), !field.key.hasPrefix("X-") else { return }
        let close = Spelling.closest(to: field.key, among: read)
        warn(field.keyLocation, path, "unknown key '\(field.key.visible)', ignored"
             + (close.map { "; did you mean '\($0)'?" } ?? ""))
    }

    /// The SourceLocation of an entry (its line, or in a binary file its key path).
    private mutating func placed(_ location: PropertyListLocation, _ path: String) -> SourceLocation {
        let ordinal = line(location, path)
        return sink.location(ordinal)
    }

    static func isExtension(_ text: String) -> Bool {
        !text.contains("/") && text != "." && text != ".."
    }

    static func unique(_ words: [String]) -> [String] {
        var seen: Set<String> = []
        return words.filter { seen.insert($0).inserted }
    }
}

/// What a type declaration says that the type database keeps no field for: `UTTypeIconFile(s)` and
/// `UTTypeReferenceURL`, which `inboxctl types` and `info` show.
public struct TypeDetails: Sendable, Hashable {
    /// UTTypeIconFiles, then UTTypeIconFile.
    public var iconFiles: [String] = []
    /// UTTypeReferenceURL: where the format is described.
    public var referenceURL: String?

    public init(iconFiles: [String] = [], referenceURL: String? = nil) {
        self.iconFiles = iconFiles
        self.referenceURL = referenceURL
    }

    var isEmpty: Bool { iconFiles.isEmpty && referenceURL == nil }
}
