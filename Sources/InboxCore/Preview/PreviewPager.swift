/// A key read from a terminal in raw mode.
public enum TerminalKey: Sendable, Hashable {
    case character(Character)
    case up, down, left, right, pageUp, pageDown, home, end, escape, enter
    /// A sequence not understood: ignored.
    case unknown

    /// The keys in what one read(2) of the terminal gave (escape sequences of xterm and the VT100 family).
    ///
    /// CR, LF and CRLF are `.enter`; other control bytes (tab, Ctrl-C as U+0003) are `.character`s of their own;
    /// ESC followed by anything but `[` or `O` is `.escape` and then that key (Escape pressed before another key in
    /// one read); a CSI or SS3 sequence, modifiers and all, is one key, `.unknown` when it names none of ours;
    /// a byte that is not UTF-8 is `.unknown`.
    public static func parse(_ bytes: [UInt8]) -> [TerminalKey] {
        var keys: [TerminalKey] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x1B:
                let (key, length) = escapeSequence(bytes, at: index)
                keys.append(key)
                index += length
            case 0x0D, 0x0A:
                keys.append(.enter)
                index += byte == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A ? 2 : 1
            default:
                let (key, length) = character(bytes, at: index)
                keys.append(key)
                index += length
            }
        }
        return keys
    }

    /// The key an ESC at `start` begins and how many bytes it takes.
    private static func escapeSequence(_ bytes: [UInt8], at start: Int) -> (TerminalKey, Int) {
        guard start + 1 < bytes.count else { return (.escape, 1) }
        switch bytes[start + 1] {
        case UInt8(ascii: "["):
            // CSI (ECMA-48): parameter bytes 0x30...0x3F, intermediate bytes 0x20...0x2F, one final byte 0x40...0x7E.
            var index = start + 2
            var parameters = ""
            while index < bytes.count, bytes[index] >= 0x20 && bytes[index] <= 0x3F {
                parameters.append(Character(Unicode.Scalar(bytes[index])))
                index += 1
            }
            guard index < bytes.count, bytes[index] >= 0x40 && bytes[index] <= 0x7E else {
                return (.unknown, index - start)
            }
            return (csi(parameters, final: bytes[index]), index + 1 - start)
        case UInt8(ascii: "O"):
            guard start + 2 < bytes.count else { return (.unknown, 2) }
            return (ss3(bytes[start + 2]), 3)
        default:
            return (.escape, 1)
        }
    }

    private static func csi(_ parameters: String, final: UInt8) -> TerminalKey {
        // The first parameter says which key for `~`; the second, a modifier (`1;5A`, Ctrl), is not told apart.
        let first = parameters.split(separator: ";", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        switch final {
        case UInt8(ascii: "~"):
            switch first {
            case "5": return .pageUp
            case "6": return .pageDown
            case "1", "7": return .home
            case "4", "8": return .end
            default: return .unknown
            }
        default:
            return ss3(final)
        }
    }

    private static func ss3(_ final: UInt8) -> TerminalKey {
        switch final {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        default: .unknown
        }
    }

    /// The UTF-8 character at `start`; `.unknown` for one byte that starts none, or for a sequence cut short.
    private static func character(_ bytes: [UInt8], at start: Int) -> (TerminalKey, Int) {
        let lead = bytes[start]
        let length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3
            : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0
        guard length > 0 else { return (.unknown, 1) }
        guard start + length <= bytes.count,
              let text = String(validating: bytes[start..<(start + length)], as: UTF8.self),
              let character = text.first else {
            return (.unknown, 1)
        }
        return (.character(character), length)
    }
}

/// The preview's keys as a state machine over items and their pages (Quick Look's `currentPreviewItemIndex`):
/// next/previous page (space, `n`, →, ↓, PageDown; `p`, `b`, ←, ↑, PageUp), next/previous item (`]`, `N`, Tab /
/// `[`, `P`), first/last page (`g`, Home / `G`, End), and `q` or Escape dismisses (`dismissPreview`).
///
/// Paging goes on across items: past an item's last page to the next item's first, back before its first page to the
/// previous item's last. A move that changes nothing (at either end) is `.none`. Ctrl-C dismisses too, for a terminal
/// in raw mode, which turns it into a key.
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
        // `pageCounts` may have shrunk since the last key (an item re-rendered narrower): stay inside it.
        item = pageCounts.isEmpty ? 0 : min(item, pageCounts.count - 1)
        page = pageCounts.isEmpty ? 0 : min(page, pages(of: item) - 1)
        switch key {
        case .character("q"), .character("Q"), .character("\u{03}"), .escape:
            return .dismiss
        case .character(" "), .character("n"), .right, .down, .pageDown:
            return move(nextPage())
        case .character("p"), .character("b"), .left, .up, .pageUp:
            return move(previousPage())
        case .character("]"), .character("N"), .character("\t"):
            return move(item + 1 < pageCounts.count ? (item + 1, 0) : nil)
        case .character("["), .character("P"):
            return move(item > 0 ? (item - 1, 0) : nil)
        case .character("g"), .home:
            return move(pageCounts.isEmpty ? nil : (item, 0))
        case .character("G"), .end:
            return move(pageCounts.isEmpty ? nil : (item, pages(of: item) - 1))
        default:
            return .none
        }
    }

    /// Pages of `index`, at least 1 whatever `pageCounts` says.
    private func pages(of index: Int) -> Int { max(1, pageCounts[index]) }

    private func nextPage() -> (Int, Int)? {
        guard !pageCounts.isEmpty else { return nil }
        if page + 1 < pages(of: item) { return (item, page + 1) }
        return item + 1 < pageCounts.count ? (item + 1, 0) : nil
    }

    private func previousPage() -> (Int, Int)? {
        guard !pageCounts.isEmpty else { return nil }
        if page > 0 { return (item, page - 1) }
        return item > 0 ? (item - 1, pages(of: item - 1) - 1) : nil
    }

    private mutating func move(_ target: (item: Int, page: Int)?) -> Action {
        guard let target, target != (item, page) else { return .none }
        item = target.item
        page = target.page
        return .show(item: item, page: page)
    }
}
