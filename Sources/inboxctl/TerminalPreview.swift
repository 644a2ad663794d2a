import InboxCore
import InboxSystem

/// Quick Look on a terminal: each item under its `[i/n] Title` line, pictures drawn by chafa, text and tables paged
/// to the window; keys move between pages and items and `q` dismisses (PreviewPager). Without a terminal to read keys
/// from, every item is written out in order instead.
struct TerminalPreview {
    /// One screenful of an item.
    enum Page {
        case picture(String)
        case lines([String])
    }

    let renderer: PreviewRenderer
    let items: [BuiltinItem]
    /// chafa's `--format` (symbols, sixels, kitty, iterm); nil lets chafa ask the terminal.
    let format: String?
    private let output = FileDescriptor(rawValue: 1)
    private let input = FileDescriptor(rawValue: 0)

    init(renderer: PreviewRenderer, items: [BuiltinItem], format: String?) {
        self.renderer = renderer
        self.items = items
        self.format = format
    }

    /// Shows the items: interactively when both standard input and output are terminals, else written out.
    func show() {
        if Terminal.isTerminal(input), Terminal.isTerminal(output), let raw = Terminal.RawMode(input) {
            interact(raw)
        } else {
            writeOut()
        }
    }

    /// The pages of an item for a content area of `size`.
    static func pages(of item: BuiltinItem, size: Terminal.Size) -> [Page] {
        switch item.content {
        case .success(.pictures(let pictures)):
            return pictures.isEmpty ? [.lines(["(no pages)"])] : pictures.map { .picture($0) }
        case .success(.text(let lines)):
            return PreviewPages.text(lines, width: size.columns, height: size.rows).map { .lines($0) }
        case .success(.table(let table)):
            return PreviewPages.table(table, width: size.columns, height: size.rows).map { .lines($0) }
        case .failure(let error):
            return [.lines(PreviewPages.text(["Cannot preview \(visible(item.file)): \(error)"], width: size.columns,
                                             height: size.rows).first ?? [])]
        }
    }

    // MARK: Interactive

    private func interact(_ raw: Terminal.RawMode) {
        defer { raw.restore() }
        let window = Terminal.size(of: output) ?? Terminal.Size(columns: 80, rows: 24)
        // The first line is the title, the last the keys: the rest is the page.
        let area = Terminal.Size(columns: window.columns, rows: max(1, window.rows - 2))
        let pages = items.map { Self.pages(of: $0, size: area) }
        var pager = PreviewPager(pageCounts: pages.map { max(1, $0.count) })
        var pictures: [String: [UInt8]] = [:]
        write("\u{1B}[?1049h\u{1B}[?25l")
        defer { write("\u{1B}[?25h\u{1B}[?1049l") }
        var action = PreviewPager.Action.show(item: 0, page: 0)
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            if case .show(let item, let page) = action {
                draw(item: item, page: page, pages: pages, window: window, area: area, pictures: &pictures)
            }
            if Interruption.signal != 0 { return }
            let count = buffer.withUnsafeMutableBytes { bytes in
                (try? input.poll(CShort(1), timeout: .milliseconds(250))).flatMap { ready in
                    ready == 0 ? 0 : try? input.read(into: bytes)
                } ?? -1
            }
            if count < 0 { return }
            action = .none
            for key in TerminalKey.parse(Array(buffer.prefix(count))) {
                // ^C and ^D in raw mode are bytes: they dismiss, as q does.
                if key == .character("\u{03}") || key == .character("\u{04}") { return }
                let next = pager.handle(key)
                if next == .dismiss { return }
                if next != .none { action = next }
            }
        }
    }

    private func draw(item: Int, page: Int, pages: [[Page]], window: Terminal.Size, area: Terminal.Size,
                      pictures: inout [String: [UInt8]]) {
        let shown = items[item]
        var header = "[\(shown.index)/\(shown.count)] \(visible(shown.title))"
        let count = max(1, pages[item].count)
        let right = count > 1 ? "page \(page + 1)/\(count)" : ""
        let room = window.columns - PreviewPages.displayWidth(header) - PreviewPages.displayWidth(right)
        header += room > 1 ? String(repeating: " ", count: room) + right : ""
        var screen = "\u{1B}[H\u{1B}[2J\u{1B}[1m" + header + "\u{1B}[0m\r\n"
        write(screen)
        screen = ""
        switch pages[item].indices.contains(page) ? pages[item][page] : .lines([]) {
        case .lines(let lines):
            write(lines.joined(separator: "\r\n"))
        case .picture(let png):
            let key = "\(item)/\(page)"
            if pictures[key] == nil {
                switch renderer.terminalPicture(png, columns: area.columns, rows: area.rows, format: format,
                                                environment: Self.terminalEnvironment()) {
                case .success(let bytes): pictures[key] = bytes
                case .failure(let error): pictures[key] = Array("Cannot draw the page: \(error)".utf8)
                }
            }
            _ = output.write(all: pictures[key] ?? [])
        }
        screen += "\u{1B}[\(window.rows);1H\u{1B}[2m"
        screen += String(Self.keysLine.prefix(max(0, window.columns - 1))) + "\u{1B}[0m"
        write(screen)
    }

    static let keysLine = "space/n next page · p previous · ] next item · [ previous item · q quit"

    // MARK: Written out

    private func writeOut() {
        let onTerminal = Terminal.isTerminal(output)
        let window = Terminal.size(of: output)
            ?? Terminal.Size(columns: Int(CurrentProcess.environment("COLUMNS") ?? "") ?? 80,
                             rows: Int(CurrentProcess.environment("LINES") ?? "") ?? 24)
        for item in items {
            write("[\(item.index)/\(item.count)] \(visible(item.title))\n")
            switch item.content {
            case .success(.text(let lines)):
                for page in PreviewPages.text(lines, width: window.columns, height: Int.max / 2) {
                    write(page.joined(separator: "\n") + "\n")
                }
            case .success(.table(let table)):
                for page in PreviewPages.table(table, width: window.columns, height: Int.max / 2) {
                    write(page.joined(separator: "\n") + "\n")
                }
            case .success(.pictures(let pictures)):
                guard onTerminal else {
                    write("(\(pictures.count) picture\(pictures.count == 1 ? "" : "s"): --output DIR writes them as PNG)\n")
                    continue
                }
                for picture in pictures {
                    switch renderer.terminalPicture(picture, columns: window.columns, rows: max(1, window.rows - 2),
                                                    format: format, environment: Self.terminalEnvironment()) {
                    case .success(let bytes): _ = output.write(all: bytes)
                    case .failure(let error): write("Cannot draw the page: \(error)\n")
                    }
                }
            case .failure:
                // Said on stderr by the command, after the others.
                break
            }
            for note in item.notes { write("(\(visible(note)))\n") }
        }
    }

    /// What chafa needs to know of the terminal to choose symbols or graphics.
    static func terminalEnvironment() -> [String] {
        ["TERM", "COLORTERM", "TERM_PROGRAM", "KITTY_WINDOW_ID", "VTE_VERSION", "WT_SESSION", "TMUX", "LANG", "LC_ALL",
         "LC_CTYPE"].compactMap { key in CurrentProcess.environment(key).map { key + "=" + $0 } }
    }

    private func write(_ text: String) {
        _ = output.write(all: text)
    }
}

/// `text` with every control character made visible: a file's name or a title never drives the terminal.
func visible(_ text: String) -> String {
    TextDecoding.decode(Array(text.utf8), truncated: false).lines.joined(separator: " ")
}
