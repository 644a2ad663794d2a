/// A CSV or TSV document as rows of cells (RFC 4180 quoting: quoted cells may hold the delimiter, quotes doubled,
/// and line breaks), bounded.
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
        fatalError("DelimitedTable.parse: to be written")
    }
}
