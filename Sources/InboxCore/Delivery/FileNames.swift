/// How the agent names files it moves.
public enum FileNames {
    /// A name safe to hand a handler: valid UTF-8, no control characters, no slash, not hidden,
    /// at most 200 bytes. Anything else is replaced by `_`. A clean name comes back unchanged.
    public static func sanitized(_ name: [UInt8]) -> String {
        // Most names are printable ASCII that is not hidden and short: taken as they are.
        if name.count <= 200, name.first != UInt8(ascii: "."),
           name.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }), !name.isEmpty {
            return String(decoding: name, as: UTF8.self)
        }
        var text = String(decoding: name, as: UTF8.self)
        text = String(text.unicodeScalars.map { scalar -> Character in
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "/" || scalar == "\u{FFFD}" { return "_" }
            return Character(scalar)
        })
        // Cut to the last 200 bytes (a long name keeps its extension) before the leading dots go, so that the tail
        // cannot start with one; and dots go by scalar, since a dot and a combining mark are one Character.
        while text.utf8.count > 200 { text.removeFirst() }
        while text.unicodeScalars.first == "." { text.unicodeScalars.removeFirst() }
        if text.isEmpty { text = "file" }
        return text
    }

    /// `photo.png` -> `photo-2.png`; `README` -> `README-2`.
    public static func numbered(_ name: String, _ number: Int) -> String {
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "\(name[..<dot])-\(number)\(name[dot...])"
        }
        return "\(name)-\(number)"
    }

    /// True for a name starting with `.`: in progress in a drop Inbox, a sidecar, never dispatched.
    public static func isHidden(_ name: [UInt8]) -> Bool { name.first == 0x2E }
}
