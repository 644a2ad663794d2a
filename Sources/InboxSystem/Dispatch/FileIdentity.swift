import Glibc

/// What must not change about an Inbox copy while its handler runs (docs/design.md, Read and delete only).
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: timespec
    let changed: timespec

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modified = st.st_mtim
        changed = st.st_ctim
    }

    init?(_ file: FileDescriptor) {
        guard let st = try? file.status() else { return nil }
        self.init(st)
    }

    static func == (a: FileIdentity, b: FileIdentity) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
            && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }

    /// The same file with the same data: everything but the change time (which an attribute the agent writes sets).
    func sameContent(as other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode && size == other.size
            && modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec
    }

    /// What differs, for the journal: "size 12 → 0, modification time, change time".
    func differences(from other: FileIdentity) -> String {
        var parts: [String] = []
        if inode != other.inode || device != other.device { parts.append("a different file") }
        if size != other.size { parts.append("size \(size) → \(other.size)") }
        if modified.tv_sec != other.modified.tv_sec || modified.tv_nsec != other.modified.tv_nsec {
            parts.append("modification time")
        }
        if changed.tv_sec != other.changed.tv_sec || changed.tv_nsec != other.changed.tv_nsec {
            parts.append("change time (mode, owner, links or attributes)")
        }
        return parts.joined(separator: ", ")
    }
}
