/// Names and dynamic types: what a file name says, and the declarations of MIME types no UTI claims.
extension TypeDatabase {
    /// What a file's name says about its type: the first of `nameCandidates`.
    public func nameType(of fileName: String) -> NameType? {
        nameCandidates(of: fileName).types.first
    }

    /// Every type a file's name allows, the most likely first (README "What a name says"):
    ///
    /// 1. an extension a registration declares (exported, then imported), longest dotted suffix first; it decides
    ///    alone;
    /// 2. otherwise shared-mime-info's best globs for the name and the built-in table's longest extension. The
    ///    more specific of the two comes first: a literal name (`pom.xml`) or a longer pattern (`*.ps.gz`,
    ///    `*.src.rpm`) than the extension (`gz`, `rpm`) comes first whether or not its MIME type has a UTI; between
    ///    equally long ones a glob whose MIME type has a UTI comes first, then the table's types for the extension,
    ///    then globs whose MIME types have none (as dynamic identifiers).
    ///
    /// `isTie` is set when globs of equal weight and length name different types (`*.m`: Objective-C or MATLAB):
    /// the content settles it.
    ///
    /// A package type (one conforming to `com.apple.package`) is never among them: its extension names directories
    /// (`packageIdentifier(forDirectoryNamed:)`), and a file so named is typed as the file it can be (a `.pages`
    /// file is the single-file `com.apple.iwork.pages.sffpages`; a `Report.rtfd` file by its content).
    public func nameCandidates(of fileName: String) -> NameCandidates {
        let name = fileName.lastIndex(of: "/").map { String(fileName[fileName.index(after: $0)...]) } ?? fileName
        let declared = declaredExtension(of: name)
        if let declared, declaration(for: declared.identifier)?.origin != .builtin,
           !packageIdentifiers.contains(declared.identifier) {
            return NameCandidates(types: [NameType(identifier: declared.identifier,
                                                   mimeType: preferredMIMEType(of: declared.identifier),
                                                   match: "*." + declared.suffix)], isTie: false)
        }
        let globs = mime.matches(fileName: name)
        let claimants = declared.map { extensionClaimants[$0.suffix] ?? [] } ?? []
        let builtin = claimants.compactMap {
            packageIdentifiers.contains($0) ? nil
                : NameType(identifier: $0, mimeType: preferredMIMEType(of: $0), match: "*." + (declared?.suffix ?? ""))
        }
        let globTypes = globs.map { glob in
            NameType(identifier: identifier(forMIMEType: glob.mimeType) ?? DynamicType.identifier(for: glob.mimeType),
                     mimeType: glob.mimeType, match: glob.pattern)
        }
        var ordered: [NameType]
        if let declared, let first = globs.first {
            let globLength = first.pattern.unicodeScalars.count
            let extensionLength = declared.suffix.unicodeScalars.count + 2
            let literal = !first.pattern.contains(where: { $0 == "*" || $0 == "?" || $0 == "[" })
            if literal || globLength > extensionLength {
                ordered = globTypes + builtin
            } else if globLength < extensionLength {
                ordered = builtin + globTypes
            } else {
                let (withUTI, dynamic) = (globTypes.filter { declares($0.identifier) },
                                          globTypes.filter { !declares($0.identifier) })
                ordered = withUTI + builtin + dynamic
            }
        } else {
            let (withUTI, dynamic) = (globTypes.filter { declares($0.identifier) },
                                      globTypes.filter { !declares($0.identifier) })
            ordered = withUTI + builtin + dynamic
        }
        var seen: Set<String> = []
        ordered = ordered.filter { seen.insert($0.identifier).inserted }
        return NameCandidates(types: ordered, isTie: globTypes.count > 1)
    }

    /// The longest dotted suffix of the name that the tag table knows ("a.tar.gz": "tar.gz", then "gz").
    func declaredExtension(of name: String) -> (identifier: String, suffix: String)? {
        // The dots from the end, at most as many as the longest extension has parts; a dot that starts the name
        // begins no extension (".bashrc" has none).
        let lowered = name.lowercased()
        let bytes = lowered.utf8
        var starts: [String.Index] = []
        var index = bytes.endIndex
        while starts.count < longestExtension, let dot = bytes[..<index].lastIndex(of: UInt8(ascii: ".")) {
            if dot != bytes.startIndex { starts.append(bytes.index(after: dot)) }
            index = dot
        }
        for start in starts.reversed() {
            let suffix = String(lowered[start...])
            if let identifier = byExtension[suffix] { return (identifier, suffix) }
        }
        return nil
    }

    func dynamicDeclaration(_ mimeType: String) -> TypeDeclaration {
        var parents: [String] = []
        for parent in mime.parents(of: mimeType) {
            if let identifier = typeIdentifier(forMIMEType: parent), identifier != DynamicType.identifier(for: mimeType),
               !parents.contains(identifier) {
                parents.append(identifier)
            }
        }
        if let family = DynamicType.family(of: mimeType), byIdentifier[family] != nil, !parents.contains(family) {
            parents.append(family)
        }
        if parents.isEmpty && !mimeType.hasPrefix("inode/") { parents = ["public.data"] }
        return TypeDeclaration(identifier: DynamicType.identifier(for: mimeType), description: mimeType,
                               conformsTo: parents, extensions: mime.extensions(of: mimeType),
                               mimeTypes: [mimeType] + mime.aliases(of: mimeType), origin: .dynamic)
    }
}
