/// How strongly a handler claims a type (`LSHandlerRank`).
public enum HandlerRank: Int, Sendable, Comparable, CaseIterable {
    case none = 0, alternate, `default`, owner

    /// Parses "Owner", "Default", "Alternate" or "None", in any case.
    public init?(parsing text: String) {
        guard let rank = Self.allCases.first(where: { $0.name.lowercased() == text.lowercased() }) else { return nil }
        self = rank
    }

    /// The spelling used in registration files: "Owner", "Default", "Alternate", "None".
    public var name: String {
        switch self {
        case .none: "None"
        case .alternate: "Alternate"
        case .default: "Default"
        case .owner: "Owner"
        }
    }

    /// Orders by strength: None < Alternate < Default < Owner.
    public static func < (lhs: HandlerRank, rhs: HandlerRank) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What a handler does with a type (`CFBundleTypeRole`).
public enum HandlerRole: String, Sendable, CaseIterable {
    case editor, viewer, shell, none

    /// Parses "Editor", "Viewer", "Shell" or "None", in any case.
    public init?(parsing text: String) {
        self.init(rawValue: text.lowercased())
    }

    /// The spelling used in registration files: "Editor", "Viewer", "Shell", "None".
    public var name: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}
