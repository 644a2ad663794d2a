import CShims
import Glibc

/// A started child: its pid, and a pidfd that keeps referring to it (never to a reused pid) until closed.
public struct SpawnedProcess: Sendable, Hashable {
    public let pid: pid_t
    /// Close-on-exec. The owner closes it once the child is reaped.
    public let pidfd: FileDescriptor

    public init(pid: pid_t, pidfd: FileDescriptor) {
        self.pid = pid
        self.pidfd = pidfd
    }
}

/// Starts the request's executable and returns once it has exec'd; a failure in the child (bad uid,
/// missing executable, ...) is thrown here with the failing step, and leaves no process behind.
/// The child starts a new session with fds 0, 1, 2 only (and 3 with `listenSocket` or `descriptor3`), an empty signal
/// mask, default signal dispositions and `no_new_privs` set. Safe to call from several threads at once.
public func spawn(_ request: SpawnRequest) throws(SpawnError) -> SpawnedProcess {
    let path = request.executablePath
    // A NUL would silently cut a C string short: refuse instead of running something else.
    if path.utf8.contains(0) { throw SpawnError(step: "path", errno: .invalidArgument, path: path) }
    if let directory = request.workingDirectory, directory.utf8.contains(0) {
        throw SpawnError(step: "path", errno: .invalidArgument, path: directory)
    }
    if request.arguments.contains(where: { $0.utf8.contains(0) }) {
        throw SpawnError(step: "argv", errno: .invalidArgument, path: path)
    }
    if request.environment.contains(where: { $0.utf8.contains(0) }) {
        throw SpawnError(step: "envp", errno: .invalidArgument, path: path)
    }
    if request.listenSocket != nil && request.descriptor3 != nil {
        throw SpawnError(step: "fd 3", errno: .invalidArgument, path: path)
    }
    if request.resourceLimits.count > SpawnRequest.maximumResourceLimits {
        throw SpawnError(step: "prlimit64", errno: .invalidArgument, path: path)
    }

    let result = launch(request)
    if result.failedStep == 0 {
        return SpawnedProcess(pid: result.pid, pidfd: FileDescriptor(rawValue: result.pidfd))
    }
    let step = sys_inbox_spawn_step_name(result.failedStep)
    throw SpawnError(
        step: step,
        errno: Errno(rawValue: result.failedErrno),
        path: step == "chdir" ? request.workingDirectory ?? path : path
    )
}

/// What `inbox_spawn` reported, as plain values.
private struct LaunchResult {
    var pid: pid_t = 0
    var pidfd: CInt = -1
    var failedStep: CInt = 0
    var failedErrno: CInt = 0
}

/// Packs every string into one NUL-separated buffer with argv/envp pointer arrays beside it, fills the C
/// request, and calls `inbox_spawn`, all inside one scope: no pointer outlives it.
private func launch(_ request: SpawnRequest) -> LaunchResult {
    let argc = request.arguments.count
    // Socket activation adds LISTEN_FDS and LISTEN_FDNAMES, and LISTEN_PID with room for the digits the child writes.
    var environment = request.environment
    if request.listenSocket != nil {
        environment = environment.filter { !$0.hasPrefix("LISTEN_") }
        environment += ["LISTEN_FDS=1", "LISTEN_FDNAMES=\(request.listenName)", listenPIDPlaceholder]
    }
    let envc = environment.count
    var byteCount = request.executablePath.utf8.count + 1
    if let directory = request.workingDirectory { byteCount += directory.utf8.count + 1 }
    for argument in request.arguments { byteCount += argument.utf8.count + 1 }
    for variable in environment { byteCount += variable.utf8.count + 1 }

    let groups = request.supplementaryGroups ?? []
    let groupCount: CInt
    if request.supplementaryGroups != nil {
        groupCount = CInt(clamping: groups.count)  // too many: setgroups reports EINVAL
    } else {
        groupCount = request.uid != nil || request.gid != nil ? 0 : -1
    }

    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: byteCount) { bytes in
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<CChar>?.self, capacity: argc + envc + 2) { vectors in
            groups.withUnsafeBufferPointer { groupIDs in
                var strings = CStringPacker(buffer: bytes)
                let argv = vectors.baseAddress!
                let envp = argv + argc + 1
                for (index, argument) in request.arguments.enumerated() { argv[index] = strings.append(argument) }
                argv[argc] = nil
                var listenPID: UnsafeMutablePointer<CChar>?
                for (index, variable) in environment.enumerated() {
                    envp[index] = strings.append(variable)
                    if request.listenSocket != nil && variable == listenPIDPlaceholder {
                        listenPID = envp[index]! + "LISTEN_PID=".utf8.count
                    }
                }
                envp[envc] = nil

                var c = inbox_spawn_request()
                c.path = UnsafePointer(strings.append(request.executablePath))
                c.argv = UnsafePointer(argv)
                c.envp = UnsafePointer(envp)
                c.cwd = request.workingDirectory.map { UnsafePointer(strings.append($0)) }
                c.stdin_fd = request.standardInput.rawValue
                c.stdout_fd = request.standardOutput.rawValue
                c.stderr_fd = request.standardError.rawValue
                c.landlock_ruleset_fd = request.landlockRuleset?.rawValue ?? -1
                c.listen_fd = (request.listenSocket ?? request.descriptor3)?.rawValue ?? -1
                c.listen_pid_digits = listenPID
                c.uid = request.uid ?? uid_t.max  // (uid_t)-1: keep
                c.gid = request.gid ?? gid_t.max
                c.ngroups = groupCount
                c.groups = groupIDs.baseAddress
                c.umask = request.umask
                c.parent_death_signal = request.parentDeathSignal ?? 0
                withUnsafeMutableBytes(of: &c.rlimits) { storage in
                    let slots = storage.bindMemory(to: inbox_spawn_rlimit.self)
                    precondition(request.resourceLimits.count <= slots.count, "too many resource limits")
                    for (slot, limit) in zip(slots.indices, request.resourceLimits) {
                        // RLIM64_INFINITY is all ones, whatever the architecture's RLIM_INFINITY.
                        slots[slot] = inbox_spawn_rlimit(
                            resource: limit.resource.rlimitNumber, soft: limit.soft ?? .max, hard: limit.hard ?? .max)
                    }
                }
                c.nrlimits = CInt(request.resourceLimits.count)

                var result = LaunchResult()
                if sys_inbox_spawn(&c, &result.pidfd, &result.pid) != 0 {
                    result.failedStep = c.failed_step
                    result.failedErrno = c.failed_errno
                }
                return result
            }
        }
    }
}

/// LISTEN_PID= with room for the 20 digits the child writes over the blanks (spawn.c).
private let listenPIDPlaceholder = "LISTEN_PID=" + String(repeating: " ", count: 20)

/// Appends NUL-terminated copies of strings to a buffer sized for all of them (spawn, exec).
struct CStringPacker {
    let buffer: UnsafeMutableBufferPointer<CChar>
    var used = 0

    mutating func append(_ string: String) -> UnsafeMutablePointer<CChar> {
        var string = string
        let start = buffer.baseAddress! + used
        let count = string.withUTF8 { utf8 in
            precondition(used + utf8.count < buffer.count, "C string buffer sized too small")
            if let source = utf8.baseAddress {
                UnsafeMutableRawPointer(start).copyMemory(from: source, byteCount: utf8.count)
            }
            return utf8.count
        }
        start[count] = 0
        used += count + 1
        return start
    }
}
