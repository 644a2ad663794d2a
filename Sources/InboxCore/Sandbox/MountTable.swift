/// The mounts of a mount namespace as `/proc/PID/mountinfo` lists them (proc(5)), one per line:
/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`. Only what tells a path's mount
/// apart is kept: its id (statx's `stx_mnt_id`), what of its filesystem it shows (`root`), where, and whether it is
/// read-only.
public struct MountTable: Sendable, Hashable {
    public struct Mount: Sendable, Hashable {
        /// The mount's id, unique in the system (statx(2) STATX_MNT_ID).
        public var id: UInt64
        /// The directory of its filesystem it shows: "/" for a whole filesystem, a subdirectory for a bind mount.
        public var root: String
        /// Where it is mounted, in the namespace the table is of.
        public var mountPoint: String
        /// The filesystem's type (`ext4`, `tmpfs`).
        public var fileSystem: String
        /// Read-only: the mount (`ro` in its options) or the whole filesystem (`ro` in the superblock's).
        public var readOnly: Bool

        public init(id: UInt64, root: String, mountPoint: String, fileSystem: String, readOnly: Bool) {
            self.id = id
            self.root = root
            self.mountPoint = mountPoint
            self.fileSystem = fileSystem
            self.readOnly = readOnly
        }

        /// A bind mount of the directory a unit's `PrivateTmp=` makes (`/tmp/systemd-private-…-NAME.service-…/tmp`).
        public var isPrivateTemporary: Bool { root.contains("/systemd-private-") }
    }

    public var mounts: [Mount]

    public init(_ mounts: [Mount]) { self.mounts = mounts }

    /// The mount with this id (statx's), if the table has it.
    public func mount(id: UInt64) -> Mount? { mounts.last { $0.id == id } }

    /// The table from the text of a mountinfo file; a line that does not have the fields is left out.
    public static func parse(_ text: String) -> MountTable {
        MountTable(text.split(separator: "\n").compactMap { parseLine(Substring($0)) })
    }

    static func parseLine(_ line: Substring) -> Mount? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        // Six fields, optional fields, the separator, then the filesystem type, source and superblock options.
        guard fields.count >= 10, let id = UInt64(fields[0]),
              let separator = fields[6...].firstIndex(of: "-"), separator + 3 < fields.count else { return nil }
        let options = fields[5].split(separator: ",")
        let superOptions = fields[separator + 3].split(separator: ",")
        return Mount(id: id, root: unescaped(fields[3]), mountPoint: unescaped(fields[4]),
                     fileSystem: unescaped(fields[separator + 1]),
                     readOnly: options.contains("ro") || superOptions.contains("ro"))
    }

    /// The kernel writes a space, tab, newline and backslash in a path as an octal escape (`\040`).
    static func unescaped(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count,
               let value = UInt8(String(decoding: utf8[(index + 1)...(index + 3)], as: UTF8.self), radix: 8) {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
