/// A CSV or TSV document as rows of cells (RFC 4180 quoting: quoted cells may hold the delimiter, quotes doubled,
/// and line breaks), bounded.
///
/// Forgiving where RFC 4180 is strict, as spreadsheets are: LF and a lone CR end a row as CRLF does, rows may have
/// different numbers of cells, text after a closing quote is kept in the cell, and an unterminated quote runs to the
/// end of the text. An empty line is a row of one empty cell; a line break at the very end makes no row.
public struct DelimitedTable: Sendable, Hashable {
    public var rows: [[String]]
    /// Rows or columns past the bounds were left out.
    public var truncated: Bool

    public init(rows: [[String]], truncated: Bool) {
        self.rows = rows
        self.truncated = truncated
    }

    /// Parses decoded text; at most `maximumRows` rows of `maximumColumns` cells.
    public static func parse(_ text: String, delimiter: TableDelimiter, maximumRows: Int = 100_000,
                             maximumColumns: Int = 1_000) -> DelimitedTable {
        var parser = Parser(delimiter: Unicode.Scalar(delimiter.byte), maximumRows: max(0, maximumRows),
                            maximumColumns: max(0, maximumColumns))
        parser.run(text.unicodeScalars)
        return DelimitedTable(rows: parser.rows, truncated: parser.truncated)
    }
}

/// The RFC 4180 state machine over scalars (a CRLF is one `Character` in Swift, two scalars here).
private struct Parser {
    let delimiter: Unicode.Scalar
    let maximumRows: Int
    let maximumColumns: Int
    var rows: [[String]] = []
    var truncated = false

    private var row: [String] = []
    private var cell = String.UnicodeScalarView()
    /// Inside a quoted part of a cell.
    private var quoted = false
    /// The last scalar closed a quote: a quote right after it is a doubled (literal) quote.
    private var afterQuote = false
    /// Something of the current row was read (a row that is only a line break at the end of the text is none).
    private var rowStarted = false
    /// The last scalar was a CR that ended a row, so an LF after it is the same line break.
    private var afterCR = false

    init(delimiter: Unicode.Scalar, maximumRows: Int, maximumColumns: Int) {
        self.delimiter = delimiter
        self.maximumRows = maximumRows
        self.maximumColumns = maximumColumns
    }

    mutating func run(_ scalars: String.UnicodeScalarView) {
        for scalar in scalars {
            if rows.count >= maximumRows {
                // A bare line break after the last kept row is the file's ending, not a row left out.
                if !(scalar == "\n" && afterCR) { truncated = true }
                return
            }
            step(scalar)
        }
        if rowStarted && rows.count < maximumRows { endRow() }
    }

    private mutating func step(_ scalar: Unicode.Scalar) {
        defer { afterCR = scalar == "\r" && !quoted }
        if quoted {
            if scalar == "\"" {
                quoted = false
                afterQuote = true
            } else {
                cell.append(scalar)
            }
            return
        }
        if scalar == "\"" {
            // A quote opens a quoted part at the start of a cell, and after a closing quote it is a doubled one;
            // elsewhere in an unquoted cell it is just a character.
            if afterQuote {
                cell.append(scalar)
                quoted = true
                afterQuote = false
            } else if cell.isEmpty {
                quoted = true
            } else {
                cell.append(scalar)
            }
            rowStarted = true
            return
        }
        afterQuote = false
        switch scalar {
        case "\n" where afterCR:
            return
        case "\n", "\r":
            endRow()
        case delimiter:
            endCell()
            rowStarted = true
        default:
            cell.append(scalar)
            rowStarted = true
        }
    }

    private mutating func endCell() {
        if row.count < maximumColumns {
            row.append(String(cell))
        } else {
            truncated = true
        }
        cell = String.UnicodeScalarView()
    }

    private mutating func endRow() {
        endCell()
        rows.append(row)
        row = []
        rowStarted = false
    }
}
