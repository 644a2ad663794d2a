import InboxCore
import InboxSystem

extension Inspection {
    /// A directory as the agent would take it from a drop Inbox: a package document typed by its name's extension and
    /// its format's marker (`TypeResolver.decidePackage`), walked within the agent's bounds (`PackageTree.check`); what
    /// the walk refuses is said as the note the agent's refusal would be. `directory` is the very inode that was opened
    /// without following a link; a directory that is no package type's is said to be one the agent moves aside.
    func inspectPackage(_ directory: FileDescriptor, status st: FileStatus, path: String,
                        readingAttribute: Bool) -> Result<FileReport, InspectionError> {
        let name = lastPathComponent(path)
        let database = catalog.database
        var explicit = readingAttribute
            ? ExtendedAttributes(directory).readString(SenderAttribute.contentType, limit: MetadataLimits.contentTypeBytes)
            : nil
        if readingAttribute && explicit == nil, let parent = try? Directory(path: parentPath(path)),
           case .read(let bytes) = parent.readSidecar(of: Array(name.utf8), owner: st.st_uid) {
            explicit = Sidecar.parse(bytes).metadata.contentType
        }
        var refusal: String?
        var summary = PackageSummary(entries: nil, bytes: nil)
        var checked: PackageManifest?
        switch PackageTree.check(directory, limits: settings.packageLimits) {
        case .success(let manifest):
            summary = PackageSummary(entries: manifest.entryCount, bytes: manifest.totalBytes)
            checked = manifest
        case .failure(let refused):
            refusal = refused.passes
                ? "the package \(refused.reason): the agent would check it again, then refuse it if it still changes"
                : "the package \(refused.reason): from a drop Inbox the agent would refuse it and move it to failed/"
        }
        // The agent takes a directory by its name alone: a content-type attribute does not make one a package.
        if database.packageIdentifier(forDirectoryNamed: name) == nil {
            refusal = "a directory whose name has no package type's extension: from a drop Inbox the agent would move "
                + "it aside to failed/"
        }
        // As the agent types one it took (`TypeInspector.inspectPackage`); one it would refuse is typed from the names
        // directly in it, for what the report can say.
        let resolved = checked.map { manifest in
            inspector.inspectPackage(name: name, explicit: explicit, manifest: manifest, in: database).resolved
        } ?? TypeResolver.decidePackage(name: name, explicit: explicit, topLevel: Self.topLevel(of: path), in: database)
        let absolute = path.hasPrefix("/") ? path : (CurrentProcess.workingDirectory ?? ".") + "/" + path
        var report = FileReport(name: name, path: path, url: fileURL(forPath: absolute), resolved: resolved,
                                sniffed: nil, sniffNote: "a package: typed by its extension and its format's marker",
                                refusal: refusal)
        report.package = summary
        if catalog.hasBindings {
            report.inbox = catalog.binding(forInbox: parentPath(absolute)) != nil ? parentPath(absolute)
                : ExtendedAttributes(directory).readString(AgentAttribute.inbox, limit: 4096)
        }
        return .success(report)
    }

    /// The names directly in a package the walk refused, for its marker: each looked at without following it.
    private static func topLevel(of path: String) -> [(name: String, isDirectory: Bool)] {
        guard let directory = try? Directory(path: path), let names = try? directory.entries() else { return [] }
        return names.prefix(1000).compactMap { name in
            guard let text = String(validating: name, as: UTF8.self) else { return nil }
            let kind = (try? directory.status(of: name))?.map { EntryKind(mode: $0.st_mode) }
            return (text, kind == .directory)
        }
    }
}
