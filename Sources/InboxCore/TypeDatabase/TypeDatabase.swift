/// The set of known UTIs: their conformance graph and the extension and MIME tags that map to them.
public struct TypeDatabase: Sendable {
    /// The built-in table (see BuiltinTypes.swift).
    public static let builtin = TypeDatabase(BuiltinTypes.declarations)

    /// Declarations in insertion order; the first declaration of an identifier wins.
    private let declarations: [TypeDeclaration]
    private let byIdentifier: [String: Int]
    private let byExtension: [String: String]
    private let byMIMEType: [String: String]

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
        var byMIMEType: [String: String] = [:]
        for declaration in kept.enumerated().sorted(by: Self.tagPriority).map(\.element) {
            for ext in declaration.extensions where byExtension[ext] == nil {
                byExtension[ext] = declaration.identifier
            }
            for mime in declaration.mimeTypes where byMIMEType[mime] == nil {
                byMIMEType[mime] = declaration.identifier
            }
        }
        self.byExtension = byExtension
        self.byMIMEType = byMIMEType
    }

    private static func tagPriority(_ a: (offset: Int, element: TypeDeclaration),
                                    _ b: (offset: Int, element: TypeDeclaration)) -> Bool {
        func rank(_ origin: TypeDeclaration.Origin) -> Int {
            switch origin {
            case .exported: 0
            case .imported: 1
            case .builtin: 2
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
            case .imported, nil:
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
        return (TypeDatabase(merged), diagnostics)
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

    /// The declaration of an identifier, if known.
    public func declaration(for identifier: String) -> TypeDeclaration? {
        byIdentifier[identifier].map { declarations[$0] }
    }

    /// True if the identifier is declared.
    public func contains(_ identifier: String) -> Bool {
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

    /// Case-insensitive extension (no dot) -> identifier; registration types win over built-in ones.
    public func identifier(forExtension ext: String) -> String? {
        let lower = ext.lowercased()
        return byExtension[lower.hasPrefix(".") ? String(lower.dropFirst()) : lower]
    }

    /// Case-insensitive MIME type -> identifier; parameters (";charset=...") are dropped if the full form is unknown.
    public func identifier(forMIMEType mime: String) -> String? {
        let lower = mime.lowercased().filter { $0 != " " && $0 != "\t" }
        if let identifier = byMIMEType[lower] { return identifier }
        guard let semicolon = lower.firstIndex(of: ";") else { return nil }
        return byMIMEType[String(lower[..<semicolon])]
    }

    /// The first extension declared for the identifier.
    public func preferredExtension(of identifier: String) -> String? {
        declaration(for: identifier)?.extensions.first
    }

    /// The first MIME type declared for the identifier.
    public func preferredMIMEType(of identifier: String) -> String? {
        declaration(for: identifier)?.mimeTypes.first
    }

    /// Every known identifier, sorted.
    public var allIdentifiers: [String] {
        declarations.map(\.identifier).sorted()
    }
}

extension TypeDeclaration.Origin {
    fileprivate var isExported: Bool {
        if case .exported = self { true } else { false }
    }
}
