import Glibc
import InboxCore

/// The file system as the agent's processes see it: its root and its mount namespace's mounts (docs/design.md,
/// Handlers run in the service's sandbox). Under a unit's `ProtectSystem=strict`, `ProtectHome=`, `PrivateTmp=` or
/// `InaccessiblePaths=`, a path the host can write may be read-only, empty or absent for the agent, and so for every
/// handler it starts: it checks the paths registrations grant and inboxd.conf names against this, and inboxctl
/// checks them against the running agent's (`/proc/PID/root` and `/proc/PID/mountinfo`, which need its user or root).
///
/// Each path is opened once, by openat2(2) with RESOLVE_IN_ROOT beneath the view's root (a link in it resolves
/// inside that root, as it would for the agent), as O_PATH (never a FIFO's open, never a read); its mount is the one
/// statx(2) names for that descriptor, looked up in the same namespace's table.
public final class ServiceView {
    private let root: FileDescriptor
    private let table: MountTable
    /// The unit the agent runs as, for the drop-in to advise; nil when it is not a service.
    public let unit: ServiceUnit?

    private init(root: FileDescriptor, table: MountTable, unit: ServiceUnit?) {
        self.root = root
        self.table = table
        self.unit = unit
    }

    deinit { root.close() }

    /// This process's own view: the agent's, when the agent asks.
    public static func own() -> ServiceView? {
        try? ServiceView(procDirectory: "/proc/self")
    }

    /// The view of a running process (an agent): needs its user or root (ptrace's read access).
    public static func process(_ pid: pid_t) throws(SystemError) -> ServiceView {
        try ServiceView(procDirectory: "/proc/\(pid)")
    }

    private convenience init(procDirectory: String) throws(SystemError) {
        let root: FileDescriptor
        do { root = try .open(procDirectory + "/root", .pathOnly) } catch {
            throw SystemError("open", path: procDirectory + "/root", errno: error)
        }
        let table: MountTable
        switch readBounded(procDirectory + "/mountinfo", limit: 16 << 20) {
        case .success(let bytes): table = MountTable.parse(String(decoding: bytes, as: UTF8.self))
        case .failure(let error):
            root.close()
            if case .cannotOpen(let errno) = error { throw SystemError("open", path: procDirectory + "/mountinfo", errno: errno) }
            throw SystemError("read", path: procDirectory + "/mountinfo", errno: .ioError)
        }
        let unit: ServiceUnit?
        if case .success(let bytes) = readBounded(procDirectory + "/cgroup", limit: 1 << 16) {
            unit = ServiceUnit.parse(cgroup: String(decoding: bytes, as: UTF8.self))
        } else {
            unit = nil
        }
        self.init(root: root, table: table, unit: unit)
    }

    /// What is wrong with `path` (absolute) for a process of this view that needs to write it (`writing`) or only
    /// to find it; nil when nothing is, or when it cannot be told (a path that cannot be opened for another reason).
    public func problem(at path: String, writing: Bool) -> ServicePathProblem? {
        switch open(path) {
        case .success(let file):
            defer { file.close() }
            let mount = self.mount(of: file)
            if let mount, mount.isPrivateTemporary { return .privateTemporary(mountPoint: mount.mountPoint) }
            guard writing, let mount, mount.readOnly || Self.isReadOnly(file) else { return nil }
            return .readOnly(mountPoint: mount.mountPoint)
        case .failure(let error) where error == .noSuchFile || error == .notDirectory:
            // The nearest directory above it that is there: its mount says whether it could be made.
            var ancestor = parent(of: path)
            while let current = ancestor {
                if case .success(let file) = open(current) {
                    defer { file.close() }
                    let mount = self.mount(of: file)
                    if let mount, mount.isPrivateTemporary { return .privateTemporary(mountPoint: mount.mountPoint) }
                    let readOnly = mount.map { $0.readOnly || Self.isReadOnly(file) } ?? false
                    return .absent(readOnlyParent: readOnly ? mount?.mountPoint : nil)
                }
                ancestor = parent(of: current)
            }
            return .absent(readOnlyParent: nil)
        case .failure:
            return nil
        }
    }

    /// The findings for every path a registration grants (`ReadWritePaths=`), each a warning at its line. A
    /// registration run as a unit of its own (`Unit=`) has the unit's sandbox, not the agent's: not checked.
    public func diagnostics(for registrations: [HandlerRegistration]) -> [Diagnostic] {
        registrations.flatMap { registration -> [Diagnostic] in
            guard registration.unit == nil else { return [] }
            return registration.readWritePaths.compactMap { path -> Diagnostic? in
                guard let problem = problem(at: path, writing: true) else { return nil }
                let finding = ServicePathFinding(setting: "ReadWritePaths=\(path)", path: path, problem: problem,
                                                 consequence: "\(registration.identifier) cannot write there", byHandler: true)
                let location = registration.readWritePathLocations[path] ?? SourceLocation(file: registration.path, line: 1)
                return Diagnostic(.warning, at: location, finding.message(unit: unit))
            }
        }
    }

    /// The findings for the directories the agent itself writes: its drop Inboxes and its state directory, each with
    /// where inboxd.conf gave it (nil: by default or on the command line). handlers.d directories are only read, and
    /// a missing one is already said by the loader.
    public func findings(for settings: AgentSettings) -> [(finding: ServicePathFinding, location: SourceLocation?)] {
        findings(inboxes: settings.inboxes, bound: Set(settings.inboxSections.map(\.path)),
                 stateDirectory: settings.stateDirectory, locations: settings.pathLocations)
    }

    /// The findings for inboxd.conf's own directories (`inboxctl verify inboxd.conf`).
    public func findings(for configuration: AgentConfiguration) -> [(finding: ServicePathFinding, location: SourceLocation?)] {
        let bound = configuration.inboxSections.map(\.path)
        return findings(inboxes: configuration.inboxes + bound, bound: Set(bound),
                        stateDirectory: configuration.stateDirectory, locations: configuration.pathLocations)
    }

    private func findings(inboxes: [String], bound: Set<String>, stateDirectory: String?,
                          locations: [String: SourceLocation]) -> [(finding: ServicePathFinding, location: SourceLocation?)] {
        var found: [(ServicePathFinding, SourceLocation?)] = []
        for inbox in inboxes {
            guard let problem = problem(at: inbox, writing: true) else { continue }
            let consequence = if case .absent = problem { "nothing dropped there reaches the agent" }
                else { "files dropped there cannot be moved out of it, and wait there" }
            found.append((ServicePathFinding(setting: "\(bound.contains(inbox) ? "[Inbox] Path" : "Inbox")=\(inbox)",
                                             path: inbox, problem: problem, consequence: consequence),
                          locations[inbox]))
        }
        // A missing state directory is made at start-up: only one that cannot be made is a problem.
        if let stateDirectory, let problem = problem(at: stateDirectory, writing: true),
           problem != .absent(readOnlyParent: nil) {
            found.append((ServicePathFinding(setting: "StateDirectory=\(stateDirectory)", path: stateDirectory,
                                             problem: problem, consequence: "the agent cannot keep its files there"),
                          locations[stateDirectory]))
        }
        return found
    }

    private func open(_ path: String) -> Result<FileDescriptor, Errno> {
        let relative = path.drop { $0 == "/" }
        let name = relative.isEmpty ? "." : String(relative)
        let result = retryingErrno {
            withCName(Array(name.utf8)) {
                sys_openat2(root.rawValue, $0, O_PATH | O_CLOEXEC, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
            }
        }
        // A kernel or seccomp filter without openat2: openat(2) from the root, where an absolute link would resolve
        // from this process's root instead (the same one in the agent's own view).
        if case .failure(let error) = result, error == .noSys || error == .notPermitted || error == .invalidArgument {
            return retryingErrno { withCName(Array(name.utf8)) { sys_openat(root.rawValue, $0, O_PATH | O_CLOEXEC) } }
                .map { FileDescriptor(rawValue: $0) }
        }
        return result.map { FileDescriptor(rawValue: $0) }
    }

    private func parent(of path: String) -> String? {
        guard path != "/", let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private func mount(of file: FileDescriptor) -> MountTable.Mount? {
        var id: UInt64 = 0
        guard sys_mount_id(file.rawValue, &id) == 0 else { return nil }
        return table.mount(id: id)
    }

    /// fstatvfs(2)'s ST_RDONLY: the mount's own flag, as the kernel applies it.
    private static func isReadOnly(_ file: FileDescriptor) -> Bool {
        sys_read_only_mount(file.rawValue)
    }
}
