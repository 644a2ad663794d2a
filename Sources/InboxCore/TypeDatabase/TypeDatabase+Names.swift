/// Names and dynamic types: what a file name says, and the declarations of MIME types no UTI claims.
extension TypeDatabase {
    /// What a file's name says about its type (DESIGN: the name rule, README "How a file's type is decided").
    ///
    /// 1. an extension a registration declares (exported, then imported), longest dotted suffix first;
    /// 2. shared-mime-info's glob for the name, when its MIME type has a declared UTI;
    /// 3. an extension of the built-in table, longest dotted suffix first;
    /// 4. the glob's MIME type as a dynamic identifier.
    public func nameType(of fileName: String) -> NameType? {
        let name = String(fileName.split(separator: "/").last ?? Substring(fileName))
        let declared = declaredExtension(of: name)
        if let declared, declaration(for: declared.identifier)?.origin != .builtin {
            return NameType(identifier: declared.identifier, mimeType: preferredMIMEType(of: declared.identifier),
                            match: "*." + declared.suffix)
        }
        let glob = mime.match(fileName: name)
        if let glob, let identifier = identifier(forMIMEType: glob.mimeType) {
            return NameType(identifier: identifier, mimeType: glob.mimeType, match: glob.pattern)
        }
        if let declared {
            return NameType(identifier: declared.identifier, mimeType: preferredMIMEType(of: declared.identifier),
                            match: "*." + declared.suffix)
        }
        if let glob {
            return NameType(identifier: DynamicType.identifier(for: glob.mimeType), mimeType: glob.mimeType,
                            match: glob.pattern)
        }
        return nil
    }

    /// The longest dotted suffix of the name that the tag table knows ("a.tar.gz": "tar.gz", then "gz").
    func declaredExtension(of name: String) -> (identifier: String, suffix: String)? {
        let parts = name.lowercased().split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count > 1, !(parts.count == 2 && parts[0].isEmpty) else { return nil }
        let deepest = min(longestExtension, parts.count - 1)
        for count in stride(from: deepest, through: 1, by: -1) {
            let suffix = parts.suffix(count).joined(separator: ".")
            if count == parts.count - 1 && parts[0].isEmpty { continue }
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
