import Glibc

/// Identities of their own for handlers without `User=` when the agent runs as root, like systemd's
/// DynamicUser=: a uid (and a gid of the same number) from a range no account uses, one per handler,
/// so that no two handlers can read or write each other's containers and none runs as root.
/// The container's Documents/ is the record: its owner is the handler's uid across restarts.
enum DynamicIdentity {
    /// 0x70000000 + 0...65535: far above login and system accounts, below the 2^31 that some tools mishandle.
    static let base: UInt32 = 0x7000_0000
    static let count: UInt32 = 65536

    static func contains(_ uid: UInt32) -> Bool { uid >= base && uid < base + count }

    /// The content sniffer's identity: the uid (and gid) right above the handlers' range, so that it is nobody's
    /// but its own (no account, no name-service lookup) and no leftover sweep of a handler's uid touches it.
    static let sniffer = Identity(uid: base + count, gid: base + count, groups: [], name: "inboxd-sniffer", home: "/")

    /// Quick Look's built-in generators' identity (`PreviewRenderer` as root): the next uid above the sniffer's, for
    /// the same reasons; it reads only the copies made for it and writes only in the renderer's scratch directory.
    static let previewer = Identity(uid: base + count + 1, gid: base + count + 1, groups: [], name: "inboxd-preview",
                                    home: "/")

    /// Allocates for `handlers` (sorted by identifier for a stable result), keeping what existing
    /// containers record and avoiding every uid already taken.
    static func allocate(_ handlers: [String], containers: Directory?, documentsPath: (String) -> String) -> [String: Identity] {
        var taken: Set<UInt32> = []
        var result: [String: Identity] = [:]
        // Containers that exist keep their owner.
        if let names = try? containers?.entries() {
            for name in names.compactMap({ String(validating: $0, as: UTF8.self) }) {
                if let st = try? FileSystem.status(documentsPath(name)), contains(st.st_uid) { taken.insert(st.st_uid) }
            }
        }
        for handler in handlers.sorted() {
            var uid: UInt32
            if let st = try? FileSystem.status(documentsPath(handler)), contains(st.st_uid) {
                uid = st.st_uid
            } else {
                uid = base + hash(handler) % count
                while taken.contains(uid) { uid = base + (uid - base + 1) % count }
            }
            taken.insert(uid)
            result[handler] = Identity(uid: uid, gid: uid, groups: [uid], name: handler, home: documentsPath(handler))
        }
        return result
    }

    /// FNV-1a: stable across runs and builds (Swift's Hasher is seeded per process).
    static func hash(_ text: String) -> UInt32 {
        var value: UInt32 = 2_166_136_261
        for byte in text.utf8 {
            value ^= UInt32(byte)
            value = value &* 16_777_619
        }
        return value
    }
}
