/// Laying text and tables out in pages of a terminal's (or a picture's) width and height, by display width (a wide
/// character takes two columns, a combining mark none).
public enum PreviewPages {
    /// Lines wrapped at `width` columns (tabs expanded to 8), in pages of `height` lines; at least one page.
    public static func text(_ lines: [String], width: Int, height: Int) -> [[String]] {
        fatalError("PreviewPages.text: to be written")
    }

    /// The table's columns aligned, in pages of `height` lines whose first two lines are always the header row and a
    /// rule under it; a cell wider than its share of `width` is cut with `…`; columns that do not fit are left out,
    /// and the rule says how many. At least one page.
    public static func table(_ table: DelimitedTable, width: Int, height: Int) -> [[String]] {
        fatalError("PreviewPages.table: to be written")
    }

    /// How many columns `text` takes on a terminal.
    public static func displayWidth(_ text: String) -> Int {
        fatalError("PreviewPages.displayWidth: to be written")
    }
}
