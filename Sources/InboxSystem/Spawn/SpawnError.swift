/// A launch that failed: the step in the child (or before it) that failed, why, and on what path.
public struct SpawnError: Error, Sendable, CustomStringConvertible {
    /// The failing step, named after its syscall: "execve", "setresuid", "chdir", "landlock_restrict_self", ...
    /// "argv", "envp" and "path" mean a string held a NUL byte and nothing was started; "fd 3", that a request had
    /// both a `listenSocket` and a `descriptor3`.
    public let step: String
    public let errno: Errno
    /// The executable, or the working directory when `step` is "chdir".
    public let path: String

    public init(step: String, errno: Errno, path: String) {
        self.step = step
        self.errno = errno
        self.path = path
    }

    /// Reads like `execve /usr/bin/foo: No such file or directory`.
    public var description: String { "\(step) \(path): \(errno)" }
}
