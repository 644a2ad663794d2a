import InboxCore
import InboxSystem

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
    /// The drop Inbox whose binding the file is under: the one it lies in, or the one the agent recorded on it.
    var inbox: String?
    /// For a package document (a directory), its entries and bytes as checked; nil for a file.
    var package: PackageSummary? = nil
}

/// A package document as `info` shows it: how many entries below its directory and how many bytes in its files, when
/// it could be walked (`PackageTree.check`).
struct PackageSummary {
    let entries: Int?
    let bytes: Int64?
}

/// Why a file could not be inspected.
struct InspectionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The agent's view, loaded once: its handler catalog, and its type inspection with libmagic in process (as
/// file(1) does) instead of in a sandboxed child.
final class Inspection {
    let settings: AgentSettings
    let catalog: HandlerCatalog
    let inspector: TypeInspector

    /// nil (after saying why) when libmagic cannot be loaded: the agent would refuse to start. `identities` as the
    /// agent would resolve them, for a command that runs handlers.
    init?(_ settings: AgentSettings, identities: HandlerCatalog.IdentityLookup = .skip) {
        self.settings = settings
        catalog = HandlerCatalog.load(settings, identities: identities)
        // Problems in defaults.conf are the agent's warnings: shown, and the rest of the file still counts.
        for case .diagnostic(let diagnostic) in catalog.problems where diagnostic.location.file == settings.defaultsFile {
            Inboxctl.write(diagnostic.description + "\n", to: 2)
        }
        for case .message(let text, let file, _) in catalog.problems where file == settings.defaultsFile {
            Inboxctl.write("inboxctl: \(text)\n", to: 2)
        }
        guard settings.contentSniffing else {
            inspector = TypeInspector(sniffer: nil)
            return
        }
        do throws(SniffError) {
            let sniffer = try ContentSniffer()
            // The agent's sniffer asks shared-mime-info's rules first; so does inboxctl, from the same directories.
            sniffer.rules = MIMEDatabaseLoader.loadMagic(directories: settings.mimeDirectories).rules
            inspector = TypeInspector(sniffer: sniffer)
        } catch {
            Inboxctl.write("inboxctl: cannot load libmagic: \(error)\n", to: 2)
            return nil
        }
    }

    /// The registrations and types, as loaded.
    var loaded: LoadedRegistrations { catalog.loaded }

    /// The ranked candidates for a type, as the agent chooses.
    func select(_ type: String) -> Selection { catalog.candidates(for: type) }

    /// The ranked candidates for a file, as the agent would choose if it were dropped where it lies.
    func select(_ report: FileReport) -> Selection { catalog.candidates(for: subject(of: report)) }

    /// What the agent's choice for the file depends on: its type, the name it would be delivered as, and the binding
    /// of its Inbox (`inbox`, or one given: where it is about to be sent).
    func subject(of report: FileReport, inbox: String? = nil) -> Routing.Subject {
        Routing.Subject(type: report.resolved.identifier, name: FileNames.sanitized(Array(report.name.utf8)),
                        binding: (inbox ?? report.inbox).flatMap { catalog.binding(forInbox: $0) })
    }

    /// Opens the file as the agent would (no symlink, no blocking, a regular file) and resolves its type, with its
    /// content-type attribute unless `readingAttribute` is false (a file about to be sent without it).
    func inspect(_ path: String, readingAttribute: Bool = true) -> Result<FileReport, InspectionError> {
        let held: HeldDocument
        switch Self.open(path) {
        case .success(let opened): held = opened
        case .failure(let error): return .failure(error)
        }
        defer { held.descriptor.close() }
        return inspect(held, path: path, readingAttribute: readingAttribute)
    }

    /// A file or package directory opened as the agent opens one: never through a final symlink, never blocking.
    struct HeldDocument {
        let descriptor: FileDescriptor
        let status: FileStatus
    }

    /// Opens `path` for `inspect(_:path:)`; the caller closes the descriptor.
    static func open(_ path: String) -> Result<HeldDocument, InspectionError> {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking, .noControllingTerminal])
        } catch {
            return .failure(InspectionError(error == .tooManyLinks ? "is a symbolic link" : "cannot open: \(error)"))
        }
        do { return .success(HeldDocument(descriptor: file, status: try file.status())) } catch {
            file.close()
            return .failure(InspectionError("cannot stat: \(error)"))
        }
    }

    /// Resolves the type of a file (or package) already opened by `open`: what is checked is what the caller holds.
    func inspect(_ held: HeldDocument, path: String, readingAttribute: Bool = true) -> Result<FileReport, InspectionError> {
        let file = held.descriptor, st = held.status
        if EntryKind(mode: st.st_mode) == .directory {
            return inspectPackage(file, status: st, path: path, readingAttribute: readingAttribute)
        }
        guard EntryKind(mode: st.st_mode) == .regular else { return .failure(InspectionError("not a regular file")) }

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
        let resolved: ResolvedType, sniffed: String?, note: String?
        switch inspector.inspect(file, name: name, explicit: explicit, in: catalog.database, needs: catalog.contentNeeds) {
        case .success(let inspection):
            resolved = inspection.resolved
            sniffed = inspection.sniffedMIMEType
            note = inspection.sniffFailure.map { "cannot sniff: \(Self.reason($0)); its name and attribute decide its type" }
                ?? (inspector.sniffer == nil ? "ContentSniffing=no" : nil)
        case .failure(let failure):
            resolved = TypeResolver.resolve(explicit: explicit, fileName: name, in: catalog.database)
            sniffed = nil
            note = "cannot sniff: \(Self.reason(failure)); its name and attribute decide its type"
        }
        let absolute = path.hasPrefix("/") ? path : (CurrentProcess.workingDirectory ?? ".") + "/" + path
        var report = FileReport(name: name, path: path, url: fileURL(forPath: absolute), resolved: resolved,
                                sniffed: sniffed, sniffNote: note,
                                refusal: st.st_nlink > 1 ? "it has \(st.st_nlink) links: from a drop Inbox the agent "
                                    + "would refuse it (a hard link) and move it aside to failed/" : nil)
        if catalog.hasBindings {
            report.inbox = catalog.binding(forInbox: parentPath(absolute)) != nil ? parentPath(absolute)
                : ExtendedAttributes(file).readString(AgentAttribute.inbox, limit: 4096)
        }
        return .success(report)
    }

    /// libmagic's own words for an in-process failure.
    private static func reason(_ failure: SnifferProcess.Failure) -> String {
        if case .refused(let text) = failure { return text }
        return failure.description
    }

    /// The icons of a candidate's document type, resolved against its registration file's directory.
    func icons(_ candidate: Candidate?) -> [(path: String, exists: Bool)] {
        guard let candidate, let registration = catalog.registration(candidate.handler) else { return [] }
        let directory = registration.path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            .joined(separator: "/")
        return candidate.documentType.iconFiles.map { file in
            let path = file.hasPrefix("/") ? file : (directory.isEmpty ? file : directory + "/" + file)
            return (path, (try? FileSystem.status(path)).map { EntryKind(mode: $0.st_mode) } == .regular)
        }
    }
}
