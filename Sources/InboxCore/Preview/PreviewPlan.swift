/// Which built-in generator previews a document (docs/design.md, Quick Look).
///
/// The rules, the first that matches wins, each asking whether the conformance chain holds a type:
/// iWork (`com.apple.iwork.pages.*`, `.numbers.*`, `.keynote.*`, file or package) → `.iWork`; any other package →
/// `.facts`; CSV and TSV → `.table`; PDF → `.pdf`; PostScript (EPS conforms) → `.postscript`; RTF, Word, Excel,
/// PowerPoint, Office Open XML and OpenDocument → `.office`; an image → a thumbnailer other than gdk-pixbuf's own that
/// declares its MIME type, else `.image` (gdk-pixbuf reads SVG through librsvg); text → `.text`; then any thumbnailer
/// that declares the MIME type; else `.facts`. `TryExec=` is the caller's to check: the core touches no disk.
public enum PreviewPlan {
    /// The generator for a document whose type's conformance chain (most specific first, as
    /// `HandlerCatalog.conformanceChain` gives it) is `chain` and whose MIME types (preferred first) are `mimeTypes`;
    /// `package` when it is a directory (a package document). `thumbnailers` are the desktop's registrations, in
    /// search-path order, consulted for what no built-in generator reads.
    public static func generator(chain: [String], mimeTypes: [String], package: Bool,
                                 thumbnailers: [ThumbnailerEntry]) -> PreviewGenerator {
        let has = { (identifier: String) in chain.contains(identifier) }
        if chain.contains(where: { identifier in iWorkFamilies.contains { identifier.hasPrefix($0) } }) { return .iWork }
        if package { return .facts }
        if has("public.comma-separated-values-text") { return .table(.comma) }
        if has("public.tab-separated-values-text") { return .table(.tab) }
        if has("com.adobe.pdf") { return .pdf }
        if has("com.adobe.postscript") { return .postscript }
        if officeTypes.contains(where: has) { return .office }
        if has("public.image") {
            let other = thumbnailer(for: mimeTypes, among: thumbnailers.filter { !isGdkPixbuf($0) })
            return other.map(PreviewGenerator.thumbnailer) ?? .image
        }
        if has("public.text") { return .text }
        return thumbnailer(for: mimeTypes, among: thumbnailers).map(PreviewGenerator.thumbnailer) ?? .facts
    }

    /// The iWork applications' identifier families: single-file (`.sffpages`), package (`.pages`) and template forms.
    static let iWorkFamilies = ["com.apple.iwork.pages.", "com.apple.iwork.numbers.", "com.apple.iwork.keynote."]

    /// What LibreOffice imports, as BuiltinTypes.types names it; the OpenXML and OpenDocument kinds conform to these.
    static let officeTypes = [
        "public.rtf", "com.microsoft.word.doc", "com.microsoft.excel.xls", "com.microsoft.powerpoint.ppt",
        "org.openxmlformats.wordprocessingml.document", "org.openxmlformats.spreadsheetml.sheet",
        "org.openxmlformats.presentationml.presentation", "org.oasis-open.opendocument",
    ]

    /// The first thumbnailer declaring the most preferred MIME type that any declares.
    private static func thumbnailer(for mimeTypes: [String],
                                    among thumbnailers: [ThumbnailerEntry]) -> ThumbnailerEntry? {
        for mimeType in mimeTypes {
            if let entry = thumbnailers.first(where: { $0.declares(mimeType) }) { return entry }
        }
        return nil
    }

    /// gdk-pixbuf's own thumbnailer reads what `.image` reads already (it is what `.image` runs).
    static func isGdkPixbuf(_ entry: ThumbnailerEntry) -> Bool {
        guard let program = entry.exec.first else { return false }
        return program.split(separator: "/").last == "gdk-pixbuf-thumbnailer"
    }
}
