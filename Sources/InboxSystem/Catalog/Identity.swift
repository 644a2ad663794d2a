import Glibc

/// A user and group a handler runs as, looked up by name (getpwnam_r(3), getgrnam_r(3)).
public struct Identity: Sendable, Hashable {
    public let uid: UInt32
    public let gid: UInt32
    public let groups: [UInt32]
    public let name: String
    public let home: String

    public enum LookupError: Error, Sendable, CustomStringConvertible {
        case noSuchUser(String)
        case noSuchGroup(String)
        public var description: String {
            switch self {
            case .noSuchUser(let name): "no such user '\(name)'"
            case .noSuchGroup(let name): "no such group '\(name)'"
            }
        }
    }

    /// Resolves `User=` and `Group=`; the user's supplementary groups come from the group database.
    public static func resolve(user: String, group: String?) throws(LookupError) -> Identity {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        let looked = sys_getpwnam_r(user, &entry, &buffer, &result)
        var uid: UInt32, gid: UInt32, home: String
        if looked == 0, result != nil {
            uid = entry.pw_uid
            gid = entry.pw_gid
            home = String(cString: entry.pw_dir)
        } else if let numeric = UInt32(user) {
            uid = numeric
            gid = numeric
            home = "/"
        } else {
            throw .noSuchUser(user)
        }
        if let group {
            gid = try lookupGroup(group)
        }
        var groups = [gid_t](repeating: 0, count: 64)
        var count = CInt(groups.count)
        if sys_getgrouplist(user, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = sys_getgrouplist(user, gid, &groups, &count)
        }
        let supplementary = result == nil ? [gid] : Array(groups.prefix(Int(max(count, 0))))
        return Identity(uid: uid, gid: gid, groups: supplementary, name: user, home: home)
    }

    static func lookupGroup(_ name: String) throws(LookupError) -> UInt32 {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        let looked = sys_getgrnam_r(name, &entry, &buffer, &result)
        if looked == 0, result != nil { return entry.gr_gid }
        if let numeric = UInt32(name) { return numeric }
        throw .noSuchGroup(name)
    }
}
