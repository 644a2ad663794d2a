import InboxCore
import InboxSystem

/// `inboxctl send DIR`: a directory sent as one package document (docs/design.md, Package documents). It must be a
/// package by its name's extension (or `--type`, which then gives the name its extension); it is copied under a hidden
/// name in the Inbox entry by entry through descriptors (`PackageTree.copy`: nothing inside is followed, and whatever
/// the agent would refuse, a link, a hard link, a FIFO, a device, a mount point, more than its bounds, is refused here
/// before anything appears), its metadata set on the copy's directory (or in a sidecar), synced, and renamed into place.
final class PackageSend {
    private let settings: AgentSettings
    private var loaded: TypeDatabase?

    init(settings: AgentSettings) { self.settings = settings }

    /// The agent's types, with its registrations' (a registration may declare package types): loaded on the first
    /// directory, never for plain files.
    var database: TypeDatabase {
        if let loaded { return loaded }
        let mime = MIMEDatabaseLoader.load(directories: settings.mimeDirectories).database
        let database = RegistrationLoader.load(directories: settings.handlerDirectories, mime: mime).database
        loaded = database
        return database
    }

    typealias Failure = SendCommand.Failure

    /// Sends the open directory `source` as `name`; on any failure nothing is left in the Inbox.
    func send(_ source: FileDescriptor, name: String, request: SendCommand.Request,
              into inbox: Directory) -> Result<SendCommand.Sent, Failure> {
        let placed: String
        switch packageName(name, type: request.contentType) {
        case .success(let chosen): placed = chosen
        case .failure(let failure): return .failure(failure)
        }
        let hidden = Array((".inboxctl-send-" + SendCommand.randomHex(12)).utf8)
        func fail(_ message: String) -> Result<SendCommand.Sent, Failure> {
            _ = PackageTree.remove(hidden, in: inbox)
            return .failure(Failure(message: message))
        }
        let manifest: PackageManifest
        switch PackageTree.copy(source, into: inbox, as: hidden, limits: settings.packageLimits) {
        case .success(let copied): manifest = copied
        case .failure(.refused(let refusal)): return fail("the package \(refusal.reason); nothing was sent")
        case .failure(.failed(let error)): return fail("cannot copy it: \(error)")
        }
        if Interruption.signal != 0 { return fail("interrupted") }
        let copy: OpenedFile
        switch inbox.openPackage(hidden) {
        case .opened(let opened): copy = opened
        case .gone: return fail("its copy \(inbox.child(displayName(hidden))) is gone")
        case .refused(let kind): return fail("its copy \(inbox.child(displayName(hidden))) is a \(kind.rawValue)")
        case .failed(let error): return fail("\(error)")
        }
        let metadata = SenderMetadata(sourceApp: request.sourceApp, annotation: request.annotation.map { Array($0.utf8) },
                                      contentType: request.contentType, handler: request.handler,
                                      overridesHandlerCheck: request.overridesHandlerCheck)
        let sidecar: [UInt8]?
        switch SendCommand.setAttributes(metadata, on: copy.descriptor) {
        case .success(let fits): sidecar = fits ? nil : Sidecar.document(metadata)
        case .failure(let failure):
            copy.descriptor.close()
            return fail(failure.message)
        }
        // The copy synced its entries; this makes the attributes just set on its directory durable too.
        do { try copy.descriptor.fsync() } catch {
            copy.descriptor.close()
            return fail("fsync: \(error)")
        }
        copy.descriptor.close()
        if Interruption.signal != 0 { return fail("interrupted") }
        switch inbox.publish(hidden, preferred: placed, sidecar: sidecar) {
        case .success(let name):
            inbox.syncEntries()
            return .success(SendCommand.Sent(path: inbox.child(name), package: manifest))
        case .failure(let error):
            return fail("cannot put it in place: \(error)")
        }
    }

    /// The name the package goes by in the Inbox: `name` when its extension is a package type's; with `--type` (a
    /// package type) a name without one gets that type's preferred extension, since the agent takes a directory by its
    /// name alone. Anything else is refused, naming the package types' extensions.
    func packageName(_ name: String, type: String?) -> Result<String, Failure> {
        let database = database
        if let type {
            guard database.isPackage(type) else {
                return .failure(Failure(message: "it is a directory, and \(type) is not a package type: a directory is "
                                        + "sent whole only as a package document ('inboxctl types --tree "
                                        + "\(TypeDatabase.packageType)' lists them)"))
            }
            if database.packageIdentifier(forDirectoryNamed: name) != nil { return .success(name) }
            guard let ext = database.preferredExtension(of: type) else {
                return .failure(Failure(message: "it is a directory, and \(type) has no extension to name it by: "
                                        + "give it a name with --name NAME.EXT"))
            }
            return .success(FileNames.sanitized(Array((name + "." + ext).utf8)))
        }
        if database.packageIdentifier(forDirectoryNamed: name) != nil { return .success(name) }
        return .failure(Failure(message: "it is a directory whose name has no package type's extension "
                                + "(\(Self.extensionsText(database))): the agent takes a directory only as a package "
                                + "document; give it one (--name NAME.EXT) or its type (--type UTI)"))
    }

    /// ".app, .key, ... .rtfd" (past `shown`, "and N more"), then where the types are listed.
    static func extensionsText(_ database: TypeDatabase, shown: Int = 24) -> String {
        let identifiers = database.allIdentifiers.filter { $0 != TypeDatabase.packageType && database.isPackage($0) }
        let extensions = Set(identifiers.flatMap { database.declaration(for: $0)?.extensions ?? [] }).sorted()
        let listed = extensions.prefix(shown).map { "." + $0 }.joined(separator: ", ")
        let more = extensions.count > shown ? " and \(extensions.count - shown) more" : ""
        return listed + more + "; 'inboxctl types --tree \(TypeDatabase.packageType)' lists them"
    }
}
