import Glibc
import InboxCore

/// The entries that could not be moved aside (`Quarantine.moveAside`): a link, FIFO or other entry that is not a
/// regular file, still where it was dropped because not even a rename into failed/ worked (a drop Inbox on another
/// mount than the state directory: EXDEV; a full or read-only filesystem). Each is logged once, when first found, and
/// kept in `<state>/left-in-place.json` (0600, written whole and renamed into place), so that the rescan of every
/// start finds it known and says nothing; `inboxctl status` counts them and `inboxctl list failed` lists them with
/// their reason. An entry is known by its device, inode and name: another one dropped under the same name is new.
/// Bounded: the oldest go first beyond `limit`, and one gone from where it was is forgotten.
public final class LeftInPlace {
    public static let fileName = "left-in-place.json"
    public static let limit = 1000

    public struct Entry: Sendable, Hashable {
        /// The directory it is in, as the agent names it.
        public var directory: String
        /// Its name there (as shown; `nameBytes` is the name itself).
        public var name: String
        public var nameBytes: [UInt8]
        public var device: UInt64
        public var inode: UInt64
        /// symbolic link, hard link, FIFO, ... (`EntryKind`).
        public var kind: String
        public var reason: String
        public var sinceUSec: Int64

        public var path: String { directory.hasSuffix("/") ? directory + name : directory + "/" + name }
    }

    private let root: Directory
    public private(set) var entries: [Entry]

    /// The agent's: what an earlier run recorded.
    init(root: Directory) {
        self.root = root
        entries = Self.read(from: root)
    }

    /// Records `name` in `directory` as left in place; false when it was known already (then nothing is logged).
    func record(_ name: [UInt8], in directory: Directory, kind: EntryKind, reason: String) -> Bool {
        guard let st = (try? directory.status(of: name)) ?? nil else { return true }
        let device = UInt64(st.st_dev), inode = UInt64(st.st_ino)
        if entries.contains(where: { $0.device == device && $0.inode == inode && $0.nameBytes == name
                                     && $0.directory == directory.path }) {
            return false
        }
        prune()
        entries.append(Entry(directory: directory.path, name: displayName(name), nameBytes: name, device: device,
                             inode: inode, kind: kind.rawValue, reason: reason, sinceUSec: WallClock.now))
        if entries.count > Self.limit { entries.removeFirst(entries.count - Self.limit) }
        save()
        return true
    }

    /// `name` in `directory` was moved aside after all (or is gone): no longer left.
    func forget(_ name: [UInt8], in directory: Directory) {
        let before = entries.count
        entries.removeAll { $0.nameBytes == name && $0.directory == directory.path }
        if entries.count != before { save() }
    }

    /// Forgets the entries no longer at their place (removed by hand, or moved aside by an earlier run).
    public func prune() {
        let before = entries.count
        entries.removeAll { entry in
            guard let directory = try? Directory(searchOnly: entry.directory),
                  let st = (try? directory.status(of: entry.nameBytes)) ?? nil else { return true }
            return UInt64(st.st_dev) != entry.device || UInt64(st.st_ino) != entry.inode
        }
        if entries.count != before { save() }
    }

    private func save() {
        let items = entries.map { entry in
            "{\"directory\":\(JSON.quote(entry.directory)),\"name\":\(JSON.quote(entry.name)),"
                + "\"nameHex\":\(JSON.quote(Self.hex(entry.nameBytes))),\"device\":\(entry.device),"
                + "\"inode\":\(entry.inode),\"kind\":\(JSON.quote(entry.kind)),\"reason\":\(JSON.quote(entry.reason)),"
                + "\"sinceUSec\":\(entry.sinceUSec)}"
        }
        try? root.writeFile(Self.fileName, bytes: Array(("[" + items.joined(separator: ",\n") + "]\n").utf8), mode: 0o600)
    }

    /// The record in the state directory `root` (inboxctl reads it too); empty when there is none or it does not read.
    public static func read(from root: Directory) -> [Entry] {
        guard case .success(let bytes) = readBounded(root.child(fileName), limit: 4 << 20),
              case .success(let value) = JSONValue.parse(bytes), let items = value.array else { return [] }
        return items.compactMap { item in
            guard let directory = item["directory"]?.string, let name = item["name"]?.string,
                  let nameBytes = item["nameHex"]?.string.flatMap(unhex), let device = item["device"]?.int,
                  let inode = item["inode"]?.int else { return nil }
            return Entry(directory: directory, name: name, nameBytes: nameBytes, device: UInt64(device),
                         inode: UInt64(inode), kind: item["kind"]?.string ?? "entry",
                         reason: item["reason"]?.string ?? "?", sinceUSec: Int64(item["sinceUSec"]?.int ?? 0))
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    private static func unhex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
