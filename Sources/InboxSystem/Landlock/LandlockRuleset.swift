import CShims
import Glibc

/// Filesystem rights Landlock can take away (landlock(7), "Filesystem flags").
public struct LandlockAccess: OptionSet, Sendable, Hashable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let execute = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_EXECUTE)
    public static let writeFile = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_WRITE_FILE)
    public static let readFile = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_READ_FILE)
    public static let readDir = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_READ_DIR)
    public static let removeDir = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_REMOVE_DIR)
    public static let removeFile = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_REMOVE_FILE)
    public static let makeChar = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_MAKE_CHAR)
    public static let makeDir = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_MAKE_DIR)
    public static let makeReg = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_MAKE_REG)
    public static let makeSock = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_MAKE_SOCK)
    public static let makeFifo = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_MAKE_FIFO)
    public static let makeBlock = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_MAKE_BLOCK)
    public static let makeSym = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_MAKE_SYM)
    public static let refer = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_REFER)
    public static let truncate = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_TRUNCATE)
    public static let ioctlDev = LandlockAccess(rawValue: INBOX_LANDLOCK_ACCESS_FS_IOCTL_DEV)

    /// Reading and running, nothing else.
    public static let readExecute: LandlockAccess = [.execute, .readFile, .readDir]
    /// A handler's Inbox: list, read, remove files and (a package's) directories; no writing, truncating, creating,
    /// linking or renaming. REMOVE_DIR also covers a directory renamed away, but every rename needs a MAKE_* right at
    /// its target as well (and, from ABI 2, REFER across directories), which the Inbox never grants: so a package's
    /// entries can be removed, never moved, inside the Inbox or out of it. TRUNCATE (ABI 3) and REFER (ABI 2) are
    /// handled and not granted; before ABI 3, truncate(2) needs the write permission a copy's 0440 mode refuses, and
    /// under ABI 1 every link or rename across directories is refused.
    public static let readRemove: LandlockAccess = [.readFile, .readDir, .removeFile, .removeDir]

    /// Every right the kernel's ABI `abi` knows (and so handles, denying what no rule allows).
    public static func all(abi: Int) -> LandlockAccess {
        guard abi >= 1 else { return [] }
        var access = LandlockAccess(rawValue: (1 << 13) - 1)  // ABI 1: EXECUTE ... MAKE_SYM
        if abi >= 2 { access.insert(.refer) }
        if abi >= 3 { access.insert(.truncate) }
        if abi >= 5 { access.insert(.ioctlDev) }
        return access
    }
}

/// A Landlock ruleset under construction; its descriptor goes to the child, which applies it
/// with landlock_restrict_self(2) just before exec (see CShims/spawn.c).
public final class LandlockRuleset {
    public let descriptor: FileDescriptor
    public let abi: Int
    public let handled: LandlockAccess

    /// The kernel's Landlock ABI version; 0 when Landlock is unavailable (old kernel, LSM disabled).
    public static func abi() -> Int {
        let version = sys_landlock_abi()
        return version > 0 ? Int(version) : 0
    }

    /// A ruleset handling every filesystem right of `abi` and, from ABI 6, scoping signals: the
    /// sandboxed process cannot signal anything outside its own sandbox (the agent included).
    public init(abi: Int) throws(SystemError) {
        guard abi >= 1 else { throw SystemError("landlock_create_ruleset", errno: .notSupported) }
        self.abi = abi
        handled = LandlockAccess.all(abi: abi)
        var attr = inbox_landlock_ruleset_attr(handled_access_fs: handled.rawValue, handled_access_net: 0,
                                               scoped: abi >= 6 ? INBOX_LANDLOCK_SCOPE_SIGNAL : 0)
        // Pass only the fields this ABI knows: an older kernel rejects a larger structure with E2BIG.
        let size = abi >= 6 ? MemoryLayout<inbox_landlock_ruleset_attr>.size : abi >= 4 ? 16 : 8
        let fd = try retrying("landlock_create_ruleset") { sys_landlock_create_ruleset(&attr, size) }
        descriptor = FileDescriptor(rawValue: fd)
    }

    deinit { descriptor.close() }

    /// Allows `access` (limited to what this ruleset handles) beneath `path`, a directory or a file.
    /// A missing path is not an error: there is nothing to allow.
    public func allow(_ access: LandlockAccess, beneath path: String) throws(SystemError) {
        let file: FileDescriptor
        do { file = try .open(path, .pathOnly) } catch .noSuchFile { return } catch {
            throw SystemError("open", path: path, errno: error)
        }
        defer { file.close() }
        var allowed = access.intersection(handled)
        // Rights that only make sense on a directory are refused by the kernel on a file.
        if let st = try? file.status(), (st.st_mode & S_IFMT) != S_IFDIR {
            allowed.formIntersection([.execute, .writeFile, .readFile, .truncate, .ioctlDev])
        }
        var attr = inbox_landlock_path_beneath_attr(allowed_access: allowed.rawValue, parent_fd: file.rawValue)
        _ = try retrying("landlock_add_rule", path: path) { sys_landlock_add_path_rule(descriptor.rawValue, &attr) }
    }

    /// Applies the ruleset to the calling process itself (after setting no_new_privs), for a process that sandboxes
    /// itself once it has opened what it needs. Single-threaded callers only: it applies to the calling thread.
    public func restrictSelf() throws(SystemError) {
        _ = try retrying("landlock_restrict_self") { sys_landlock_restrict_self(descriptor.rawValue) }
    }
}
