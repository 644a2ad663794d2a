import InboxCore
import InboxSystem

/// `inboxctl preview --output DIR`: every page of every item as a PNG, `DIR/<i>-<p>.png` (item i, page p, from 1),
/// for scripts and web pages; text, tables and facts are drawn as pages of a monospace font. With `--json`, which file
/// is which.
struct PreviewOutput {
    /// Text pages drawn as pictures have this many columns and lines.
    static let textPage = Terminal.Size(columns: 80, rows: 50)

    let renderer: PreviewRenderer
    let directory: Directory

    /// Opens (making it if missing) the output directory.
    static func open(_ path: String) -> Result<Directory, SystemError> {
        do {
            if try Directory.exists(path) { return .success(try Directory(path: path)) }
            return .success(try Directory.create(path: path, mode: 0o755))
        } catch {
            return .failure(error)
        }
    }

    /// One written page.
    struct Page {
        let path: String
        let width: Int
        let height: Int
    }

    /// What was written of one item: its pages, how many the document has, and what to say beside them.
    struct Written {
        var pages: [Page]
        var pageCount: Int
        var notes: [String]
    }

    /// Writes the item's pages (index from 1), at most `--pages` of them; or why none could be.
    func write(_ item: BuiltinItem, index: Int) -> Result<Written, PreviewError> {
        let made: [String]
        var pageCount = item.pageCount, notes = item.notes
        let textPages: [[String]]
        switch item.content {
        case .failure(let error):
            return .failure(error)
        case .success(.pictures(let pages)):
            made = pages
            textPages = []
        case .success(.text(let lines)):
            made = []
            textPages = PreviewPages.text(lines, width: Self.textPage.columns, height: Self.textPage.rows)
        case .success(.table(let table)):
            made = []
            textPages = PreviewPages.table(table, width: Self.textPage.columns, height: Self.textPage.rows)
        }
        var drawn = made
        if !textPages.isEmpty {
            // Text is paged here, so the page bound is applied here: the generators applied it to their own pages.
            let limit = renderer.options.maximumPages
            pageCount = textPages.count
            if textPages.count > limit {
                notes.append("only the first \(limit) of \(textPages.count) pages are shown")
            }
            switch renderer.pictures(ofTextPages: Array(textPages.prefix(limit))) {
            case .success(let pages): drawn = pages
            case .failure(let error): return .failure(error)
            }
        }
        let pictures = drawn
        var pages: [Page] = []
        for (number, picture) in pictures.enumerated() {
            let bytes: [UInt8]
            switch readBounded(picture, limit: Int(clamping: renderer.options.fileSize)) {
            case .success(let read): bytes = read
            case .failure(let error): return .failure(.failed("cannot read the page it made: \(error)"))
            }
            guard let size = PNGFile.dimensions(bytes) else {
                return .failure(.failed("page \(number + 1) it made is not a PNG"))
            }
            let name = "\(index)-\(number + 1).png"
            do { try directory.writeFile(name, bytes: bytes, mode: 0o644) } catch { return .failure(.system(error)) }
            pages.append(Page(path: directory.child(name), width: size.width, height: size.height))
        }
        return .success(Written(pages: pages, pageCount: max(pageCount, pages.count), notes: notes))
    }

    /// The `--json` member for one item.
    static func json(_ item: BuiltinItem, index: Int, pages: Result<Written, PreviewError>) -> String {
        var pairs: [(String, String)] = [
            ("index", String(index)), ("file", JSON.quote(item.path)), ("title", JSON.quote(item.title)),
            ("type", item.type.map(JSON.quote) ?? "null"), ("generator", item.generatorName.map(JSON.quote) ?? "null"),
        ]
        switch pages {
        case .success(let written):
            pairs.append(("pageCount", String(written.pageCount)))
            pairs.append(("pages", "[" + written.pages.map { page in
                JSONText.object([("path", JSON.quote(page.path)), ("width", String(page.width)),
                                 ("height", String(page.height))])
            }.joined(separator: ",") + "]"))
            pairs.append(("notes", JSONText.array(written.notes)))
            pairs.append(("error", "null"))
        case .failure(let error):
            pairs.append(("pageCount", String(item.pageCount)))
            pairs.append(("pages", "[]"))
            pairs.append(("notes", JSONText.array(item.notes)))
            pairs.append(("error", JSON.quote(error.description)))
        }
        return JSONText.object(pairs)
    }
}
