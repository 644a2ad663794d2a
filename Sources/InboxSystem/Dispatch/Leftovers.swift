import Glibc

/// Processes a handler left behind. Its process group is signalled when it exits, but a child
/// that started a session of its own (a daemon) has left the group. A handler with an identity
/// of its own is the only user of its uid, so once none of its deliveries runs, every process of
/// that uid is a leftover and is killed — the daemon included, whoever became its parent.
enum Leftovers {
    /// The agent's own children (its handlers, and orphans it inherited as a subreaper), from
    /// /proc/self/task/*/children (proc(5)).
    static func children() -> [pid_t] {
        guard let tasks = opendir("/proc/self/task") else { return [] }
        defer { closedir(tasks) }
        var pids: [pid_t] = []
        while let entry = readdir(tasks) {
            let tid = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard Int(tid) != nil else { continue }
            let fd = open("/proc/self/task/\(tid)/children", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            _ = close(fd)
            guard count > 0 else { continue }
            pids += String(decoding: buffer.prefix(count), as: UTF8.self).split(separator: " ").compactMap { pid_t($0) }
        }
        return pids
    }

    /// The real uid of a process; nil when it is gone.
    static func realUID(of pid: pid_t) -> UInt32? { owner(of: pid).first }

    /// Sends SIGKILL to every process whose real, effective or saved uid is `uid`; returns how many.
    @discardableResult
    static func kill(uid: UInt32) -> Int {
        guard DynamicIdentity.contains(uid), let proc = opendir("/proc") else { return 0 }
        defer { closedir(proc) }
        var killed = 0
        while let entry = readdir(proc) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard let pid = pid_t(name), pid > 1, owner(of: pid).contains(uid) else { continue }
            if Glibc.kill(pid, SIGKILL) == 0 { killed += 1 }
        }
        return killed
    }

    /// The real, effective and saved uids of a process, from /proc/PID/status ("Uid:" line).
    private static func owner(of pid: pid_t) -> [UInt32] {
        let fd = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { _ = close(fd) }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return [] }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }) else { return [] }
        return line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().prefix(3).compactMap { UInt32($0) }
    }
}
