/// What the inotify fuzz target (Tests/Fuzz/inotify.swift) and the corpus replay in InboxSystemTests feed each
/// input to: the read-buffer parser, and the invariants it must keep (empty when none held broken).
public enum InotifyFuzzEntry {
    public static func events(_ bytes: [UInt8]) -> [String] {
        let events = InotifyEvent.parse(bytes)
        var broken: [String] = []
        var consumed = 0
        for event in events {
            if event.name.contains(0) { broken.append("a name kept a NUL") }
            consumed += InotifyEvent.headerSize + event.name.count
        }
        if consumed > bytes.count { broken.append("events hold \(consumed) bytes of a \(bytes.count)-byte buffer") }
        // Written again without padding, the events read back the same.
        var packed: [UInt8] = []
        for event in events {
            withUnsafeBytes(of: event.watch.littleEndian) { packed += $0 }
            withUnsafeBytes(of: event.mask.rawValue.littleEndian) { packed += $0 }
            withUnsafeBytes(of: event.cookie.littleEndian) { packed += $0 }
            withUnsafeBytes(of: UInt32(event.name.count).littleEndian) { packed += $0 }
            packed += event.name
        }
        if InotifyEvent.parse(packed) != events { broken.append("the events written again read back differently") }
        return broken
    }
}
