import InboxCore
import InboxSystem

/// `inboxctl info FILE... [--json]`: what the agent would make of each file, without moving it.
enum InfoCommand: InboxctlCommand {
    static let name = "info"
    static let summary = "Show a file's type and the handler it would get"
    static let usage = "inboxctl info FILE... [--json]"

    static let help = """
        OVERVIEW: Show a file's type, how it was decided, and the handlers that would open it.

        For each FILE: its name and file:// URL, its type and conformance chain, its MIME type, what
        decided the type (attribute, extension, content or fallback, as INBOX_TYPE_SOURCE in the
        journal), what its content was sniffed as and any mismatch, the icons of the document type that
        matched, and the candidate handlers, best first, the chosen one marked with the reason (a
        name pattern, or the Inbox's binding when the file lies in a bound Inbox). A FILE that is a
        directory is a package document (an .rtfd, a .pages package, a .bundle): typed by its
        extension and its format's marker, with its entries and bytes, and what the agent would
        refuse in it. The exit status is 1 when a file could not be read; the others are still shown.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file or package to inspect (opened read-only, never moved)

        OPTIONS:
          --json                  Print one JSON document (an array, one object per file)
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.flag("--json")], agentOptions: true, positionals: .any)

    /// The usage errors that the options one by one cannot show.
    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if parsed.positionals.isEmpty { throw UsageError(message: "missing expected argument '<FILE>'") }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        let json = parsed.flag("--json")
        guard let settings = parsed.agent.settings(), let inspection = Inspection(settings) else { return 1 }
        var status: CInt = 0
        var documents: [String] = []
        for path in parsed.positionals {
            switch inspection.inspect(path) {
            case .failure(let message):
                Inboxctl.write("inboxctl: \(path): \(message)\n", to: 2)
                status = 1
            case .success(let report):
                let selection = inspection.select(report)
                documents.append(json ? reportJSON(report, selection, inspection)
                                      : reportText(report, selection, inspection))
            }
        }
        if json {
            Inboxctl.write("[" + documents.joined(separator: ",\n") + "]\n", to: 1)
        } else {
            Inboxctl.write(documents.joined(separator: "\n"), to: 1)
        }
        return status
    }

    static func reportText(_ report: FileReport, _ selection: Selection, _ inspection: Inspection) -> String {
        let database = inspection.catalog.database
        let type = report.resolved
        let description = database.declaration(for: type.identifier)?.description
        var rows: [(String, String)] = [
            ("Name", report.name),
            ("URL", report.url),
            ("Type", type.identifier + (description.map { " (\($0))" } ?? "")),
            ("Conformance", database.conformanceChain(of: type.identifier).joined(separator: " ")),
            ("MIME type", type.mimeType ?? "none"),
            ("Decided by", type.source.rawValue),
            ("Content", report.sniffed.map { mime in mime + (type.contentIdentifier.map { " (\($0))" } ?? "") }
                ?? report.sniffNote ?? "not sniffed"),
        ]
        if let package = report.package { rows.append(("Package", packageText(package))) }
        if let mismatch = type.mismatch { rows.append(("Mismatch", mismatchText(mismatch))) }
        for note in type.diagnostics + (report.refusal.map { [$0] } ?? []) { rows.append(("Note", note)) }
        if let binding = inspection.subject(of: report).binding {
            rows.append(("Inbox", "\(binding.inbox), bound to \(binding.handler)"))
        }
        let icons = inspection.icons(selection.chosen)
        rows.append(("Icons", icons.isEmpty ? "none" : icons.map { $0.path + ($0.exists ? "" : " (missing)") }
            .joined(separator: " ")))
        // What the type's declaration says of itself (UTTypeIconFile(s), UTTypeReferenceURL), when it says it.
        rows += TypesCommand.detailRows(inspection.loaded.typeDetails(of: type.identifier)).map { ($0.0 == "Icons" ? "Type icons" : $0.0, $0.1) }
        var text = rows.map { ($0.0 + ":").padding(to: 14) + $0.1 + "\n" }.joined()
        text += "Handlers:\n" + HandlersCommand.candidatesText(selection, inspection)
        return text
    }

    /// "a directory of 3 entries, 1234 bytes", or without the counts when it could not be walked.
    static func packageText(_ package: PackageSummary) -> String {
        guard let entries = package.entries, let bytes = package.bytes else { return "a directory (not walked in full)" }
        return "a directory of \(entries) entr\(entries == 1 ? "y" : "ies"), \(bytes) bytes"
    }

    static func mismatchText(_ mismatch: ResolvedType.Mismatch) -> String {
        TypeInspector.statement(of: mismatch) + "; " + TypeInspector.verdict(of: mismatch)
    }

    static func reportJSON(_ report: FileReport, _ selection: Selection, _ inspection: Inspection) -> String {
        let database = inspection.catalog.database
        let type = report.resolved
        let mismatch = type.mismatch.map { mismatch in
            JSONText.object([
                ("claimed", JSON.quote(mismatch.claimed)), ("claimSource", JSON.quote(mismatch.claimSource.rawValue)),
                ("content", JSON.quote(mismatch.content)), ("contentWon", String(mismatch.contentWon)),
            ])
        }
        let icons = inspection.icons(selection.chosen).map { icon in
            JSONText.object([("path", JSON.quote(icon.path)), ("exists", String(icon.exists))])
        }
        return JSONText.object([
            ("name", JSON.quote(report.name)),
            ("path", JSON.quote(report.path)),
            ("url", JSON.quote(report.url)),
            ("contentType", JSON.quote(type.identifier)),
            ("description", database.declaration(for: type.identifier).map { JSON.quote($0.description) } ?? "null"),
            ("contentTypes", JSONText.array(database.conformanceChain(of: type.identifier))),
            ("mimeType", type.mimeType.map(JSON.quote) ?? "null"),
            ("typeSource", JSON.quote(type.source.rawValue)),
            ("sniffedMIMEType", report.sniffed.map(JSON.quote) ?? "null"),
            ("sniffedType", type.contentIdentifier.map(JSON.quote) ?? "null"),
            ("mismatch", mismatch ?? "null"),
            ("package", report.package.map { package in
                JSONText.object([("entries", package.entries.map { String($0) } ?? "null"),
                                 ("bytes", package.bytes.map { String($0) } ?? "null")])
            } ?? "null"),
            ("notes", JSONText.array(type.diagnostics + [report.sniffNote, report.refusal].compactMap { $0 })),
            ("binding", HandlersCommand.bindingJSON(inspection.subject(of: report).binding)),
            ("icons", "[" + icons.joined(separator: ",") + "]"),
            ("typeIconFiles", JSONText.array(inspection.loaded.typeDetails(of: type.identifier)?.iconFiles ?? [])),
            ("typeReferenceURL", inspection.loaded.typeDetails(of: type.identifier)?.referenceURL.map(JSON.quote) ?? "null"),
        ] + HandlersCommand.selectionJSONPairs(selection, inspection))
    }
}
