import CShims
import InboxCore

/// One resource limit for a handler, set with prlimit64 in the child before it drops privileges:
/// what systemd's `LimitNOFILE=`, `LimitAS=`, ... keys describe. nil means unlimited (RLIM_INFINITY).
/// Raising `hard` above the agent's own takes CAP_SYS_RESOURCE (which root in a container may lack);
/// `soft` above `hard` fails with EINVAL.
public struct ResourceLimit: Sendable, Hashable {
    /// The limited resource, by systemd key; getrlimit(2) gives each one's units.
    public enum Resource: Sendable, Hashable, CaseIterable {
        /// `LimitNOFILE=`, RLIMIT_NOFILE: one more than the highest fd number.
        case openFiles
        /// `LimitAS=`, RLIMIT_AS: bytes of virtual memory.
        case addressSpace
        /// `LimitNPROC=`, RLIMIT_NPROC: processes of the (new) real user id.
        case processes
        /// `LimitCPU=`, RLIMIT_CPU: seconds of CPU time, then SIGXCPU.
        case cpuSeconds
        /// `LimitFSIZE=`, RLIMIT_FSIZE: bytes a file may grow to, then SIGXFSZ.
        case fileSize
        /// `LimitCORE=`, RLIMIT_CORE: bytes of a core dump.
        case coreSize
    }

    public var resource: Resource
    /// The limit the kernel enforces; nil is unlimited.
    public var soft: UInt64?
    /// The ceiling the handler may raise `soft` to; nil is unlimited.
    public var hard: UInt64?

    public init(_ resource: Resource, soft: UInt64?, hard: UInt64?) {
        self.resource = resource
        self.soft = soft
        self.hard = hard
    }

    /// Soft and hard limit alike, like systemd's `LimitNOFILE=1024`.
    public init(_ resource: Resource, _ limit: UInt64?) {
        self.init(resource, soft: limit, hard: limit)
    }
}

extension ResourceLimit.Resource {
    /// The RLIMIT_* number for prlimit64.
    var rlimitNumber: CInt {
        let resource = switch self {
        case .openFiles: INBOX_RLIMIT_NOFILE
        case .addressSpace: INBOX_RLIMIT_AS
        case .processes: INBOX_RLIMIT_NPROC
        case .cpuSeconds: INBOX_RLIMIT_CPU
        case .fileSize: INBOX_RLIMIT_FSIZE
        case .coreSize: INBOX_RLIMIT_CORE
        }
        return CInt(resource.rawValue)
    }
}

extension ResourceLimit {
    /// A registration's `Limit*=` key as the limit the child sets.
    public init(_ limit: HandlerLimit) {
        let resource: Resource = switch limit.key {
        case .openFiles: .openFiles
        case .addressSpace: .addressSpace
        case .processes: .processes
        case .cpuSeconds: .cpuSeconds
        case .fileSize: .fileSize
        case .coreSize: .coreSize
        }
        self.init(resource, soft: limit.soft, hard: limit.hard)
    }
}
