/// Quick Look's built-in generators: which one previews a document, decided from its type alone.
///
/// The decision is the core's (`PreviewPlan.generator`); the system layer runs the chosen generator sandboxed
/// (`PreviewRenderer`), and inboxctl presents what it made.
public enum PreviewGenerator: Sendable, Hashable {
    /// A picture read by gdk-pixbuf (`gdk-pixbuf-thumbnailer`): every type its loaders read.
    case image
    /// PDF pages through poppler (`pdftoppm`).
    case pdf
    /// PostScript pages through Ghostscript (`gs -dSAFER`).
    case postscript
    /// Text (`public.text` and what conforms), its encoding detected, paged by inboxctl.
    case text
    /// Delimited values as an aligned table, the header row kept on every page.
    case table(TableDelimiter)
    /// RTF, Word, Excel, PowerPoint and OpenDocument: LibreOffice headless to PDF, then as `pdf`.
    case office
    /// An iWork document (single-file zip or package): the preview it carries (`QuickLook/Preview.pdf`,
    /// `QuickLook/Thumbnail.jpg`, `preview.jpg`), else LibreOffice where it imports the format.
    case iWork
    /// A desktop `.thumbnailer` registration that declares the document's MIME type.
    case thumbnailer(ThumbnailerEntry)
    /// Anything else: the facts `inboxctl info` gives (name, type, size, icons).
    case facts
}

/// The separator of a delimited-values table.
public enum TableDelimiter: Sendable, Hashable {
    case comma, tab

    public var byte: UInt8 { self == .comma ? UInt8(ascii: ",") : UInt8(ascii: "\t") }
}

extension PreviewGenerator {
    /// The generator as one word on a command line (the print job the agent starts is told which converts its
    /// document); nil for a `.thumbnailer`, the desktop's, which makes pictures and nothing a printer takes.
    public var word: String? {
        switch self {
        case .image: "image"
        case .pdf: "pdf"
        case .postscript: "postscript"
        case .text: "text"
        case .table(.comma): "csv"
        case .table(.tab): "tsv"
        case .office: "office"
        case .iWork: "iwork"
        case .thumbnailer: nil
        case .facts: "facts"
        }
    }

    /// The generator `word` names.
    public init?(word: String) {
        let all: [PreviewGenerator] = [.image, .pdf, .postscript, .text, .table(.comma), .table(.tab), .office, .iWork, .facts]
        guard let found = all.first(where: { $0.word == word }) else { return nil }
        self = found
    }
}
