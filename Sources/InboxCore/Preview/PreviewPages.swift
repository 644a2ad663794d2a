/// Laying text and tables out in pages of a terminal's (or a picture's) width and height, by display width (a wide
/// character takes two columns, a combining mark none).
///
/// A table's columns are separated by two spaces and its header row is underlined with `─`; a cell's line breaks are
/// shown as `⏎` and its tabs as spaces, so every row is one line. With a width or height below 1, 1 is used; with a
/// height below 3 a table page still holds its header, its rule and one row.
public enum PreviewPages {
    /// Lines wrapped at `width` columns (tabs expanded to 8), in pages of `height` lines; at least one page.
    ///
    /// A wide character is never split: it moves to the next line whole (alone on a line one column wide, it
    /// overflows it). Control characters are made visible as `TextDecoding` does.
    public static func text(_ lines: [String], width: Int, height: Int) -> [[String]] {
        let width = max(1, width)
        var wrapped: [String] = []
        for line in lines {
            var current = ""
            var column = 0
            // Lines from `TextDecoding` are visible already; anything else is made so here, as the last step before
            // a terminal (a no-op on visible text).
            for character in expandingTabs(VisibleText.visible(line)) {
                let characterWidth = displayWidth(character)
                if characterWidth > 0 && column > 0 && column + characterWidth > width {
                    wrapped.append(current)
                    current = ""
                    column = 0
                }
                current.append(character)
                column += characterWidth
            }
            wrapped.append(current)
        }
        return paged(wrapped, height: height)
    }

    /// The table's columns aligned, in pages of `height` lines whose first two lines are always the header row and a
    /// rule under it; a cell wider than its share of `width` is cut with `…`; columns that do not fit are left out,
    /// and the rule says how many. At least one page.
    public static func table(_ table: DelimitedTable, width: Int, height: Int) -> [[String]] {
        TableLayout(table, width: max(1, width)).pages(height: height)
    }

    /// How many columns `text` takes on a terminal.
    public static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + displayWidth($1) }
    }

    /// The columns one grapheme takes: its first scalar decides, except that an emoji variation selector (U+FE0F)
    /// makes a narrow emoji wide, as terminals draw it.
    static func displayWidth(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        let width = scalarWidth(first)
        if width == 1 && first.properties.isEmoji && scalars.contains("\u{FE0F}") { return 2 }
        return width
    }

    /// wcwidth(3) in short: marks and format characters 0, East Asian Wide and Fullwidth and emoji 2, the rest 1.
    static func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x7F { return value < 0x20 ? 0 : 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .control:
            return 0
        case .format:
            // The soft hyphen is drawn (wcwidth gives it 1); other format characters (ZWJ, ZWSP, marks) are not.
            return value == 0xAD ? 1 : 0
        default:
            break
        }
        // Hangul vowels and final consonants join the syllable before them.
        if value >= 0x1160 && value <= 0x11FF { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        return wideRanges.contains { $0.contains(value) } ? 2 : 1
    }

    /// East Asian Wide and Fullwidth blocks (UAX #11), compacted to whole blocks; emoji come from their own property.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
        0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
        0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    /// `line` with each tab replaced by the spaces to the next multiple of 8 columns, counted from the start of the
    /// line as `expand` does (not from where a wrapped line starts).
    static func expandingTabs(_ line: String) -> String {
        guard line.contains("\t") else { return line }
        var result = ""
        var column = 0
        for character in line {
            if character == "\t" {
                let spaces = 8 - column % 8
                result.append(String(repeating: " ", count: spaces))
                column += spaces
            } else {
                result.append(character)
                column += displayWidth(character)
            }
        }
        return result
    }

    /// `lines` in pages of `height` (at least 1) lines; one empty page for no lines.
    static func paged(_ lines: [String], height: Int) -> [[String]] {
        let height = max(1, height)
        guard !lines.isEmpty else { return [[]] }
        return stride(from: 0, to: lines.count, by: height).map { Array(lines[$0..<($0 + min(height, lines.count - $0))]) }
    }
}
