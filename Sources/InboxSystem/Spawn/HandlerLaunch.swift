import InboxCore

extension SpawnRequest {
    /// A handler's start as the launch contract has it (README "What a handler receives"), for a delivery and for a
    /// preview alike: `Exec=` expanded for the file; an environment of `PATH`, `TMPDIR`, `LANG=C.UTF-8` (unless
    /// `passing` brings one), what `passing` brings, the registration's `Environment=`, the delivery's `INBOX_*`
    /// variables, and `HOME` and `USER` under another identity; that identity; the registration's `Limit*=`.
    public init(handler registration: HandlerRegistration, delivery: Delivery, tmp: String, identity: Identity?,
                passing: [String] = [], standardInput: FileDescriptor, output: FileDescriptor) {
        let arguments = registration.exec.expand(ExecFields(path: delivery.path, contentType: delivery.contentType,
                                                            sourceApp: delivery.sourceApp))
        self.init(registration, arguments: arguments, tmp: tmp, identity: identity, passing: passing,
                  delivery: delivery.environment(), standardInput: standardInput, output: output)
    }

    /// A batch's process (Exec= with %F or %U): the files as arguments; instead of one file's INBOX_* variables,
    /// `INBOX_HANDLER`, `INBOX_DOCUMENTS` and `INBOX_BATCH_SIZE` (the files are in the JSON array on stdin).
    init(handler registration: HandlerRegistration, batch: [Delivery], container: Container, identity: Identity?,
         standardInput: FileDescriptor, output: FileDescriptor) {
        self.init(handler: registration, batch: batch, documents: container.documents, tmp: container.tmp,
                  identity: identity, standardInput: standardInput, output: output)
    }

    /// The same with the directories given (a preview's scratch directory), `passing` and `extra` as for a file.
    init(handler registration: HandlerRegistration, batch: [Delivery], documents: String, tmp: String,
         identity: Identity?, passing: [String] = [], extra: [String] = [], standardInput: FileDescriptor,
         output: FileDescriptor) {
        let arguments = registration.exec.expand(batch: batch.map(\.path))
        self.init(registration, arguments: arguments, tmp: tmp, identity: identity, passing: passing,
                  delivery: ["INBOX_BATCH_SIZE=\(batch.count)", "INBOX_DOCUMENTS=\(documents)",
                             "INBOX_HANDLER=\(registration.identifier)"] + extra,
                  standardInput: standardInput, output: output)
    }

    /// A resident instance (Activation=resident): Exec= as it stands (it names no file), `INBOX_HANDLER` and
    /// `INBOX_DOCUMENTS`, and `socket` as fd 3 for socket activation (docs/handler-protocol.md).
    init(resident registration: HandlerRegistration, container: Container, identity: Identity?, socket: FileDescriptor,
         standardInput: FileDescriptor, output: FileDescriptor) {
        self.init(resident: registration, documents: container.documents, tmp: container.tmp, identity: identity,
                  socket: socket, standardInput: standardInput, output: output)
    }

    /// The same with the directories given (a preview's scratch directory), `passing` and `extra` as for a file.
    init(resident registration: HandlerRegistration, documents: String, tmp: String, identity: Identity?,
         passing: [String] = [], extra: [String] = [], socket: FileDescriptor, standardInput: FileDescriptor,
         output: FileDescriptor) {
        let arguments = registration.exec.expand(batch: [])
        self.init(registration, arguments: arguments, tmp: tmp, identity: identity, passing: passing,
                  delivery: ["INBOX_DOCUMENTS=\(documents)", "INBOX_HANDLER=\(registration.identifier)"] + extra,
                  standardInput: standardInput, output: output)
        listenSocket = socket
        listenName = "inbox"
    }

    private init(_ registration: HandlerRegistration, arguments: [String], tmp: String, identity: Identity?,
                 passing: [String], delivery: [String], standardInput: FileDescriptor, output: FileDescriptor) {
        var environment = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=\(tmp)"]
        if !passing.contains(where: { $0.hasPrefix("LANG=") }) { environment.append("LANG=C.UTF-8") }
        environment += passing
        environment += registration.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        environment += delivery
        if let identity { environment += ["HOME=\(identity.home)", "USER=\(identity.name)"] }
        // No arguments: a Unit= registration, which no process of the agent's runs (its spawn fails, never traps).
        self.init(executablePath: arguments.first ?? "", arguments: arguments, environment: environment,
                  standardInput: standardInput, standardOutput: output, standardError: output)
        uid = identity?.uid
        gid = identity?.gid
        supplementaryGroups = identity?.groups
        resourceLimits = registration.limits.map(ResourceLimit.init)
    }
}
