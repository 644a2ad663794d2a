import Glibc

// The user and group database calls behind Identity (getpwnam_r(3), getgrnam_r(3), getgrouplist(3)).

func sys_getpwnam_r(_ name: String, _ entry: inout passwd, _ buffer: inout [CChar],
                    _ result: inout UnsafeMutablePointer<passwd>?) -> CInt {
    let size = buffer.count
    return name.withCString { getpwnam_r($0, &entry, &buffer, size, &result) }
}

func sys_getgrnam_r(_ name: String, _ entry: inout group, _ buffer: inout [CChar],
                    _ result: inout UnsafeMutablePointer<group>?) -> CInt {
    let size = buffer.count
    return name.withCString { getgrnam_r($0, &entry, &buffer, size, &result) }
}

func sys_getgrouplist(_ user: String, _ group: gid_t, _ groups: inout [gid_t], _ count: inout CInt) -> CInt {
    user.withCString { getgrouplist($0, group, &groups, &count) }
}

/// getpwuid(3)'s user name for `uid`; nil when there is no entry.
func sys_getpwuid_name(_ uid: uid_t) -> String? {
    getpwuid(uid).map { String(cString: $0.pointee.pw_name) }
}
