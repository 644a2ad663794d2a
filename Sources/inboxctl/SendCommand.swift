import InboxCore
import InboxSystem

/// `inboxctl send`: atomic delivery into a drop Inbox, with the sender's metadata in extended attributes
/// (docs/design.md, Metadata that rides with a file).
enum SendCommand: InboxctlCommand {
    static let name = "send"
    static let summary = "Send files to their handlers through a drop Inbox"
    static let usage = "inboxctl send [--inbox DIR] [--source-app ID] [--annotation JSON] [--type UTI] [--name NAME] [--json] FILE...|-"

    static let help = """
        OVERVIEW: Send files to their handlers through a drop Inbox.

        Each FILE is copied to a hidden name in the Inbox, its metadata set as extended attributes
        (user.inbox.source-app, user.inbox.annotation, user.inbox.content-type), synced, and renamed
        into place, so the agent never sees half a file. Metadata the filesystem cannot hold in
        extended attributes goes into the hidden sidecar .NAME.inbox-meta, written before the
        rename. A name already taken becomes NAME-2.EXT, NAME-3.EXT... One line per file sent: its
        path in the Inbox. '-' reads the data from stdin; with --type and no --name it is named
        TYPE-XXXXXXXXXXXX.EXT from the type's last identifier component and preferred extension.

        A FILE that is a directory is sent whole, as one package document (an .rtfd, a .pages
        package, a .bundle): its name must end in a package type's extension, or --type names a
        package type and the name takes its extension. Its entries are copied to a hidden directory
        in the Inbox without following anything in it, its metadata set on that directory, synced,
        and renamed into place. What the agent would refuse in a package (a symbolic link, a hard
        link, a FIFO, socket or device, a mount point, more levels, entries or bytes than
        MaxPackageDepth=, MaxPackageEntries= and MaxPackageSize= allow) is refused here, with the
        entry that is why, and nothing is left in the Inbox.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file or package directory to send, or '-' for stdin

        OPTIONS:
          --inbox DIR             The drop Inbox (default: the agent's first Inbox)
          --source-app ID         The sending application's identifier (printable ASCII, no spaces)
          --annotation JSON       JSON handed to the handler (at most 65536 bytes)
          --type UTI              The content type (a UTI, a dyn.mime. identifier or a MIME type)
          --name NAME             The name in the Inbox (one FILE, or '-')
          --json                  Print one JSON document: each file's path in the Inbox, or why not
        \(AgentOptions.help(omitting: ["--inbox"]))
          -h, --help              Show help information

        """

    static let helpCommand = "inboxctl help send"

    struct Request {
        var sourceApp: String?
        var annotation: String?
        var contentType: String?
        var name: String?
        /// The name for stdin's data when no --name is given.
        var streamName: String?
        /// The handler chosen by `inboxctl open --with`, and whether `--force` overrides the agent's type check.
        var handler: String?
        var overridesHandlerCheck = false
    }

    static let options = CommandOptions([.value("--inbox"), .value("--source-app"), .value("--annotation"), .value("--type"),
                                         .value("--name"), .flag("--json")], agentOptions: true, positionals: .any)

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let resolved = parsed.agent.resolve() else { return 1 }
        let settings = resolved.settings
        var request = Request(sourceApp: parsed.value("--source-app"), annotation: parsed.value("--annotation"),
                              name: parsed.value("--name"))
        let files = parsed.positionals
        if let type = parsed.value("--type") {
            let mime = MIMEDatabaseLoader.load(directories: settings.mimeDirectories).database
            let database = RegistrationLoader.load(directories: settings.handlerDirectories, mime: mime).database
            guard let identifier = database.knownIdentifier(type) else {
                var message = "unknown type '\(type)'"
                if let close = Spelling.closest(to: type, among: database.allIdentifiers) {
                    message += "; did you mean '\(close)'?"
                }
                return Inboxctl.usageError(message, usage: usage, helpCommand: helpCommand)
            }
            request.contentType = identifier
            if files.contains("-") && request.name == nil {
                request.streamName = streamName(for: identifier, in: database)
            }
        }
        return deliver(files, request: request, inbox: parsed.value("--inbox"), settings: settings, json: parsed.flag("--json"),
                       hint: resolved.hint("inboxctl send"))
    }

    /// Sends each file in turn (after `admit` agrees, when given), printing its path in the Inbox; 1 if any failed,
    /// 128 + the signal when interrupted.
    /// With `json`, the paths are not printed one by one: one document at the end lists each file's path in the
    /// Inbox (`sent`) or why it was not sent (`failed`; also said on stderr).
    static func deliver(_ files: [String], request: Request, inbox: String?, settings: AgentSettings, json: Bool = false,
                        hint: String = "", admit: (String) -> Bool = { _ in true }) -> CInt {
        guard let directory = settings.openDropInbox(inbox, hint: hint) else { return 1 }
        Interruption.catchSignals()
        let packages = PackageSend(settings: settings)
        var status: CInt = 0
        var sent: [String] = [], failed: [String] = []
        for file in files {
            if Interruption.signal != 0 { break }
            guard admit(file) else {
                status = 1
                failed.append(JSONText.object([("file", JSON.quote(file)), ("error", JSON.quote("refused"))]))
                continue
            }
            switch send(file, request: request, into: directory, packages: packages) {
            case .success(let placed):
                if !json { Inboxctl.write(placed.path + "\n", to: 1) }
                var pairs = [("file", JSON.quote(file)), ("path", JSON.quote(placed.path))]
                if let manifest = placed.package {
                    pairs += [("package", "true"), ("entries", String(manifest.entryCount)),
                              ("bytes", String(manifest.totalBytes))]
                }
                sent.append(JSONText.object(pairs))
            case .failure(let failure):
                Inboxctl.write("inboxctl: cannot send \(file == "-" ? "stdin" : file): \(failure.message)\n", to: 2)
                failed.append(JSONText.object([("file", JSON.quote(file)), ("error", JSON.quote(failure.message))]))
                status = 1
            }
        }
        if json {
            Inboxctl.write(JSONText.object([
                ("inbox", JSON.quote(directory.path)), ("handler", request.handler.map(JSON.quote) ?? "null"),
                ("sent", "[" + sent.joined(separator: ",") + "]"), ("failed", "[" + failed.joined(separator: ",") + "]"),
            ]) + "\n", to: 1)
        }
        let signal = Interruption.signal
        return signal != 0 ? 128 + signal : status
    }

    /// What is wrong with the command line before anything is created.
    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        let files = parsed.positionals
        if files.isEmpty { throw UsageError(message: "missing FILE (or '-' for stdin)") }
        if files.filter({ $0 == "-" }).count > 1 { throw UsageError(message: "'-' given more than once") }
        if let name = parsed.value("--name") {
            if files.count > 1 { throw UsageError(message: "--name needs exactly one FILE") }
            if name.isEmpty || FileNames.sanitized(Array(name.utf8)) != name {
                throw UsageError(message:
                    "invalid name '\(name)': it must not start with '.', contain '/' or control characters, or exceed 200 bytes")
            }
        }
        if files.contains("-") && !parsed.flag("--name") && !parsed.flag("--type") {
            throw UsageError(message: "'-' (stdin) needs --type or --name: there is no file name to keep")
        }
        try checkMetadata(parsed)
    }

    /// The source application and annotation, as `send` and `open` take them.
    static func checkMetadata(_ parsed: ParsedOptions) throws(UsageError) {
        if let app = parsed.value("--source-app"), !SourceApplication.isValid(app) {
            throw UsageError(message:
                "invalid source application '\(app)': it must be printable ASCII without spaces, at most \(MetadataLimits.sourceAppBytes) bytes")
        }
        if let annotation = parsed.value("--annotation") {
            let bytes = Array(annotation.utf8)
            if bytes.count > MetadataLimits.annotationBytes {
                throw UsageError(message:
                    "annotation is \(bytes.count) bytes, over the limit of \(MetadataLimits.annotationBytes)")
            }
            if let problem = JSON.validate(bytes) {
                throw UsageError(message: "annotation is not valid JSON: \(problem)")
            }
        }
    }

    /// `customprofile-3f2a9c0d41b7.customprofile` for com.example.customprofile: the last identifier component,
    /// 12 random hex digits and the preferred extension.
    static func streamName(for identifier: String, in database: TypeDatabase) -> String {
        let stem = identifier.split(separator: ".").last.map(String.init) ?? "data"
        var name = stem + "-" + randomHex(12)
        if let ext = database.preferredExtension(of: identifier) { name += "." + ext }
        return FileNames.sanitized(Array(name.utf8))
    }

    static func randomHex(_ digits: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef")
        return String((0..<digits).map { _ in hex[Int(generator.next() & 0xF)] })
    }

    struct Failure: Error { let message: String }

    /// What was sent: its path in the Inbox, and for a package document the manifest of the copy.
    struct Sent {
        let path: String
        var package: PackageManifest? = nil
    }

    /// Sends one file (a directory as a package document, `PackageSend`); returns its path in the Inbox. On any failure
    /// the hidden temporary is removed.
    static func send(_ file: String, request: Request, into inbox: Directory, packages: PackageSend) -> Result<Sent, Failure> {
        let name: String
        if let given = request.name {
            name = given
        } else if file == "-" {
            guard let streamName = request.streamName else { return .failure(Failure(message: "stdin needs --type or --name")) }
            name = streamName
        } else {
            name = FileNames.sanitized(Array(lastPathComponent(file).utf8))
        }
        // A signal stops an open that waits (a FIFO with no writer) as it stops the copy.
        let uninterrupted = { Interruption.signal == 0 }
        let source: FileDescriptor
        if file == "-" {
            source = .standardInput
        } else {
            do {
                source = try FileDescriptor.open(file, .readOnly, options: .noControllingTerminal,
                                                 retryingInterrupted: uninterrupted)
            } catch {
                return .failure(Failure(message: String(describing: error)))
            }
        }
        defer { if source != .standardInput { source.close() } }
        // A directory is one document or nothing: opened like a file (the path as given, as cp(1) takes it), then
        // copied entry by entry without following anything inside.
        if source != .standardInput, let st = try? source.status(), EntryKind(mode: st.st_mode) == .directory {
            return packages.send(source, name: name, request: request, into: inbox)
        }

        let temporary = ".inboxctl-send-" + randomHex(12)
        let output: FileDescriptor
        do {
            output = try inbox.openFile(temporary, .writeOnly, options: [.create, .exclusive, .noFollow], permissions: 0o600,
                                        retryingInterrupted: uninterrupted)
        } catch {
            return .failure(Failure(message: "cannot create \(inbox.child(temporary)): \(error)"))
        }
        func fail(_ message: String) -> Result<Sent, Failure> {
            output.close()
            inbox.remove(Array(temporary.utf8))
            return .failure(Failure(message: message))
        }
        if let problem = copy(from: source, to: output) { return fail(problem) }
        let metadata = SenderMetadata(sourceApp: request.sourceApp, annotation: request.annotation.map { Array($0.utf8) },
                                      contentType: request.contentType, handler: request.handler,
                                      overridesHandlerCheck: request.overridesHandlerCheck)
        let sidecar: [UInt8]?
        switch setAttributes(metadata, on: output) {
        case .success(let fits): sidecar = fits ? nil : Sidecar.document(metadata)
        case .failure(let failure): return fail(failure.message)
        }
        do { try output.fsync() } catch { return fail("fsync: \(error)") }
        if Interruption.signal != 0 { return fail("interrupted") }
        // Closed before it is renamed into place: the agent moves the very inode on and refuses one that its sender
        // still holds open for writing (its read lease would be broken).
        output.close()
        switch inbox.publish(Array(temporary.utf8), preferred: name, sidecar: sidecar) {
        case .success(let placed):
            // Only a user who may list the Inbox can sync it; for the others the rename is atomic, not yet durable.
            inbox.syncEntries()
            return .success(Sent(path: inbox.child(placed)))
        case .failure(let error):
            inbox.remove(Array(temporary.utf8))
            return .failure(Failure(message: "cannot put it in place: \(error)"))
        }
    }

    /// Sets the metadata as extended attributes; false when the filesystem cannot hold them (ext4 keeps about 4 KB per
    /// file; some have none), in which case none is left set and the metadata goes into a sidecar instead (docs/design.md, Sidecar).
    static func setAttributes(_ metadata: SenderMetadata, on file: FileDescriptor) -> Result<Bool, Failure> {
        let attributes = ExtendedAttributes(file)
        let values: [(String, String?)] = [(SenderAttribute.sourceApp, metadata.sourceApp),
                                           (SenderAttribute.annotation, metadata.annotation.map { String(decoding: $0, as: UTF8.self) }),
                                           (SenderAttribute.contentType, metadata.contentType),
                                           (SenderAttribute.handler, metadata.handler),
                                           (SenderAttribute.handlerOverride, metadata.overridesHandlerCheck ? "yes" : nil)]
        for case let (key, value?) in values {
            guard let error = attributes.write(key, value) else { continue }
            if error == .noSpace || error == .tooBig || error == .rangeError || error == .notSupported {
                for (key, _) in values { attributes.remove(key) }
                return .success(false)
            }
            return .failure(Failure(message: "cannot set \(key): \(error)"))
        }
        return .success(true)
    }

    /// Copies everything `source` reads to `target`; nil on success, else the reason. A caught signal stops it at
    /// once: a blocking read or write it interrupts is not retried.
    static func copy(from source: FileDescriptor, to target: FileDescriptor) -> String? {
        let uninterrupted = { Interruption.signal == 0 }
        return withUnsafeTemporaryAllocation(byteCount: 1 << 16, alignment: 8) { buffer in
            while true {
                let count: Int
                do {
                    count = try source.read(into: buffer, retryingInterrupted: uninterrupted)
                } catch {
                    return Interruption.signal != 0 ? "interrupted" : "read: \(error)"
                }
                if Interruption.signal != 0 { return "interrupted" }
                if count == 0 { return nil }
                if let error = target.write(all: UnsafeRawBufferPointer(rebasing: buffer[..<count]),
                                            retryingInterrupted: uninterrupted) {
                    return "write: \(error)"
                }
            }
        }
    }
}
