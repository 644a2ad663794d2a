import CShims
import Glibc

/// Everything needed to start one handler process: what to run, its stdio, its identity and its sandbox.
public struct SpawnRequest: Sendable {
    /// Absolute path of the executable; there is no `PATH` search.
    public var executablePath: String
    /// The full argument vector, `argv[0]` included.
    public var arguments: [String]
    /// The complete environment as `KEY=value` strings; nothing is inherited from the agent.
    public var environment: [String]
    /// Becomes fd 0 in the child. The caller keeps ownership and closes it after `spawn` returns.
    public var standardInput: FileDescriptor
    /// Becomes fd 1 in the child; may be the same descriptor as `standardError`.
    public var standardOutput: FileDescriptor
    /// Becomes fd 2 in the child.
    public var standardError: FileDescriptor
    /// User id to run as (real, effective and saved); nil keeps the agent's.
    public var uid: UInt32?
    /// Group id to run as (real, effective and saved); nil keeps the agent's.
    public var gid: UInt32?
    /// Supplementary groups. nil clears them when `uid` or `gid` is set and keeps them otherwise.
    public var supplementaryGroups: [UInt32]?
    /// The child's file mode creation mask.
    public var umask: mode_t
    /// Directory to start in, entered after the uid/gid change; nil keeps the agent's.
    public var workingDirectory: String?
    /// A Landlock ruleset fd to apply with `landlock_restrict_self` just before exec; the caller keeps ownership.
    public var landlockRuleset: FileDescriptor?
    /// Signal the child gets when the *thread* that spawned it exits (PR_SET_PDEATHSIG), not the process:
    /// spawn from a long-lived thread, never from a pool thread that may retire while the child runs.
    public var parentDeathSignal: CInt?
    /// Socket activation (sd_listen_fds(3)): this descriptor becomes fd 3, and the environment gets `LISTEN_FDS=1`,
    /// `LISTEN_PID=` the child's own pid (written by the child before it execs) and `LISTEN_FDNAMES=` `listenName`.
    /// The caller keeps ownership.
    public var listenSocket: FileDescriptor?
    public var listenName = "inbox"
    /// A descriptor that becomes fd 3 as it is, with nothing in the environment about it (unlike `listenSocket`):
    /// for a child of our own that knows to find it there (inboxctl's X clipboard owner takes its connection so).
    /// Not with `listenSocket`, which is fd 3 too: the two fail with step "fd 3" and EINVAL. The caller keeps
    /// ownership.
    public var descriptor3: FileDescriptor?
    /// Resource limits, set in order before the uid/gid change (so an agent with CAP_SYS_RESOURCE may raise
    /// hard limits for any user); at most `SpawnRequest.maximumResourceLimits`.
    public var resourceLimits: [ResourceLimit] = []

    /// How many resource limits a request may carry; more fail with step "prlimit64" and EINVAL.
    public static let maximumResourceLimits = Int(INBOX_SPAWN_MAX_RLIMITS)

    /// A request with private defaults: umask 077, the agent's identity and directory, no sandbox.
    public init(
        executablePath: String,
        arguments: [String],
        environment: [String] = [],
        standardInput: FileDescriptor,
        standardOutput: FileDescriptor,
        standardError: FileDescriptor
    ) {
        self.executablePath = executablePath
        self.arguments = arguments
        self.environment = environment
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.umask = 0o077
    }
}
