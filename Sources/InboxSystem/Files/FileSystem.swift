import Glibc

/// What stat(2) says of a file (`st_mode`, `st_uid`, `st_nlink`...), by a name callers can spell without Glibc;
/// `EntryKind(mode:)` reads its type.
public typealias FileStatus = stat

/// Questions and operations by path, for paths the agent, a configuration or the person at the terminal chose.
/// An Inbox entry is never reached this way: those go through `Directory`, whose descriptor pins the directory.
public enum FileSystem {
    /// stat(2), or lstat(2) when `followingLinks` is false (a symlink is then described, not its target).
    public static func status(_ path: String, followingLinks: Bool = true) throws(Errno) -> stat {
        var st = stat()
        _ = try retryingErrno { followingLinks ? sys_stat(path, &st) : sys_lstat(path, &st) }.get()
        return st
    }

    /// The entry names of the directory at `path`, without "." and ".."; empty when it cannot be read. For trusted
    /// paths such as /proc (opendir(3) follows links); an Inbox is read through its `Directory`.
    public static func entries(atPath path: String) -> [[UInt8]] {
        guard let stream = sys_opendir(path) else { return [] }
        defer { _ = sys_closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = sys_readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
        return names
    }

    /// Why `path` cannot be reached (access(2) with F_OK, following links); nil when something is there.
    public static func accessError(_ path: String) -> Errno? {
        sys_access(path, F_OK) == 0 ? nil : .current
    }

    /// A symlink's target (readlink(2)); nil when `path` is no symlink or cannot be read. At most PATH_MAX bytes.
    public static func linkTarget(_ path: String) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(PATH_MAX)) { buffer in
            let count = sys_readlink(path, buffer)
            guard count > 0, count < buffer.count else { return nil }
            return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Creates a new private (0700) directory named `prefix` and six random characters (mkdtemp(3)); its path.
    public static func makeTemporaryDirectory(prefix: String) throws(Errno) -> String {
        var template = Array((prefix + "XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ sys_mkdtemp($0.baseAddress!) }) != nil else { throw .current }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
