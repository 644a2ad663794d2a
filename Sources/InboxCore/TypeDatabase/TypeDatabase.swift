/// The set of known UTIs: their conformance graph and the extension and MIME tags that map to them.
public struct TypeDatabase: Sendable {
    /// The built-in table (see BuiltinTypes.swift).
    public static let builtin = TypeDatabase(BuiltinTypes.declarations)

    /// Declarations in insertion order; the first declaration of an identifier wins.
    private let declarations: [TypeDeclaration]
    // Internal, not private: TypeDatabase+Names.swift reads them.
    let byIdentifier: [String: Int]
    let byExtension: [String: String]
    /// Every identifier that declares an extension, in tag priority order (the first is `byExtension`'s).
    let extensionClaimants: [String: [String]]
    private var byMIMEType: [String: String]
    var longestExtension = 1
    /// Every declared identifier that conforms to `com.apple.package` (and it): the types whose documents are
    /// directories, whose extensions never name a file (`nameCandidates`).
    let packageIdentifiers: Set<String>
    /// The host's MIME database: names through its globs, and a dynamic identifier for every MIME type without a UTI.
    public private(set) var mime: MIMEDatabase = .empty

    /// Builds a database from declarations as given; a repeated identifier keeps its first declaration.
    public init(_ declarations: [TypeDeclaration]) {
        var kept: [TypeDeclaration] = []
        var byIdentifier: [String: Int] = [:]
        for declaration in declarations where byIdentifier[declaration.identifier] == nil {
            byIdentifier[declaration.identifier] = kept.count
            kept.append(declaration)
        }
        self.declarations = kept
        self.byIdentifier = byIdentifier

        // Tags: exported types beat imported ones, which beat built-in ones; within a class, first wins.
        var byExtension: [String: String] = [:]
        var claimants: [String: [String]] = [:]
        var byMIMEType: [String: String] = [:]
        for declaration in kept.enumerated().sorted(by: Self.tagPriority).map(\.element) {
            for ext in declaration.extensions {
                if byExtension[ext] == nil { byExtension[ext] = declaration.identifier }
                if !claimants[ext, default: []].contains(declaration.identifier) {
                    claimants[ext, default: []].append(declaration.identifier)
                }
            }
            for mime in declaration.mimeTypes where byMIMEType[mime] == nil {
                byMIMEType[mime] = declaration.identifier
            }
        }
        self.byExtension = byExtension
        self.extensionClaimants = claimants
        self.byMIMEType = byMIMEType
        self.longestExtension = byExtension.keys.map { $0.split(separator: ".").count }.max() ?? 1
        self.packageIdentifiers = Self.packages(kept, byIdentifier: byIdentifier)
    }

    /// The declarations that reach `com.apple.package` through ConformsTo (a dynamic type never does: its parents
    /// come from the MIME hierarchy, where no package type is).
    private static func packages(_ declarations: [TypeDeclaration], byIdentifier: [String: Int]) -> Set<String> {
        var known: [String: Bool] = [TypeDatabase.packageType: true]
        func reaches(_ identifier: String, _ visiting: inout Set<String>) -> Bool {
            if let answer = known[identifier] { return answer }
            // A cycle (the registration loader drops them, a raw table may not) reaches nothing new.
            guard visiting.insert(identifier).inserted, let index = byIdentifier[identifier] else { return false }
            let answer = declarations[index].conformsTo.contains { reaches($0, &visiting) }
            known[identifier] = answer
            return answer
        }
        var packages: Set<String> = []
        for declaration in declarations {
            var visiting: Set<String> = []
            if reaches(declaration.identifier, &visiting) { packages.insert(declaration.identifier) }
        }
        return packages
    }

    /// The same types with the host's MIME database attached: its aliases map to the UTIs of their canonical types
    /// and back, its globs name files, and its types without a UTI become dynamic identifiers.
    public func attaching(_ mime: MIMEDatabase) -> TypeDatabase {
        var database = TypeDatabase(declarations, aliasedBy: mime)
        database.mime = mime
        return database
    }

    private init(_ declarations: [TypeDeclaration], aliasedBy mime: MIMEDatabase) {
        self.init(declarations)
        var byMIMEType = self.byMIMEType
        for (type, identifier) in self.byMIMEType {
            let canonical = mime.canonical(type)
            if byMIMEType[canonical] == nil { byMIMEType[canonical] = identifier }
        }
        for (type, identifier) in byMIMEType {
            for alias in mime.aliases(of: type) where byMIMEType[alias] == nil { byMIMEType[alias] = identifier }
        }
        self.byMIMEType = byMIMEType
    }

    private static func tagPriority(_ a: (offset: Int, element: TypeDeclaration),
                                    _ b: (offset: Int, element: TypeDeclaration)) -> Bool {
        func rank(_ origin: TypeDeclaration.Origin) -> Int {
            switch origin {
            case .exported: 0
            case .imported: 1
            case .builtin, .dynamic: 2
            }
        }
        let (ra, rb) = (rank(a.element.origin), rank(b.element.origin))
        return ra != rb ? ra < rb : a.offset < b.offset
    }

    /// Adds registration-declared types, returning the new database and what was wrong with the declarations.
    ///
    /// Exports are taken in (file, line) order: the first exporter of an identifier wins, later ones get a warning.
    /// Built-in identifiers cannot be redefined (an export of one is a warning; an import is silently redundant).
    /// An import is used only when nobody exports the identifier. A ConformsTo cycle is an error and drops every
    /// declaration on it; a ConformsTo target nobody declares is a warning.
    public func adding(_ declarations: [TypeDeclaration]) -> (database: TypeDatabase, diagnostics: [Diagnostic]) {
        var diagnostics: [Diagnostic] = []
        let sorted = declarations.enumerated().sorted { a, b in
            let (la, lb) = (a.element.origin.location, b.element.origin.location)
            let keyA = (la?.file ?? "", la?.line ?? 0)
            let keyB = (lb?.file ?? "", lb?.line ?? 0)
            return keyA != keyB ? keyA < keyB : a.offset < b.offset
        }.map(\.element)

        var accepted: [String: TypeDeclaration] = [:]
        var order: [String] = []
        for declaration in sorted {
            guard case .exported(let location) = declaration.origin else { continue }
            switch self.declaration(for: declaration.identifier)?.origin {
            case .builtin:
                diagnostics.append(Diagnostic(.warning, at: location,
                    "type '\(declaration.identifier)' is built in and cannot be exported, ignored"))
                continue
            case .exported(let first):
                diagnostics.append(Diagnostic(.warning, at: location,
                    "type '\(declaration.identifier)' is already exported by \(first), ignored"))
                continue
            case .imported, .dynamic, nil:
                break
            }
            if let first = accepted[declaration.identifier], let firstLocation = first.origin.location {
                diagnostics.append(Diagnostic(.warning, at: location,
                    "type '\(declaration.identifier)' is already exported by \(firstLocation), ignored"))
                continue
            }
            accepted[declaration.identifier] = declaration
            order.append(declaration.identifier)
        }
        for declaration in sorted where !declaration.origin.isExported {
            guard !contains(declaration.identifier), accepted[declaration.identifier] == nil else { continue }
            accepted[declaration.identifier] = declaration
            order.append(declaration.identifier)
        }

        // Every declaration from which its own identifier can be reached is on a cycle.
        let parentsOf: (String) -> [String] = { accepted[$0]?.conformsTo ?? self.declaration(for: $0)?.conformsTo ?? [] }
        var onCycle: Set<String> = []
        for identifier in order where Self.reaches(from: identifier, target: identifier, parents: parentsOf) {
            onCycle.insert(identifier)
            if let location = accepted[identifier]?.origin.location {
                diagnostics.append(Diagnostic(.error, at: location,
                    "type '\(identifier)' conforms to itself through ConformsTo=, ignored"))
            }
        }
        order.removeAll { onCycle.contains($0) }
        for identifier in onCycle { accepted[identifier] = nil }

        for identifier in order {
            guard let declaration = accepted[identifier], let location = declaration.origin.location else { continue }
            for parent in declaration.conformsTo where accepted[parent] == nil && !contains(parent) {
                diagnostics.append(Diagnostic(.warning, at: location,
                    "type '\(identifier)' conforms to unknown type '\(parent)'"))
            }
        }

        // An import that an earlier database already holds is replaced by this round's export.
        let replaced = Set(order)
        let merged = self.declarations.filter { !replaced.contains($0.identifier) } + order.compactMap { accepted[$0] }
        diagnostics.sort { ($0.location.file, $0.location.line) < ($1.location.file, $1.location.line) }
        return (TypeDatabase(merged).attaching(mime), diagnostics)
    }

    private static func reaches(from start: String, target: String, parents: (String) -> [String]) -> Bool {
        var seen: Set<String> = []
        var stack = parents(start)
        while let next = stack.popLast() {
            if next == target { return true }
            if seen.insert(next).inserted { stack.append(contentsOf: parents(next)) }
        }
        return false
    }

    /// The declaration of an identifier, if known; a dynamic identifier's is made from the MIME database.
    public func declaration(for identifier: String) -> TypeDeclaration? {
        if let index = byIdentifier[identifier] { return declarations[index] }
        // Made when asked (a few lookups in the MIME database), not kept: hundreds of them would cost the agent
        // memory for types most hosts never see.
        return DynamicType.mimeType(of: identifier).map { dynamicDeclaration($0) }
    }

    /// True if the identifier is declared or is the dynamic identifier of a well-formed MIME type.
    public func contains(_ identifier: String) -> Bool {
        byIdentifier[identifier] != nil || DynamicType.mimeType(of: identifier) != nil
    }

    /// True if the identifier is declared by the table or a registration (not dynamic).
    public func declares(_ identifier: String) -> Bool {
        byIdentifier[identifier] != nil
    }

    /// True if identifier == other or other is reachable through ConformsTo.
    public func conforms(_ identifier: String, to other: String) -> Bool {
        distance(from: identifier, to: other) != nil
    }

    /// identifier first, then its ancestors in breadth-first order, no duplicates.
    public func conformanceChain(of identifier: String) -> [String] {
        var chain = [identifier]
        var seen: Set<String> = [identifier]
        var index = 0
        while index < chain.count {
            for parent in declaration(for: chain[index])?.conformsTo ?? [] where seen.insert(parent).inserted {
                chain.append(parent)
            }
            index += 1
        }
        return chain
    }

    /// identifier (distance 0) and every ancestor with its shortest ConformsTo distance, nearest first.
    public func ancestorsByDistance(of identifier: String) -> [(identifier: String, distance: Int)] {
        var result: [(identifier: String, distance: Int)] = [(identifier, 0)]
        var seen: Set<String> = [identifier]
        var index = 0
        while index < result.count {
            let (node, distance) = result[index]
            for parent in declaration(for: node)?.conformsTo ?? [] where seen.insert(parent).inserted {
                result.append((parent, distance + 1))
            }
            index += 1
        }
        return result
    }

    /// Shortest ConformsTo distance from identifier to ancestor (0 when equal), nil if it doesn't conform.
    public func distance(from identifier: String, to ancestor: String) -> Int? {
        var level = [identifier]
        var seen: Set<String> = [identifier]
        var distance = 0
        while !level.isEmpty {
            if level.contains(ancestor) { return distance }
            var next: [String] = []
            for node in level {
                for parent in declaration(for: node)?.conformsTo ?? [] where seen.insert(parent).inserted {
                    next.append(parent)
                }
            }
            level = next
            distance += 1
        }
        return nil
    }

    /// Case-insensitive extension (no dot) -> declared identifier; registration types win over built-in ones.
    public func identifier(forExtension ext: String) -> String? {
        let lower = ext.lowercased()
        return byExtension[lower.hasPrefix(".") ? String(lower.dropFirst()) : lower]
    }

    /// Case-insensitive MIME type -> declared identifier, also through the MIME database's aliases; parameters
    /// (";charset=...") are dropped if the full form is unknown.
    public func identifier(forMIMEType mime: String) -> String? {
        let lower = mime.lowercased().filter { $0 != " " && $0 != "\t" }
        if let identifier = byMIMEType[lower] { return identifier }
        let plain = MIMEDatabase.normalized(lower)
        return byMIMEType[plain] ?? byMIMEType[self.mime.canonical(plain)]
    }

    /// What a content-type attribute, `inboxctl send --type` or `inboxctl types` may name: a declared identifier;
    /// a dynamic identifier of a MIME type the host or a declaration knows (as the declared UTI when one claims
    /// that MIME type, so that no dynamic twin of a declared type appears); or a known MIME type, as its
    /// identifier. nil for anything else.
    public func knownIdentifier(_ text: String) -> String? {
        if declares(text) { return text }
        if let mime = DynamicType.mimeType(of: text) {
            return identifier(forMIMEType: mime)
                ?? (knowsMIMEType(mime) ? DynamicType.identifier(for: self.mime.canonical(mime)) : nil)
        }
        if let identifier = identifier(forMIMEType: text) { return identifier }
        return knowsMIMEType(text) ? typeIdentifier(forMIMEType: text) : nil
    }

    /// True for a MIME type the host's database knows, or one libmagic prints that the host lacks (so that every
    /// type a file's content was given can be looked up).
    func knowsMIMEType(_ mimeType: String) -> Bool {
        mime.knows(mimeType) || LibmagicNames.vocabulary.contains(MIMEDatabase.normalized(mimeType))
    }

    /// libmagic's answer as the host names it: renamed where libmagic and shared-mime-info differ, then the
    /// canonical name through the host's aliases (`application/winhelp` is `application/winhlp`).
    public func contentMIMEType(_ sniffed: String) -> String {
        mime.canonical(LibmagicNames.normalized(sniffed))
    }

    /// The declared identifier of a MIME type, else its dynamic identifier; nil only for a malformed MIME type.
    public func typeIdentifier(forMIMEType mime: String) -> String? {
        if let identifier = identifier(forMIMEType: mime) { return identifier }
        let canonical = self.mime.canonical(mime)
        return MIMEDatabase.isMIMEType(canonical) ? DynamicType.identifier(for: canonical) : nil
    }

    /// The first extension declared for the identifier.
    public func preferredExtension(of identifier: String) -> String? {
        declaration(for: identifier)?.extensions.first
    }

    /// The first MIME type declared for the identifier (for a dynamic identifier, the one it stands for).
    public func preferredMIMEType(of identifier: String) -> String? {
        declaration(for: identifier)?.mimeTypes.first
    }

    /// Every declared identifier, sorted.
    public var allIdentifiers: [String] {
        declarations.map(\.identifier).sorted()
    }

    /// The dynamic identifiers of the MIME database's types that no declaration claims, sorted.
    public var dynamicIdentifiers: [String] {
        mime.knownTypes.filter { identifier(forMIMEType: $0) == nil }.map(DynamicType.identifier(for:)).sorted()
    }
}

extension TypeDeclaration.Origin {
    fileprivate var isExported: Bool {
        if case .exported = self { true } else { false }
    }
}
