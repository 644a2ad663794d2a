/// How a table's columns share a page's width (`PreviewPages.table`): each column as wide as its widest cell when
/// they all fit; else as many columns as fit at a readable width, the width shared out so that narrow columns keep
/// theirs and the wide ones get equal shares of the rest (max-min fairness), cells past their share cut with `…`.
struct TableLayout {
    /// Between two columns.
    static let separator = "  "
    /// Under each column of the header row.
    static let rule: Character = "─"
    /// A column is not shown narrower than this (or its own width, when less): cut further, a cell says nothing.
    static let narrowest = 5

    private let header: [String]
    private let body: ArraySlice<[String]>
    /// The shown columns' widths, first column first.
    let widths: [Int]
    /// How many columns at the right were left out.
    let hidden: Int
    /// What ends the rule line when columns were left out, `(+N columns)`; nil when none were, or when not even the
    /// first column fits beside it.
    let hiddenNote: String?

    init(_ table: DelimitedTable, width: Int) {
        let rows = table.rows.map { $0.map(Self.oneLine) }
        header = rows.first ?? []
        body = rows.dropFirst()
        var natural = [Int](repeating: 1, count: rows.map(\.count).max() ?? 0)
        for row in rows {
            for (column, cell) in row.enumerated() {
                natural[column] = max(natural[column], PreviewPages.displayWidth(cell))
            }
        }
        (widths, hidden, hiddenNote) = Self.fit(natural, width: width)
    }

    /// Pages of `height` lines: header and rule, then as many rows as fit (at least one).
    func pages(height: Int) -> [[String]] {
        guard !widths.isEmpty else { return [[]] }
        let top = [line(header), ruleLine()]
        let perPage = height > 3 ? height - 2 : 1
        guard !body.isEmpty else { return [top] }
        return stride(from: body.startIndex, to: body.endIndex, by: perPage).map { start in
            top + body[start..<(start + min(perPage, body.endIndex - start))].map(line)
        }
    }

    private func line(_ row: [String]) -> String {
        var text = ""
        for (column, width) in widths.enumerated() {
            let cell = Self.cut(column < row.count ? row[column] : "", to: width)
            if column > 0 { text += Self.separator }
            text += cell
            if column < widths.count - 1 {
                text += String(repeating: " ", count: max(0, width - PreviewPages.displayWidth(cell)))
            }
        }
        // Padding after the last cell that has text is invisible and only makes lines wrap on narrow terminals.
        while text.last == " " { text.removeLast() }
        return text
    }

    private func ruleLine() -> String {
        let rules = widths.map { String(repeating: Self.rule, count: $0) }.joined(separator: Self.separator)
        return hiddenNote.map { rules + Self.separator + $0 } ?? rules
    }

    /// `(+3 columns)`, `(+1 column)`.
    static func note(_ hidden: Int) -> String { "(+\(hidden) column\(hidden == 1 ? "" : "s"))" }

    /// Which columns show, how wide, within `width`, and the note saying how many do not.
    ///
    /// The note is spelled out even though it costs more than a column cut to its narrowest: a word says what the
    /// number counts, and a column of five characters says little.
    static func fit(_ natural: [Int], width: Int) -> (widths: [Int], hidden: Int, note: String?) {
        let count = natural.count
        guard count > 0 else { return ([], 0, nil) }
        let separators = { (shown: Int) in separator.count * (shown - 1) }
        if natural.reduce(0, +) + separators(count) <= width { return (natural, 0, nil) }
        // The most columns that fit at their narrowest, with room for the note when some are left out. The note
        // disappears when all columns show, so a count that fails does not end the search; only running out of room
        // for the columns themselves does.
        var shown = 1
        var fitted = false
        var minimum = 0
        for column in 0..<count {
            minimum += min(natural[column], narrowest)
            guard minimum + separators(column + 1) <= width else { break }
            let noteWidth = column + 1 < count ? separator.count + note(count - column - 1).count : 0
            if minimum + separators(column + 1) + noteWidth <= width {
                shown = column + 1
                fitted = true
            }
        }
        // Only when not even the first column fits beside the note is the note what gives way.
        let hiddenNote = shown < count && fitted ? note(count - shown) : nil
        let available = max(1, width - separators(shown) - (hiddenNote.map { separator.count + $0.count } ?? 0))
        return (share(Array(natural[0..<shown]), available), count - shown, hiddenNote)
    }

    /// Max-min fair shares of `available` columns: who needs less than an equal share keeps what it needs.
    static func share(_ natural: [Int], _ available: Int) -> [Int] {
        guard natural.reduce(0, +) > available else { return natural }
        var widths = natural
        var remaining = available
        var left = natural.count
        let order = natural.indices.sorted { natural[$0] < natural[$1] }
        for (position, column) in order.enumerated() {
            let equal = remaining / left
            if natural[column] <= equal {
                remaining -= natural[column]
                left -= 1
                continue
            }
            // Every column from here on is wider than an equal share: each gets one, the remainder going to the
            // leftmost ones so the whole width is used.
            let cut = order[position...].sorted()
            let extra = remaining - equal * cut.count
            for (rank, index) in cut.enumerated() { widths[index] = max(1, equal + (rank < extra ? 1 : 0)) }
            break
        }
        return widths
    }

    /// `text` within `width` columns, its end replaced by `…` when it is wider.
    static func cut(_ text: String, to width: Int) -> String {
        guard PreviewPages.displayWidth(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let characterWidth = PreviewPages.displayWidth(character)
            guard used + characterWidth <= width - 1 else { break }
            result.append(character)
            used += characterWidth
        }
        return result + "…"
    }

    /// A cell on one line: a line break (CRLF, LF or CR) as `⏎`, a tab as a space, other controls made visible.
    static func oneLine(_ cell: String) -> String {
        var result = String.UnicodeScalarView()
        var afterCR = false
        for scalar in cell.unicodeScalars {
            defer { afterCR = scalar == "\r" }
            switch scalar {
            case "\n" where afterCR: continue
            case "\n", "\r": result.append("⏎")
            case "\t": result.append(" ")
            default: VisibleText.append(scalar, to: &result)
            }
        }
        return String(result)
    }
}
