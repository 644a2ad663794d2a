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
        var environment = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=\(tmp)"]
        if !passing.contains(where: { $0.hasPrefix("LANG=") }) { environment.append("LANG=C.UTF-8") }
        environment += passing
        environment += registration.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        environment += delivery.environment()
        if let identity { environment += ["HOME=\(identity.home)", "USER=\(identity.name)"] }
        self.init(executablePath: arguments[0], arguments: arguments, environment: environment,
                  standardInput: standardInput, standardOutput: output, standardError: output)
        uid = identity?.uid
        gid = identity?.gid
        supplementaryGroups = identity?.groups
        resourceLimits = registration.limits.map(ResourceLimit.init)
    }
}
