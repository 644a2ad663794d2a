import InboxCore

/// JSON text built by hand, keys in the order given.
enum JSONText {
    static func array(_ strings: [String]) -> String {
        "[" + strings.map(JSON.quote).joined(separator: ",") + "]"
    }

    /// An object from (key, already-encoded value) pairs.
    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { JSON.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
