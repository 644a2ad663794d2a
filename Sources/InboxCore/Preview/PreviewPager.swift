/// A key read from a terminal in raw mode.
public enum TerminalKey: Sendable, Hashable {
    case character(Character)
    case up, down, left, right, pageUp, pageDown, home, end, escape, enter
    /// A sequence not understood: ignored.
    case unknown

    /// The keys in what one read(2) of the terminal gave (escape sequences of xterm and the VT100 family).
    public static func parse(_ bytes: [UInt8]) -> [TerminalKey] {
        fatalError("TerminalKey.parse: to be written")
    }
}

/// The preview's keys as a state machine over items and their pages (Quick Look's `currentPreviewItemIndex`):
/// next/previous page (space, `n`, →, ↓, PageDown; `p`, `b`, ←, ↑, PageUp), next/previous item (`]`, `N`, Tab /
/// `[`, `P`), first/last page (`g`, Home / `G`, End), and `q` or Escape dismisses (`dismissPreview`).
public struct PreviewPager: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        /// Draw `item`'s `page` (both from 0).
        case show(item: Int, page: Int)
        case dismiss
        /// Nothing to do (at an end, or a key with no meaning).
        case none
    }

    public private(set) var item = 0
    public private(set) var page = 0
    /// The number of pages of each item (at least 1 each).
    public var pageCounts: [Int]

    public init(pageCounts: [Int]) {
        self.pageCounts = pageCounts
    }

    public mutating func handle(_ key: TerminalKey) -> Action {
        fatalError("PreviewPager.handle: to be written")
    }
}
