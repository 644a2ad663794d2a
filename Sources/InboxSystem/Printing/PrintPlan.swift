import InboxCore

/// How a document reaches a printer, decided from its type (the generator its preview would use) and the formats the
/// destination takes: as it is, or converted to PDF first by Quick Look's generators.
public enum PrintPlan: Sendable, Equatable {
    /// The file itself, in this MIME type.
    case send(format: String)
    /// A PDF of it made by `PreviewRenderer.pdf(of:with:)`.
    case convert(PreviewGenerator)
    /// No converter reads the type.
    case noConverter
    /// The destination takes neither the format nor PDF.
    case formatNotTaken(String)

    /// `takes` says whether the destination takes a MIME type (`document-format-supported`).
    public static func decide(generator: PreviewGenerator, mimeTypes: [String], takes: (String) -> Bool) -> PrintPlan {
        let pdf = "application/pdf"
        let converted: PrintPlan = takes(pdf) ? .convert(generator) : .formatNotTaken(pdf)
        switch generator {
        case .pdf: return takes(pdf) ? .send(format: pdf) : .formatNotTaken(pdf)
        case .postscript:
            let postscript = "application/postscript"
            return takes(postscript) ? .send(format: postscript) : .formatNotTaken(postscript)
        case .image:
            if let format = mimeTypes.first(where: { $0.hasPrefix("image/") && takes($0) }) { return .send(format: format) }
            return .formatNotTaken(mimeTypes.first ?? "image")
        case .text:
            // Drawn as its preview is (its encoding decoded, control characters visible): the printed PDF has the
            // text, which a printer's own text filter makes unsearchable; plain text where PDF is not taken.
            if takes(pdf) { return .convert(.text) }
            return takes("text/plain") ? .send(format: "text/plain") : .formatNotTaken("text/plain")
        case .table, .office, .iWork: return converted
        case .thumbnailer, .facts: return .noConverter
        }
    }
}
