import InboxCore

/// Turns an opened file into an `Arrival`: reads what its sender attached — bounded and checked, from its extended
/// attributes and, for what they lack, from its sidecar — and records a new delivery on a dropped file. Problems with
/// the metadata are warnings, never fatal: the file is delivered without what was wrong.
final class ArrivalReader {
    /// How an entry was taken (`take`).
    enum Taken {
        /// A regular file, or a package document with its check's finding; its `file` is the caller's to close.
        case arrival(Arrival)
        case gone
        /// Not a document: to be moved aside unopened (`Quarantine.moveAside`), with why when it is a directory.
        case notADocument(EntryKind, why: String?)
        case failed(SystemError)
    }

    /// Why a directory is not taken (the warning `Quarantine.moveAside` writes).
    static let madeInPlace = "a directory made in place is never taken: rename a finished directory in"
    static let notAPackage = "not a package document: its name's extension names no package type"

    private let logger: Logger
    /// The types a directory's name is judged by (set by the router, swapped with its catalog); nil: no directory is
    /// a package document.
    var database: TypeDatabase?
    /// MaxPackageDepth=, MaxPackageEntries=, MaxPackageSize=: what a package's check allows.
    var packageLimits = PackageLimits()
    /// How a package's tree is checked where it is found: `PackageTree.check`; tests change the tree at a known point
    /// of its walk here.
    var checkPackage: (FileDescriptor, PackageLimits) -> Result<PackageManifest, PackageRefusal> = {
        PackageTree.check($0, limits: $1)
    }
    /// Room for the largest attribute read (the annotation), allocated once.
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: MetadataLimits.annotationBytes + 1, alignment: 8)

    init(logger: Logger) {
        self.logger = logger
    }

    deinit { scratch.deallocate() }

    /// Takes `name` in `directory` as intake does: a regular file is opened (`openRegular`, nothing more for it); a
    /// directory whose name is a package type's is opened (`openPackage`) and its tree checked; anything else is not
    /// a document. A directory that `madeInPlace` (IN_CREATE) is never taken: it cannot have arrived complete. A
    /// dropped directory is judged by its name, one the agent holds by the name recorded on it.
    func take(_ name: [UInt8], in directory: Directory, origin: Arrival.Origin, lookForSidecar: Bool = true,
              madeInPlace: Bool = false) -> Taken {
        switch directory.openRegular(name) {
        case .opened(let file):
            return .arrival(arrival(of: file, named: name, in: directory, origin: origin, lookForSidecar: lookForSidecar))
        case .gone:
            return .gone
        case .failed(let error):
            return .failed(error)
        case .refused(.directory):
            return package(name, in: directory, origin: origin, lookForSidecar: lookForSidecar, madeInPlace: madeInPlace)
        case .refused(let kind):
            return .notADocument(kind, why: nil)
        }
    }

    /// A directory: a package document opened and checked, or not a document.
    private func package(_ name: [UInt8], in directory: Directory, origin: Arrival.Origin, lookForSidecar: Bool,
                         madeInPlace: Bool) -> Taken {
        if madeInPlace { return .notADocument(.directory, why: Self.madeInPlace) }
        guard let database else { return .notADocument(.directory, why: Self.notAPackage) }
        if origin == .dropped, database.packageIdentifier(forDirectoryNamed: FileNames.sanitized(name)) == nil {
            return .notADocument(.directory, why: Self.notAPackage)
        }
        switch directory.openPackage(name) {
        case .opened(let root):
            var arrival = arrival(of: root, named: name, in: directory, origin: origin, lookForSidecar: lookForSidecar)
            if origin == .held, database.packageIdentifier(forDirectoryNamed: arrival.cleanName) == nil {
                root.descriptor.close()
                return .notADocument(.directory, why: Self.notAPackage)
            }
            switch checkPackage(root.descriptor, packageLimits) {
            case .success(let manifest): arrival.kind = .package(manifest)
            case .failure(let refusal): arrival.kind = .refusedPackage(refusal)
            }
            return .arrival(arrival)
        case .gone:
            return .gone
        case .refused(let kind):
            return .notADocument(kind, why: nil)
        case .failed(let error):
            return .failed(error)
        }
    }

    /// The arrival of `file`, found as `name` in `directory`. Its sidecar is looked for unless `lookForSidecar` is
    /// false: its Inbox's events say it has none (`SidecarSightings`).
    func arrival(of file: OpenedFile, named name: [UInt8], in directory: Directory, origin: Arrival.Origin,
                 lookForSidecar: Bool = true) -> Arrival {
        let shown = directory.child(displayName(name))
        // Listed once: most files carry few of the attributes read here, or none.
        let attributes = ExtendedAttributes(file.descriptor).listed()
        let (metadata, hasSidecar) = senderMetadata(attributes, file: file, name: name, in: directory, shown: shown,
                                                    lookForSidecar: lookForSidecar)
        switch origin {
        case .dropped:
            // Recorded on the file only once it is the agent's (`Arrival.stamp`), never in its sender's Inbox.
            let id = Self.newDeliveryID()
            return Arrival(directory: directory, name: name, file: file, origin: origin, id: id,
                           sourceUID: file.status.st_uid, attempts: 0, metadata: metadata, hasSidecar: hasSidecar)
        case .held:
            let stored = AgentAttribute.delivery(attributes)
            // An attempt started and never ended (the last run crashed) counts, and the next one is a redelivery.
            let recorded = RecordedAttempts(failed: attributes.readString(AgentAttribute.attempts, limit: 16),
                                            started: attributes.readString(AgentAttribute.started, limit: 32))
            var arrival = Arrival(directory: directory, name: name, file: file, origin: origin,
                                  id: stored?.id ?? Self.newDeliveryID(), sourceUID: stored?.sourceUID ?? file.status.st_uid,
                                  attempts: recorded.count, metadata: metadata, hasSidecar: hasSidecar)
            arrival.redelivered = recorded.redelivered
            arrival.recordedName = stored?.name
            return arrival
        }
    }

    /// The attributes, and for what they lack the sidecar beside the file (`hasSidecar`: one was read).
    private func senderMetadata(_ attributes: ExtendedAttributes, file: OpenedFile, name: [UInt8], in directory: Directory,
                                shown: String, lookForSidecar: Bool) -> (metadata: SenderMetadata, hasSidecar: Bool) {
        let fields: KeyValuePairs<String, String?> = ["INBOX_FILE": shown]
        var metadata = SenderMetadata()
        switch attributes.read(SenderAttribute.sourceApp, limit: MetadataLimits.sourceAppBytes, scratch: scratch) {
        case .value(let bytes):
            if let text = String(validating: bytes, as: UTF8.self), SourceApplication.isValid(text) {
                metadata.sourceApp = text
            } else {
                logger.log(.warning, "Ignoring invalid source application on \(shown)", fields: fields)
            }
        case .tooLarge(let size):
            logger.log(.warning, "Ignoring source application of \(size) bytes on \(shown)", fields: fields)
        case .absent, .failed: break
        }
        switch attributes.read(SenderAttribute.annotation, limit: MetadataLimits.annotationBytes, scratch: scratch) {
        case .value(let bytes):
            if let problem = JSON.validate(bytes) {
                logger.log(.warning, "Annotation on \(shown) is not valid JSON (\(problem)); delivering without it",
                           fields: fields)
            } else {
                metadata.annotation = bytes
            }
        case .tooLarge(let size):
            logger.log(.warning, "Annotation on \(shown) is \(size) bytes, over the \(MetadataLimits.annotationBytes) "
                       + "limit; delivering without it", fields: fields)
        case .absent, .failed: break
        }
        metadata.contentType = attributes.readString(SenderAttribute.contentType, limit: MetadataLimits.contentTypeBytes)
        if let handler = attributes.readString(SenderAttribute.handler, limit: MetadataLimits.sourceAppBytes) {
            if HandlerIdentifier.isValid(handler) {
                metadata.handler = handler
                metadata.overridesHandlerCheck = attributes.readString(SenderAttribute.handlerOverride, limit: 8) == "yes"
            } else {
                logger.log(.warning, "Ignoring invalid handler choice on \(shown)", fields: fields)
            }
        }
        guard lookForSidecar else { return (metadata, false) }
        switch directory.readSidecar(of: name, owner: file.status.st_uid) {
        case .absent:
            return (metadata, false)
        case .refused(let reason):
            logger.log(.warning, "Ignoring and removing the sidecar of \(shown): \(reason)", fields: fields)
            directory.removeSidecar(of: name)
            return (metadata, false)
        case .read(let bytes):
            let (carried, problems) = Sidecar.parse(bytes)
            for problem in problems {
                logger.log(.warning, "Sidecar of \(shown): \(problem); delivering without it", fields: fields)
            }
            return (metadata.merging(carried), true)
        }
    }

    /// 128 random bits as 32 lowercase hex digits, like a journal id (sd_id128_randomize(3)).
    static func newDeliveryID() -> String {
        return withUnsafeBytes(of: sys_sd_id128_randomize()) { bytes in
            String(unsafeUninitializedCapacity: 32) { text in
                let digits: StaticString = "0123456789abcdef"
                for (index, byte) in bytes.enumerated() {
                    text[2 * index] = digits.utf8Start[Int(byte >> 4)]
                    text[2 * index + 1] = digits.utf8Start[Int(byte & 0xF)]
                }
                return 32
            }
        }
    }
}
