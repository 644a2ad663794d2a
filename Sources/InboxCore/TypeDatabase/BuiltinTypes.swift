/// The built-in type table: Apple's system-declared UTIs with their conformance, extensions and MIME types.
///
/// One row per type: identifier, description, then space-separated parents, extensions and MIME types.
/// Within the table the first type to claim an extension or MIME type wins it, so order matters for shared tags.
enum BuiltinTypes {
    static let rows: [(String, String, String, String, String)] = [
        // Roots of the physical and functional hierarchies.
        ("public.item", "Item", "", "", ""),
        ("public.content", "Content", "", "", ""),
        ("public.composite-content", "Composite content", "public.content", "", ""),
        ("public.data", "Data", "public.item", "", "application/octet-stream"),
        ("public.directory", "Directory", "public.item", "", "inode/directory"),
        ("public.folder", "Folder", "public.directory", "", ""),
        ("public.executable", "Executable", "public.item", "",
         "application/x-executable application/x-pie-executable"),
        ("public.presentation", "Presentation", "public.composite-content", "", ""),
        ("public.spreadsheet", "Spreadsheet", "public.content", "", ""),
        ("public.contact", "Contact", "public.data public.content", "", ""),
        ("public.calendar-event", "Calendar event", "public.content", "", ""),

        // Images.
        ("public.image", "Image", "public.data public.content", "", ""),
        ("public.png", "PNG image", "public.image", "png", "image/png"),
        ("public.jpeg", "JPEG image", "public.image", "jpeg jpg jpe", "image/jpeg image/jpg"),
        ("public.tiff", "TIFF image", "public.image", "tiff tif", "image/tiff"),
        ("com.compuserve.gif", "GIF image", "public.image", "gif", "image/gif"),
        ("com.microsoft.bmp", "Windows bitmap image", "public.image", "bmp", "image/bmp image/x-bmp"),
        ("org.webmproject.webp", "WebP image", "public.image", "webp", "image/webp"),
        ("public.heif-standard", "HEIF image", "public.image", "heif", "image/heif"),
        ("public.heic", "HEIC image", "public.heif-standard", "heic", "image/heic"),
        ("public.svg-image", "SVG image", "public.image public.xml", "svg svgz", "image/svg+xml"),

        // Text.
        ("public.text", "Text", "public.data public.content", "", ""),
        ("public.plain-text", "Plain text", "public.text", "txt text", "text/plain"),
        ("public.utf8-plain-text", "UTF-8 plain text", "public.plain-text", "", "text/plain;charset=utf-8"),
        ("public.utf16-plain-text", "UTF-16 plain text", "public.plain-text", "", "text/plain;charset=utf-16"),
        ("public.delimited-values-text", "Delimited values text", "public.text", "", ""),
        ("public.comma-separated-values-text", "CSV text", "public.delimited-values-text", "csv",
         "text/csv text/comma-separated-values"),
        ("public.tab-separated-values-text", "TSV text", "public.delimited-values-text", "tsv",
         "text/tab-separated-values"),
        ("public.rtf", "Rich text", "public.text", "rtf", "text/rtf application/rtf"),
        ("public.html", "HTML text", "public.text", "html htm shtml", "text/html"),
        ("public.xml", "XML text", "public.text", "xml", "application/xml text/xml"),
        ("public.json", "JSON text", "public.text", "json", "application/json"),
        ("public.yaml", "YAML text", "public.text", "yaml yml", "application/yaml application/x-yaml text/yaml"),
        ("net.daringfireball.markdown", "Markdown text", "public.plain-text", "md markdown",
         "text/markdown text/x-markdown"),
        ("public.vcard", "vCard", "public.text public.contact", "vcf vcard", "text/vcard text/x-vcard text/directory"),
        ("com.apple.ical.ics", "iCalendar", "public.text public.calendar-event", "ics", "text/calendar"),

        // Source code and scripts.
        ("public.source-code", "Source code", "public.plain-text", "", ""),
        ("public.script", "Script", "public.source-code", "", ""),
        ("public.shell-script", "Shell script", "public.script", "sh command",
         "application/x-shellscript text/x-shellscript application/x-sh"),
        ("public.python-script", "Python script", "public.shell-script", "py", "text/x-python text/x-python-script"),

        // Audio and video.
        ("public.audiovisual-content", "Audiovisual content", "public.data public.content", "", ""),
        ("public.audio", "Audio", "public.audiovisual-content", "", ""),
        ("public.mp3", "MP3 audio", "public.audio", "mp3", "audio/mpeg audio/mp3"),
        ("public.movie", "Movie", "public.audiovisual-content", "", ""),
        ("public.mpeg-4", "MPEG-4 movie", "public.movie", "mp4 mpeg4", "video/mp4"),

        // Archives. public.zip-archive comes first so that it wins "zip", as UTType(filenameExtension:) does.
        ("public.archive", "Archive", "public.data", "", ""),
        ("com.pkware.zip-archive", "ZIP archive", "public.data public.archive", "", ""),
        ("public.zip-archive", "ZIP archive", "com.pkware.zip-archive", "zip", "application/zip"),
        ("org.gnu.gnu-zip-archive", "gzip archive", "public.data public.archive", "gz gzip",
         "application/gzip application/x-gzip"),
        ("public.tar-archive", "tar archive", "public.data public.archive", "tar", "application/x-tar"),

        // Documents.
        ("com.adobe.pdf", "PDF document", "public.data public.composite-content", "pdf", "application/pdf"),
        ("org.openxmlformats.openxml", "Office Open XML", "public.zip-archive", "", ""),
        ("org.openxmlformats.wordprocessingml.document", "Word document",
         "org.openxmlformats.openxml public.composite-content", "docx",
         "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("org.openxmlformats.spreadsheetml.sheet", "Excel workbook",
         "org.openxmlformats.openxml public.spreadsheet", "xlsx",
         "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("org.openxmlformats.presentationml.presentation", "PowerPoint presentation",
         "org.openxmlformats.openxml public.presentation", "pptx",
         "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
        ("com.microsoft.word.doc", "Word 97 document", "public.data public.composite-content", "doc",
         "application/msword"),
        ("com.microsoft.excel.xls", "Excel 97 workbook", "public.data public.spreadsheet", "xls",
         "application/vnd.ms-excel"),
        ("com.microsoft.powerpoint.ppt", "PowerPoint 97 presentation", "public.data public.presentation", "ppt",
         "application/vnd.ms-powerpoint"),
        ("com.apple.keynote.key", "Keynote presentation", "public.zip-archive public.presentation", "key",
         "application/vnd.apple.keynote application/x-iwork-keynote-sffkey"),
        ("com.apple.pages.pages", "Pages document", "public.zip-archive public.composite-content", "pages",
         "application/vnd.apple.pages application/x-iwork-pages-sffpages"),
        ("com.apple.numbers.numbers", "Numbers spreadsheet", "public.zip-archive public.spreadsheet", "numbers",
         "application/vnd.apple.numbers application/x-iwork-numbers-sffnumbers"),
    ]

    static let declarations: [TypeDeclaration] = rows.map { row in
        TypeDeclaration(identifier: row.0, description: row.1, conformsTo: words(row.2), extensions: words(row.3),
                        mimeTypes: words(row.4), origin: .builtin)
    }

    private static func words(_ text: String) -> [String] {
        text.split(separator: " ").map(String.init)
    }
}
