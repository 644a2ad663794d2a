import Glibc

/// Processes a handler left behind. Its process group is signalled when it exits, but a child
/// that started a session of its own (a daemon) has left the group. A handler with an identity
/// of its own is the only user of its uid, so once none of its deliveries runs, every process of
/// that uid is a leftover and is killed — the daemon included, whoever became its parent.
enum Leftovers {
    /// The agent's own children (its handlers, and orphans it inherited as a subreaper), from
    /// /proc/self/task/*/children (proc(5)).
    static func children() -> [pid_t] {
        // Asked after every handler exit: one opendir, not a Directory and a second descriptor for its entries.
        FileSystem.entries(atPath: "/proc/self/task").compactMap { Int(displayName($0)) }.flatMap { tid in
            String(decoding: read("/proc/self/task/\(tid)/children", limit: 65536), as: UTF8.self)
                .split(separator: " ").compactMap { pid_t($0) }
        }
    }

    /// The real uid of a process; nil when it is gone.
    static func realUID(of pid: pid_t) -> UInt32? { owner(of: pid).first }

    /// Sends SIGKILL to every process whose real, effective or saved uid is `uid`; returns how many.
    @discardableResult
    static func kill(uid: UInt32) -> Int { kill(uids: [uid]) }

    /// The same for several identities of their own, in one pass over /proc; any other uid is left alone.
    @discardableResult
    static func kill(uids: Set<UInt32>) -> Int {
        let uids = uids.filter(DynamicIdentity.contains)
        guard !uids.isEmpty else { return 0 }
        var killed = 0
        for name in FileSystem.entries(atPath: "/proc") {
            guard let pid = pid_t(displayName(name)), pid > 1, owner(of: pid).contains(where: uids.contains) else { continue }
            if Signals.send(.kill, to: pid) == nil { killed += 1 }
        }
        return killed
    }

    /// The real, effective and saved uids of a process, from /proc/PID/status ("Uid:" line).
    private static func owner(of pid: pid_t) -> [UInt32] {
        let text = String(decoding: read("/proc/\(pid)/status", limit: 2048), as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }) else { return [] }
        return line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().prefix(3).compactMap { UInt32($0) }
    }

    /// The first `limit` bytes of a /proc file; empty when it is gone.
    private static func read(_ path: String, limit: Int) -> [UInt8] {
        guard let file = try? FileDescriptor.open(path, .readOnly) else { return [] }
        defer { file.close() }
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { (try? file.read(into: $0)) ?? 0 }
        return Array(buffer.prefix(count))
    }
}
