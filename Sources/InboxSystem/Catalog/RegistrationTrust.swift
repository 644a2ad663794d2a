import Glibc

/// Whether a registration file, the directories above it and the program its Exec= names may be trusted — as cron
/// and sudo refuse a crontab or sudoers file someone else could have written. A handler runs as its identity (root
/// for `User=root`), so whoever can change its registration or its program can run code as that identity.
///
/// Trusted owners are root and the user the agent runs as. Nothing on the path may be writable by another user:
/// - no entry (directory, symlink, file) owned by anyone else;
/// - no directory or file writable by everyone, or by a group other than root's (gid 0, whose members can become
///   root anyway); a sticky directory (such as /tmp) is the exception, since only an entry's owner may replace it
///   there and the entry itself is checked;
/// - symlinks are followed, and their targets' paths are checked the same way, up to 40 links.
///
/// A check is a walk of lstat(2) calls from `/`; `objection(to:)` judges one status, for the fstat(2) of the
/// opened registration file. Every refusal is a sentence naming the offending path.
public struct RegistrationTrust: Sendable {
    /// The users who may own what is trusted.
    public let owners: Set<uid_t>

    /// Root, and the user the agent (or inboxctl) acts as.
    public static var current: RegistrationTrust { RegistrationTrust(owners: [0, CurrentProcess.effectiveUserID]) }

    public init(owners: Set<uid_t>) { self.owners = owners }

    /// The result of walking one path.
    public enum Walk: Sendable, Equatable {
        /// Everything on the way is trusted; the resolved path of the last entry.
        case trusted(String)
        /// Something on the way does not exist (from here on nothing is checked; what is missing cannot run).
        case missing(String)
        /// Refused, with the reason (a sentence naming the path).
        case refused(String)
    }

    /// Why an entry with this status is not trusted (`what` names it, e.g. "directory /etc"); nil when it is.
    public func objection(to status: FileStatus, _ what: String) -> String? {
        let kind = EntryKind(mode: status.st_mode)
        let mode = status.st_mode & 0o7777
        guard owners.contains(status.st_uid) else {
            return "\(what) is owned by uid \(status.st_uid), not by root\(owners.count > 1 ? " or the agent's user" : "")"
        }
        if kind == .symlink { return nil }
        let sticky = kind == .directory && mode & S_ISVTX != 0
        if mode & S_IWOTH != 0 && !sticky {
            return "\(what) is writable by everyone (mode \(octal(mode)))"
        }
        if mode & S_IWGRP != 0 && status.st_gid != 0 && !sticky {
            return "\(what) is writable by group \(status.st_gid) (mode \(octal(mode)))"
        }
        return nil
    }

    /// Walks `path` from `/` (a relative path from the working directory), entry by entry with lstat(2),
    /// following symlinks, and checks each entry: the directories, every symlink and the last entry.
    /// `kind` names the last entry in a refusal ("program", "registration").
    public func walk(_ path: String, last kind: String) -> Walk {
        var pending = ArraySlice(components(path))
        var current = path.hasPrefix("/") ? "/" : "."
        if let reason = check(current, "directory \(current)") { return reason }
        var links = 0
        while let name = pending.popFirst() {
            if name == ".." {
                current = parent(current)
                continue
            }
            let next = current == "/" ? "/" + name : current + "/" + name
            let status: FileStatus
            do { status = try FileSystem.status(next, followingLinks: false) } catch {
                return error == .noSuchFile || error == .notDirectory ? .missing(next) : .refused("cannot stat \(next): \(error)")
            }
            let isLast = pending.isEmpty
            switch EntryKind(mode: status.st_mode) {
            case .symlink:
                if let reason = objection(to: status, "symlink \(next)") { return .refused(reason) }
                links += 1
                guard links <= 40, let target = FileSystem.linkTarget(next) else {
                    return .refused("cannot resolve symlink \(next)")
                }
                if target.hasPrefix("/") { current = "/" }
                pending = ArraySlice(components(target)) + pending
            case .directory:
                if let reason = objection(to: status, isLast ? "\(kind) \(next)" : "directory \(next)") { return .refused(reason) }
                current = next
            default:
                guard isLast else { return .missing(next + "/" + pending.joined(separator: "/")) }
                if let reason = objection(to: status, "\(kind) \(next)") { return .refused(reason) }
                current = next
            }
        }
        return .trusted(current)
    }

    private func check(_ path: String, _ what: String) -> Walk? {
        guard let status = try? FileSystem.status(path, followingLinks: false) else { return .refused("cannot stat \(path)") }
        return objection(to: status, what).map { .refused($0) }
    }

    private func components(_ path: String) -> [String] {
        path.split(separator: "/").map(String.init).filter { $0 != "." }
    }

    private func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path == "." ? ".." : "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
