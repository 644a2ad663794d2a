import InboxCore
import InboxSystem

/// `inboxctl types [UTI] [--tree] [--json]`: the type database the agent uses, built in, declared and dynamic.
enum TypesCommand: InboxctlCommand {
    static let name = "types"
    static let summary = "Show the types the agent knows and how they conform"
    static let usage = "inboxctl types [UTI] [--tree] [--json]"

    static let help = """
        OVERVIEW: Show the types the agent knows and how they conform.

        With no UTI, every declared type (built in, or exported or imported by a registration) with its
        description. With a UTI (or a MIME type, or a dyn.mime. identifier), its description, conformance
        chain, extensions, MIME types and where it is declared.

        USAGE: \(usage)

        ARGUMENTS:
          <UTI>                   A type identifier, a MIME type or a dyn.mime. identifier

        OPTIONS:
          --tree                  Show the conformance tree under public.item and public.content (or under UTI)
          --json                  Print one JSON document
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.flag("--tree"), .flag("--json")], agentOptions: true, positionals: .atMostOne)

    static func run(_ parsed: ParsedOptions) -> CInt {
        let tree = parsed.flag("--tree"), json = parsed.flag("--json")
        let uti = parsed.positionals.first
        guard let settings = parsed.agent.settings() else { return 1 }
        let loaded = HandlerCatalog.load(settings).loaded
        let database = loaded.database
        let output: String
        if let uti {
            guard let identifier = database.knownIdentifier(uti) else {
                var message = "inboxctl: unknown type '\(uti)'"
                if let close = Spelling.closest(to: uti, among: database.allIdentifiers) {
                    message += "; did you mean '\(close)'?"
                }
                Inboxctl.write(message + "\n", to: 2)
                return 1
            }
            if tree {
                output = json ? "[" + treeJSON(identifier, in: database, children: children(in: database)) + "]\n"
                              : treeText(identifier, in: database, children: children(in: database))
            } else {
                let details = loaded.typeDetails(of: identifier)
                output = json ? describeJSON(identifier, in: database, details: details) + "\n"
                              : describeText(identifier, in: database, details: details)
            }
        } else if tree {
            let children = children(in: database)
            let roots = ["public.item", "public.content"]
            output = json
                ? "[" + roots.map { treeJSON($0, in: database, children: children) }.joined(separator: ",") + "]\n"
                : roots.map { treeText($0, in: database, children: children) }.joined()
        } else {
            output = json ? listJSON(database) : listText(database)
        }
        Inboxctl.write(output, to: 1)
        return 0
    }

    /// "built in", "exported by FILE:LINE", "imported by FILE:LINE" or "dynamic, from shared-mime-info".
    static func origin(_ declaration: TypeDeclaration) -> String {
        switch declaration.origin {
        case .builtin: "built in"
        case .dynamic: "dynamic, from shared-mime-info"
        case .exported(let location): "exported by \(location)"
        case .imported(let location): "imported by \(location)"
        }
    }

    static func describeText(_ identifier: String, in database: TypeDatabase, details: TypeDetails? = nil) -> String {
        guard let declaration = database.declaration(for: identifier) else { return identifier + "\n" }
        var rows: [(String, String)] = [
            ("Identifier", identifier),
            ("Description", declaration.description),
            ("Conformance", database.conformanceChain(of: identifier).joined(separator: " ")),
            ("Extensions", declaration.extensions.isEmpty ? "none" : declaration.extensions.joined(separator: " ")),
            ("MIME types", declaration.mimeTypes.isEmpty ? "none" : declaration.mimeTypes.joined(separator: " ")),
            ("Declared", origin(declaration)),
        ]
        rows += detailRows(details)
        return rows.map { ($0.0 + ":").padding(to: 14) + $0.1 + "\n" }.joined()
    }

    /// UTTypeIconFile(s) and UTTypeReferenceURL, when the declaration gave them.
    static func detailRows(_ details: TypeDetails?) -> [(String, String)] {
        guard let details else { return [] }
        return (details.iconFiles.isEmpty ? [] : [("Icons", details.iconFiles.joined(separator: " "))])
            + (details.referenceURL.map { [("Reference", $0)] } ?? [])
    }

    static func describeJSON(_ identifier: String, in database: TypeDatabase, details: TypeDetails? = nil) -> String {
        guard let declaration = database.declaration(for: identifier) else { return "null" }
        return JSONText.object([
            ("identifier", JSON.quote(identifier)),
            ("description", JSON.quote(declaration.description)),
            ("conformsTo", JSONText.array(declaration.conformsTo)),
            ("conformanceChain", JSONText.array(database.conformanceChain(of: identifier))),
            ("extensions", JSONText.array(declaration.extensions)),
            ("mimeTypes", JSONText.array(declaration.mimeTypes)),
            ("declared", JSON.quote(origin(declaration))),
            ("location", declaration.origin.location.map { JSON.quote($0.description) } ?? "null"),
            ("iconFiles", JSONText.array(details?.iconFiles ?? [])),
            ("referenceURL", details?.referenceURL.map(JSON.quote) ?? "null"),
        ])
    }

    static func listText(_ database: TypeDatabase) -> String {
        let identifiers = database.allIdentifiers
        let width = (identifiers.map(\.count).max() ?? 0) + 2
        return identifiers.map { identifier in
            identifier.padding(to: width) + (database.declaration(for: identifier)?.description ?? "") + "\n"
        }.joined()
    }

    static func listJSON(_ database: TypeDatabase) -> String {
        let objects = database.allIdentifiers.map { identifier in
            JSONText.object([
                ("identifier", JSON.quote(identifier)),
                ("description", JSON.quote(database.declaration(for: identifier)?.description ?? "")),
            ])
        }
        return "[" + objects.joined(separator: ",\n") + "]\n"
    }

    /// Declared identifiers by their direct parents, each list sorted.
    static func children(in database: TypeDatabase) -> [String: [String]] {
        var children: [String: [String]] = [:]
        for identifier in database.allIdentifiers {
            for parent in database.declaration(for: identifier)?.conformsTo ?? [] {
                children[parent, default: []].append(identifier)
            }
        }
        return children
    }

    /// The subtree under `identifier`, two spaces deeper per level; a type with several parents is under each.
    static func treeText(_ identifier: String, in database: TypeDatabase, children: [String: [String]],
                         depth: Int = 0, path: Set<String> = []) -> String {
        let description = database.declaration(for: identifier)?.description ?? ""
        var text = String(repeating: "  ", count: depth) + identifier
            + (description.isEmpty ? "" : " (\(description))") + "\n"
        for child in children[identifier] ?? [] where !path.contains(child) {
            text += treeText(child, in: database, children: children, depth: depth + 1, path: path.union([identifier]))
        }
        return text
    }

    static func treeJSON(_ identifier: String, in database: TypeDatabase, children: [String: [String]],
                         path: Set<String> = []) -> String {
        let nested = (children[identifier] ?? []).filter { !path.contains($0) }.map {
            treeJSON($0, in: database, children: children, path: path.union([identifier]))
        }
        return JSONText.object([
            ("identifier", JSON.quote(identifier)),
            ("description", JSON.quote(database.declaration(for: identifier)?.description ?? "")),
            ("children", "[" + nested.joined(separator: ",") + "]"),
        ])
    }
}
