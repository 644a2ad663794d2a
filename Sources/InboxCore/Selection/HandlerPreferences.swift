/// Handler preferences from `defaults.conf`: like `mimeapps.list`, they override ranks.
public struct HandlerPreferences: Sendable, Hashable {
    /// UTI -> handler identifier.
    public var byType: [String: String]

    /// Creates preferences.
    public init(byType: [String: String] = [:]) {
        self.byType = byType
    }
}
