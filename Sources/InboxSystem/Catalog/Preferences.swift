import Glibc
import InboxCore

/// defaults.conf (`[Defaults]`, `UTI=handler-id`), read the same way by the agent and by inboxctl.
public enum Preferences {
    /// The largest defaults.conf read.
    public static let maximumSize = 1 << 20

    /// The preferences in `path` (none when nil) and what was wrong with the file. A missing file is no problem:
    /// `problem` is set only when it exists but cannot be read.
    public static func load(_ path: String?) -> (preferences: HandlerPreferences, diagnostics: [Diagnostic],
                                                 problem: String?) {
        guard let path else { return (HandlerPreferences(byType: [:]), [], nil) }
        switch readBounded(path, limit: maximumSize) {
        case .success(let bytes):
            let (preferences, diagnostics) = ConfigurationParser.parseDefaults(bytes, path: path)
            return (preferences, diagnostics, nil)
        case .failure(let error):
            let missing = FileSystem.accessError(path) == .noSuchFile
            return (HandlerPreferences(byType: [:]), [], missing ? nil : "\(path): \(error)")
        }
    }
}
