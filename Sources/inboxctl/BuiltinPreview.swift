import InboxCore
import InboxSystem

/// What a built-in preview shows of one item, before it is laid out for a terminal or drawn as pictures.
enum PreviewContent {
    /// PNG pages in the renderer's scratch directory.
    case pictures([String])
    /// Lines of text (decoded and made safe to show, or the facts).
    case text([String])
    case table(DelimitedTable)
}

/// One item of `inboxctl preview` shown by the built-in generators (Quick Look's own).
struct BuiltinItem {
    /// The file as given, and its absolute path.
    let file: String
    let path: String
    let title: String
    /// The type as the agent would resolve it, when it could be inspected.
    let type: String?
    let generator: PreviewGenerator?
    /// What was made, or why nothing could be (presentPreview's NO).
    let content: Result<PreviewContent, PreviewError>
    /// The document's pages (more than the pictures when `--pages` cut it).
    let pageCount: Int
    let notes: [String]
    /// Its position among the files previewed together (from 1), and how many there are.
    var index = 1
    var count = 1
    /// The path the kernel gives the descriptor that was shown (canonical), and its modification time.
    var canonicalPath: String?
    var modified: Int64?
    /// Its size in bytes and preferred MIME type, for a thumbnail's Thumb::Size and Thumb::Mime.
    var fileSize: Int64?
    var mimeType: String?

    var generatorName: String? { generator?.name }
}

extension PreviewGenerator {
    /// Its name in JSON (`inboxctl preview --output --json`, `inboxctl options --json`) and on the terminal.
    var name: String {
        switch self {
        case .image: "image"
        case .pdf: "pdf"
        case .postscript: "postscript"
        case .text: "text"
        case .table: "table"
        case .office: "office"
        case .iWork: "iWork"
        case .thumbnailer: "thumbnailer"
        case .facts: "facts"
        }
    }
}

/// Makes built-in preview items: opens each file once, with the no-link rules, inspects that descriptor as the agent
/// would, decides the generator (`PreviewPlan`) and has the renderer run it sandboxed on the same descriptor.
struct BuiltinPreviews {
    let inspection: Inspection
    let renderer: PreviewRenderer
    let thumbnailers: [ThumbnailerEntry]

    func make(_ file: String, title: String) -> BuiltinItem {
        let path = file.hasPrefix("/") ? file : (CurrentProcess.workingDirectory ?? ".") + "/" + file
        let failed = { (error: String) in
            BuiltinItem(file: file, path: path, title: title, type: nil, generator: nil,
                        content: .failure(.failed(error)), pageCount: 0, notes: [])
        }
        let held: Inspection.HeldDocument
        switch Inspection.open(file) {
        case .success(let opened): held = opened
        case .failure(let error): return failed("\(error)")
        }
        defer { held.descriptor.close() }
        let report: FileReport
        switch inspection.inspect(held, path: file) {
        case .success(let inspected): report = inspected
        case .failure(let error): return failed("\(error)")
        }
        let type = report.resolved.identifier
        let database = inspection.catalog.database
        let canonical = FileSystem.linkTarget("/proc/self/fd/\(held.descriptor.rawValue)")
        let modified = Int64(held.status.st_mtim.tv_sec)
        var mimeTypes = database.declaration(for: type)?.mimeTypes ?? []
        if let sniffed = report.sniffed, !mimeTypes.contains(sniffed) { mimeTypes.append(sniffed) }
        let generator = PreviewPlan.generator(chain: inspection.catalog.conformanceChain(of: type), mimeTypes: mimeTypes,
                                              package: report.package != nil, thumbnailers: thumbnailers)
        if case .facts = generator {
            var item = BuiltinItem(file: file, path: path, title: title, type: type, generator: generator,
                                   content: .success(.text(facts(report, status: held.status))), pageCount: 1, notes: [])
            item.canonicalPath = canonical
            item.modified = modified
            item.fileSize = Int64(held.status.st_size)
            item.mimeType = mimeTypes.first
            return item
        }
        let document = PreviewDocument(descriptor: held.descriptor, name: report.name, contentType: type,
                                       mimeTypes: mimeTypes, size: Int64(held.status.st_size),
                                       package: report.package != nil)
        var item: BuiltinItem
        switch renderer.render(document, with: generator) {
        case .success(let rendered):
            let content: PreviewContent = switch rendered.content {
            case .pictures(let pages): .pictures(pages)
            case .text(let decoded): .text(decoded.lines)
            case .table(let table): .table(table)
            }
            item = BuiltinItem(file: file, path: path, title: title, type: type, generator: generator,
                               content: .success(content), pageCount: rendered.pageCount, notes: rendered.notes)
        case .failure(let error):
            item = BuiltinItem(file: file, path: path, title: title, type: type, generator: generator,
                               content: .failure(error), pageCount: 0, notes: [])
        }
        item.canonicalPath = canonical
        item.modified = modified
        item.fileSize = Int64(held.status.st_size)
        item.mimeType = mimeTypes.first
        return item
    }

    /// What `inboxctl info` says of a document no generator reads: its name, type, size, content and icons.
    private func facts(_ report: FileReport, status: FileStatus) -> [String] {
        let database = inspection.catalog.database
        let type = report.resolved.identifier
        var lines = ["Name:     " + TextDecoding.decode(Array(report.name.utf8), truncated: false).lines.joined()]
        let description = database.declaration(for: type)?.description
        lines.append("Type:     " + type + (description.map { " (\($0))" } ?? ""))
        lines.append("Conforms: " + inspection.catalog.conformanceChain(of: type).dropFirst().joined(separator: ", "))
        if let package = report.package {
            lines.append("Package:  \(package.entries.map(String.init) ?? "?") entries, "
                         + "\(package.bytes.map(String.init) ?? "?") bytes")
        } else {
            lines.append("Size:     \(status.st_size) bytes")
        }
        if let sniffed = report.sniffed { lines.append("Content:  " + sniffed) }
        let icons = inspection.icons(inspection.select(report).chosen)
        if !icons.isEmpty {
            lines.append("Icons:    " + icons.map { $0.path + ($0.exists ? "" : " (missing)") }.joined(separator: " "))
        }
        lines.append("")
        lines.append("No built-in preview reads this type; `inboxctl open` opens it with its handler.")
        return lines
    }
}
