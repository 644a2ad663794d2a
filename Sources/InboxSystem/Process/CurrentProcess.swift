import Glibc

/// The calling process: who it is, what it was started with, and leaving it.
public enum CurrentProcess {
    /// getpid(2).
    public static var id: pid_t { sys_getpid() }

    /// The real user id (getuid(2)): who started us.
    public static var userID: uid_t { sys_getuid() }

    /// The effective user id (geteuid(2)): whose rights we act with; 0 is root.
    public static var effectiveUserID: uid_t { sys_geteuid() }

    /// Processors online (sysconf(3), _SC_NPROCESSORS_ONLN); at least 1.
    public static var onlineProcessors: Int { max(1, sys_sysconf(CInt(_SC_NPROCESSORS_ONLN))) }

    /// Whether we act as root, with the powers that gives (identities of our own for handlers, chown).
    public static var isRoot: Bool { sys_geteuid() == 0 }
    /// This host's name (gethostname(2)); "localhost" when it has none.
    public static var hostName: String { sys_hostname().flatMap { $0.isEmpty ? nil : $0 } ?? "localhost" }

    /// The whole environment (environ(7)) as a dictionary.
    public static var environmentVariables: [String: String] {
        var result: [String: String] = [:]
        var pointer = sys_environ()
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    /// Makes us the reaper of orphaned descendants (prctl(2), PR_SET_CHILD_SUBREAPER): a handler's daemonized
    /// children become ours when their parents exit, so that they can be found and stopped with it.
    @discardableResult
    public static func becomeChildSubreaper() -> Bool { sys_inbox_set_child_subreaper() == 0 }

    /// Gives memory the heap no longer uses back to the kernel (malloc_trim(3)).
    public static func releaseFreeMemory() { _ = sys_inbox_malloc_trim() }

    /// This program's file, from /proc/self/exe; nil when /proc is not mounted.
    public static var executablePath: String? { FileSystem.linkTarget("/proc/self/exe") }

    /// An environment variable (getenv(3)); nil when unset.
    public static func environment(_ name: String) -> String? {
        guard !name.utf8.contains(0) else { return nil }
        return sys_getenv(name)
    }

    /// The working directory (getcwd(3)); nil when it was removed or its path is too long.
    public static var workingDirectory: String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(PATH_MAX) + 1) { buffer in
            guard let path = sys_getcwd(buffer) else { return nil }
            return String(cString: path)
        }
    }

    /// Ends the process with `status` (exit(3): stdio is flushed, atexit handlers run).
    public static func exit(_ status: CInt) -> Never { sys_exit(status) }

    /// Replaces this program with `path` (execv(2): no PATH search, the environment is kept); `arguments` includes
    /// argv[0]. Returns only if that failed, with the reason.
    public static func exec(_ path: String, arguments: [String]) -> Errno {
        if path.utf8.contains(0) || arguments.contains(where: { $0.utf8.contains(0) }) { return .invalidArgument }
        let byteCount = arguments.reduce(path.utf8.count + 1) { $0 + $1.utf8.count + 1 }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: byteCount) { bytes in
            withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<CChar>?.self, capacity: arguments.count + 1) { argv in
                var strings = CStringPacker(buffer: bytes)
                for (index, argument) in arguments.enumerated() { argv[index] = strings.append(argument) }
                argv[arguments.count] = nil
                _ = sys_execv(strings.append(path), argv.baseAddress!)
                return Errno.current
            }
        }
    }
}
