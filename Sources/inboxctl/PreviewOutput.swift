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

    /// Writes the item's pages (index from 1); the pages written, or why none could be.
    func write(_ item: BuiltinItem, index: Int) -> Result<[Page], PreviewError> {
        let pictures: [String]
        switch item.content {
        case .failure(let error):
            return .failure(error)
        case .success(.pictures(let made)):
            pictures = made
        case .success(.text(let lines)):
            switch renderer.pictures(ofTextPages: PreviewPages.text(lines, width: Self.textPage.columns,
                                                                   height: Self.textPage.rows)) {
            case .success(let made): pictures = made
            case .failure(let error): return .failure(error)
            }
        case .success(.table(let table)):
            switch renderer.pictures(ofTextPages: PreviewPages.table(table, width: Self.textPage.columns,
                                                                    height: Self.textPage.rows)) {
            case .success(let made): pictures = made
            case .failure(let error): return .failure(error)
            }
        }
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
        return .success(pages)
    }

    /// The `--json` member for one item.
    static func json(_ item: BuiltinItem, index: Int, pages: Result<[Page], PreviewError>) -> String {
        var pairs: [(String, String)] = [
            ("index", String(index)), ("file", JSON.quote(item.path)), ("title", JSON.quote(item.title)),
            ("type", item.type.map(JSON.quote) ?? "null"), ("generator", item.generatorName.map(JSON.quote) ?? "null"),
        ]
        switch pages {
        case .success(let written):
            pairs.append(("pageCount", String(max(item.pageCount, written.count))))
            pairs.append(("pages", "[" + written.map { page in
                JSONText.object([("path", JSON.quote(page.path)), ("width", String(page.width)),
                                 ("height", String(page.height))])
            }.joined(separator: ",") + "]"))
            pairs.append(("notes", JSONText.array(item.notes)))
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
