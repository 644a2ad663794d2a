import Glibc
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
        matched, and the candidate handlers, best first, the chosen one marked with the reason. The exit
        status is 1 when a file could not be read; the others are still shown.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file to inspect (it is opened read-only and never moved)

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
                let selection = inspection.select(report.resolved.identifier)
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
        let database = inspection.loaded.database
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
        if let mismatch = type.mismatch { rows.append(("Mismatch", mismatchText(mismatch))) }
        for note in type.diagnostics + (report.refusal.map { [$0] } ?? []) { rows.append(("Note", note)) }
        let icons = inspection.icons(selection.chosen)
        rows.append(("Icons", icons.isEmpty ? "none" : icons.map { $0.path + ($0.exists ? "" : " (missing)") }
            .joined(separator: " ")))
        var text = rows.map { ($0.0 + ":").padding(to: 14) + $0.1 + "\n" }.joined()
        text += "Handlers:\n" + HandlersCommand.candidatesText(selection, inspection)
        return text
    }

    static func mismatchText(_ mismatch: ResolvedType.Mismatch) -> String {
        let claim = mismatch.claimSource == .attribute ? "its content-type attribute says" : "its name says"
        return "\(claim) \(mismatch.claimed) but the content is \(mismatch.content); "
            + (mismatch.contentWon ? "typed by its content" : "kept \(mismatch.claimed)")
    }

    static func reportJSON(_ report: FileReport, _ selection: Selection, _ inspection: Inspection) -> String {
        let database = inspection.loaded.database
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
            ("notes", JSONText.array(type.diagnostics + [report.sniffNote, report.refusal].compactMap { $0 })),
            ("icons", "[" + icons.joined(separator: ",") + "]"),
        ] + HandlersCommand.selectionJSONPairs(selection, inspection))
    }
}

/// One file as the agent would see it.
struct FileReport {
    let name: String
    let path: String
    let url: String
    let resolved: ResolvedType
    /// libmagic's MIME type for the first bytes; nil when not sniffed.
    let sniffed: String?
    /// Why the content was not sniffed, when it was not.
    let sniffNote: String?
    /// Why the agent would refuse the file from a drop Inbox, if it would.
    let refusal: String?
}

/// Why a file could not be inspected.
struct InspectionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The agent's view, loaded once: registrations, types, preferences, and libmagic (in-process, as file(1) does).
final class Inspection {
    let settings: AgentSettings
    let loaded: LoadedRegistrations
    let preferences: HandlerPreferences
    private let sniffer: ContentSniffer?

    /// nil (after saying why) when libmagic cannot be loaded: the agent would refuse to start.
    init?(_ settings: AgentSettings) {
        self.settings = settings
        loaded = Self.loadRegistrations(settings)
        // Problems in defaults.conf are the agent's warnings: shown, and the rest of the file still counts.
        let (preferences, diagnostics, problem) = Preferences.load(settings.defaultsFile)
        for diagnostic in diagnostics { Inboxctl.write(diagnostic.description + "\n", to: 2) }
        if let problem { Inboxctl.write("inboxctl: \(problem)\n", to: 2) }
        self.preferences = preferences
        if settings.contentSniffing {
            do throws(SniffError) {
                sniffer = try ContentSniffer()
            } catch {
                Inboxctl.write("inboxctl: cannot load libmagic: \(error)\n", to: 2)
                return nil
            }
        } else {
            sniffer = nil
        }
    }

    /// The registrations and types the agent would load (MIME database, then handlers.d).
    static func loadRegistrations(_ settings: AgentSettings) -> LoadedRegistrations {
        let mime = MIMEDatabaseLoader.load(directories: settings.mimeDirectories).database
        return RegistrationLoader.load(directories: settings.handlerDirectories, mime: mime)
    }

    /// The ranked candidates for a type, as the agent chooses.
    func select(_ type: String) -> Selection {
        HandlerSelector.select(type: type, index: loaded.index, database: loaded.database, preferences: preferences,
                               ranking: .all)
    }

    /// Opens the file as the agent would (no symlink, no blocking, a regular file) and resolves its type, with its
    /// content-type attribute unless `readingAttribute` is false (a file about to be sent without it).
    func inspect(_ path: String, readingAttribute: Bool = true) -> Result<FileReport, InspectionError> {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        if fd < 0 {
            return .failure(InspectionError(errno == ELOOP ? "is a symbolic link" : "cannot open: \(Errno.current)"))
        }
        let file = FileDescriptor(rawValue: fd)
        defer { file.close() }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(InspectionError("cannot stat: \(Errno.current)")) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(InspectionError("not a regular file")) }

        let name = lastPathComponent(path)
        var explicit = readingAttribute
            ? ExtendedAttributes(file).readString(SenderAttribute.contentType, limit: MetadataLimits.contentTypeBytes) : nil
        if readingAttribute && explicit == nil {
            // A file waiting in an Inbox may carry its type in its sidecar, which the agent reads as well.
            if let directory = try? Directory(path: parentPath(path)),
               case .read(let bytes) = directory.readSidecar(of: Array(name.utf8), owner: st.st_uid) {
                explicit = Sidecar.parse(bytes).metadata.contentType
            }
        }
        let claim = TypeResolver.claim(explicit: explicit, fileName: name, in: loaded.database)
        var sniffed: String?, note: String?
        if let sniffer {
            switch sniffer.sniff(file, classifyingText: claim.needsTextClassified) {
            case .success(let mime): sniffed = mime
            case .failure(let error): note = "cannot sniff: \(error); its name and attribute decide its type"
            }
        } else {
            note = "ContentSniffing=no"
        }
        let resolved = TypeResolver.decide(claim, content: sniffed, in: loaded.database)
        let absolute = path.hasPrefix("/") ? path : (ProcessEnvironment.currentDirectory() ?? ".") + "/" + path
        return .success(FileReport(name: name, path: path, url: fileURL(forPath: absolute), resolved: resolved,
                                   sniffed: sniffed, sniffNote: note,
                                   refusal: st.st_nlink > 1 ? "it has \(st.st_nlink) links: from a drop Inbox the agent "
                                       + "would refuse it (a hard link) and move it aside to failed/" : nil))
    }

    /// The icons of a candidate's document type, resolved against its registration file's directory.
    func icons(_ candidate: Candidate?) -> [(path: String, exists: Bool)] {
        guard let candidate, let registration = loaded.registration(candidate.handler) else { return [] }
        let directory = registration.path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            .joined(separator: "/")
        return candidate.documentType.iconFiles.map { file in
            let path = file.hasPrefix("/") ? file : (directory.isEmpty ? file : directory + "/" + file)
            var st = stat()
            return (path, stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG)
        }
    }
}
