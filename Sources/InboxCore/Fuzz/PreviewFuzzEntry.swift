/// The fuzz entries of Quick Look's built-in previews (Preview/): the parsers of a document's untrusted bytes and the
/// layout of what they read. Like the others in FuzzEntry, each returns the invariants an input broke.
extension FuzzEntry {
    /// ZipDirectory: the input as the tail of a file, cut at several places (and as the tail of a file of terabytes,
    /// and placed where its end would overflow), then the directory `locate` found parsed, and the input parsed as a
    /// directory itself.
    public static func zip(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let size = UInt64(bytes.count)
        var whole: ZipDirectory.Location?
        var lengths: Set<Int> = [bytes.count, bytes.count / 2, bytes.count - min(bytes.count, 1)]
        for length in [0, 1, 21, 22, 23, 42, 64, 98, 120, 1024] where length <= bytes.count { lengths.insert(length) }
        for length in lengths.sorted() {
            let start = bytes.count - length
            let tail = Array(bytes[start...])
            for base in [UInt64(0), 0x0000_0100_0000_0000] {
                let offset = base + UInt64(start)
                let location = ZipDirectory.locate(tail: tail, tailOffset: offset, fileSize: base + size)
                if base == 0 && length == bytes.count { whole = location }
                if ZipDirectory.locate(tail: tail, tailOffset: offset, fileSize: base + size + 1) != nil {
                    broken.append("a tail of \(length) that does not end the file was located")
                }
                guard let location else { continue }
                let (end, overflow) = location.offset.addingReportingOverflow(location.size)
                if overflow || end > base + size - 22 {
                    broken.append("a directory at \(location.offset) of \(location.size) does not end before the end record")
                }
                if location.entryCount.multipliedReportingOverflow(by: 46).partialValue > location.size
                    || location.entryCount > location.size {
                    broken.append("\(location.entryCount) entries cannot fit in \(location.size) bytes")
                }
            }
        }
        // The sums near UInt64.max must be checked, not trap.
        _ = ZipDirectory.locate(tail: bytes, tailOffset: UInt64.max - size, fileSize: .max)
        _ = ZipDirectory.locate(tail: bytes, tailOffset: .max, fileSize: .max)

        func check(_ location: ZipDirectory.Location, _ directory: [UInt8], _ what: String) {
            guard let parsed = ZipDirectory.parse(directory, location: location) else { return }
            if UInt64(parsed.entries.count) != location.entryCount {
                broken.append("\(what): \(parsed.entries.count) entries for an entry count of \(location.entryCount)")
            }
            var total: UInt64 = 0
            for entry in parsed.entries {
                let (header, overflow) = entry.localHeaderOffset.addingReportingOverflow(30)
                let (end, tooLarge) = header.addingReportingOverflow(entry.compressedSize)
                if overflow || tooLarge || end > location.offset {
                    broken.append("\(what): a member at \(entry.localHeaderOffset) of \(entry.compressedSize) bytes "
                                  + "runs into the directory at \(location.offset)")
                }
                if parsed.totalUncompressedSize < entry.uncompressedSize {
                    broken.append("\(what): total \(parsed.totalUncompressedSize) under a member's \(entry.uncompressedSize)")
                }
                let (sum, saturated) = total.addingReportingOverflow(entry.uncompressedSize)
                total = saturated ? .max : sum
                if let name = String(validating: entry.name, as: UTF8.self), parsed.entry(named: name)?.name != entry.name {
                    broken.append("\(what): the member named \(name) is not found by its name")
                }
            }
            if parsed.totalUncompressedSize != total {
                broken.append("\(what): total \(parsed.totalUncompressedSize), the members' sizes add up to \(total)")
            }
        }
        if let whole, let start = Int(exactly: whole.offset), start <= bytes.count {
            check(whole, Array(bytes[start...]), "the located directory")
        }
        // The input as a directory: every header must lie before offsets chosen from its own first bytes.
        let count = UInt64(ByteFields.uint16LE(bytes, at: 0) ?? 0)
        let before = UInt64(ByteFields.uint32LE(bytes, at: 2) ?? 0)
        for entries in [count, UInt64(bytes.count / 46), UInt64.max] {
            check(.init(offset: before, size: size, entryCount: entries), bytes, "the input as a directory")
            check(.init(offset: .max, size: size, entryCount: entries), bytes, "the input as a directory")
        }
        if ZipDirectory.parse(bytes, location: .init(offset: .max, size: size + 1, entryCount: 1)) != nil {
            broken.append("a directory longer than its bytes was parsed")
        }
        return broken
    }

    /// ImageHeader: sides of at least 1; the answer never depends on bytes after the header (the same header for the
    /// input with bytes appended) and a cut input gives the same header or none.
    public static func imageHeader(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let header = ImageHeader.read(bytes)
        if let header {
            if header.width < 1 || header.height < 1 { broken.append("a side under 1: \(header)") }
            let (product, overflow) = header.width.multipliedReportingOverflow(by: header.height)
            if header.pixels != (overflow ? .max : product) { broken.append("pixels \(header.pixels) for \(header)") }
            if header.format == .png, PNGFile.dimensions(bytes).map({ [$0.width, $0.height] }) != [header.width, header.height] {
                broken.append("a PNG header that PNGFile.dimensions does not read the same")
            }
            for appended: [UInt8] in [[0], [0xFF, 0xD9], [UInt8](repeating: 0, count: 64), [UInt8](repeating: 0xFF, count: 9), bytes]
            where ImageHeader.read(bytes + appended) != header {
                broken.append("\(appended.count) bytes appended changed \(header)")
            }
        }
        for length in Set([bytes.count - 1, bytes.count / 2, 32, 26, 24, 16]) where length >= 0 && length < bytes.count {
            if let cut = ImageHeader.read(Array(bytes.prefix(length))), cut != header {
                broken.append("the first \(length) bytes read as \(cut), the whole as \(String(describing: header))")
            }
        }
        // pixels saturates whatever the sides.
        let sides = [Int(ByteFields.uint64LE(bytes, at: 0).map { Int64(bitPattern: $0) } ?? 0), Int.max, Int.min, -1]
        for width in sides {
            for height in sides { _ = ImageHeader(format: .bmp, width: width, height: height).pixels }
        }
        return broken
    }

    /// PNGFile: tEXt chunks inserted read back in order before the file's own (those under the same keys dropped),
    /// every other chunk kept byte for byte, the size unchanged; inserting again changes nothing. An input without
    /// the PNG signature gets one and a valid IHDR put before it, so that it is read as the chunks after IHDR.
    public static func png(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let file = bytes.starts(with: PNGFile.signature) ? bytes : pngPrefix + bytes
        let key = String(decoding: bytes.lazy.filter { (0x21...0x7E).contains($0) }.prefix(20), as: UTF8.self)
        let value = String(decoding: bytes.prefix(48).filter { $0 != 0 }, as: UTF8.self)
        let pairs = [("Thumb::URI", "file:///tmp/a%20b.png"), ("Thumb::MTime", "1700000000"),
                     (key.isEmpty ? "Comment" : key, value), ("Software", "inboxd")]
        let keys = Set(pairs.map { Array($0.0.utf8) })
        let dimensions = PNGFile.dimensions(file).map { [$0.width, $0.height] }

        let unchanged = PNGFile.inserting(text: [], into: file)
        if let unchanged, unchanged != file { broken.append("inserting nothing changed the file") }
        for invalid in [[("two  spaces", "x")], [(" leading", "x")], [("", "x")], [(String(repeating: "k", count: 80), "x")],
                        [("Comment", "a\u{0}b")], [("tab\there", "x")], [("Ā", "x")]] {
            if PNGFile.inserting(text: pairs + invalid, into: file) != nil { broken.append("\(invalid) was inserted") }
        }
        guard let result = PNGFile.inserting(text: pairs, into: file) else {
            if unchanged != nil { broken.append("valid pairs refused where inserting nothing was not") }
            return broken
        }
        if dimensions == nil { broken.append("text inserted into a file without dimensions") }
        if PNGFile.dimensions(result).map({ [$0.width, $0.height] }) != dimensions {
            broken.append("the dimensions changed from \(String(describing: dimensions))")
        }
        func bytesOf(_ text: String) -> [UInt8] { text.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) } }
        let expected = pairs.map { (Array($0.0.utf8), $0.1) }
            + PNGFile.text(of: file).map { (bytesOf($0.key), $0.value) }.filter { !keys.contains($0.0) }
        let found = PNGFile.text(of: result).map { (bytesOf($0.key), $0.value) }
        if !found.elementsEqual(expected, by: { $0.0 == $1.0 && $0.1 == $1.1 }) {
            broken.append("the text read back is \(found.map { $0.1 }), not \(expected.map { $0.1 })")
        }
        // Byte for byte: the file up to IHDR's end, the new chunks, then the file's chunks but the replaced ones, and
        // whatever follows where the walk stopped.
        let chunks = pngChunks(file)
        let headerEnd = chunks.first?.upperBound ?? file.count
        var kept: [UInt8] = []
        for chunk in chunks.dropFirst() where !(Array(file[chunk.lowerBound + 4..<chunk.lowerBound + 8]) == Array("tEXt".utf8)
            && pngKey(file[chunk.lowerBound + 8..<chunk.upperBound - 4]).map(keys.contains) == true) {
            kept += file[chunk]
        }
        kept += file[(chunks.last?.upperBound ?? file.count)...]
        let inserted = pairs.reduce(0) { $0 + 12 + $1.0.utf8.count + 1 + $1.1.utf8.count }
        if !result.starts(with: file[..<headerEnd]) || !result.reversed().starts(with: kept.reversed())
            || result.count != headerEnd + inserted + kept.count {
            broken.append("the file's own chunks were not kept byte for byte")
        } else if !PNGFile.text(of: PNGFile.signature + result[headerEnd..<(headerEnd + inserted)])
            .elementsEqual(pairs, by: { $0.key == $1.0 && $0.value == $1.1 }) {
            broken.append("the inserted chunks are not the pairs")
        }
        if PNGFile.inserting(text: pairs, into: result) != result { broken.append("inserting again changed the file") }
        return broken
    }

    /// The signature and a valid IHDR (16 × 9, 8-bit RGBA) with its CRC.
    static let pngPrefix: [UInt8] = {
        let ihdr: [UInt8] = Array("IHDR".utf8) + [0, 0, 0, 16, 0, 0, 0, 9, 8, 6, 0, 0, 0]
        let crc = CRC32.checksum(ihdr)
        return PNGFile.signature + [0, 0, 0, 13] + ihdr + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc >> $0) }
    }()

    /// The whole chunks from IHDR on, as PNG lays them out, up to IEND (excluded) or the first that does not fit.
    static func pngChunks(_ file: [UInt8]) -> [Range<Int>] {
        var chunks: [Range<Int>] = []
        var offset = 8
        while let length = ByteFields.uint32BE(file, at: offset), length <= 0x7FFF_FFFF, file.count - offset >= 12,
              file.count - offset - 12 >= Int(length), !ByteFields.matches(file, at: offset + 4, Array("IEND".utf8)) {
            chunks.append(offset..<offset + 12 + Int(length))
            offset += 12 + Int(length)
        }
        return chunks
    }

    /// A tEXt chunk's key: the bytes before the first NUL, when there are 1...79 of them.
    static func pngKey(_ data: ArraySlice<UInt8>) -> [UInt8]? {
        guard let nul = data.firstIndex(of: 0), (1...79).contains(nul - data.startIndex) else { return nil }
        return Array(data[..<nul])
    }

    /// ThumbnailerEntry: an entry only with an Exec= that fills in the output file (not `%%o`, a literal `%o`), some
    /// MIME type and no error; diagnostics on the file's lines; `arguments` drops only words of unknown codes alone,
    /// and gives no empty word where the word was not empty (with the input's words too, whatever `parse` says).
    public static func thumbnailer(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let (entry, diagnostics) = ThumbnailerEntry.parse(bytes, path: "fuzz.thumbnailer")
        let lines = bytes.count { $0 == 0x0A } + 1
        for diagnostic in diagnostics where !(0...lines).contains(diagnostic.location.line) {
            broken.append("a diagnostic on line \(diagnostic.location.line) of \(lines): \(diagnostic.message)")
        }
        if let entry {
            if diagnostics.containsError { broken.append("an entry despite errors") }
            if entry.mimeTypes.isEmpty || entry.mimeTypes.contains(where: \.isEmpty) { broken.append("MIME types \(entry.mimeTypes)") }
            let arguments = entry.arguments(input: "/in", uri: "file:///in", output: "/OUT.png", size: 256)
            if !arguments.contains(where: { $0.contains("/OUT.png") }) {
                broken.append("an entry whose Exec= \(entry.exec) fills in no output file")
            }
        }
        let words = (entry?.exec ?? []) + String(decoding: bytes.prefix(1024), as: UTF8.self).split(separator: " ").map(String.init) + [""]
        for word in words {
            let alone = ThumbnailerEntry(path: "", tryExec: nil, exec: [word], mimeTypes: [])
            let known = thumbnailerCodes(word)
            for (input, output) in [("/in", "/OUT.png"), ("", "")] {
                let arguments = alone.arguments(input: input, uri: input.isEmpty ? "" : "file:///in", output: output, size: 128)
                if arguments.count > 1 { broken.append("\(word) became \(arguments.count) words") }
                if arguments.isEmpty && (known || !word.contains("%")) {
                    broken.append("\(word) was dropped though it holds a known code or none")
                }
                if arguments == [""] && !input.isEmpty && !word.isEmpty {
                    broken.append("\(word) became an empty word")
                }
                if !word.contains("%") && arguments != [word] { broken.append("\(word) was changed though it holds no code") }
            }
        }
        return broken
    }

    /// Whether `word` holds one of the codes `arguments` fills in (`%%` being a literal `%`, not a code).
    static func thumbnailerCodes(_ word: String) -> Bool {
        var characters = word.makeIterator()
        while let character = characters.next() {
            if character == "%", let code = characters.next(), "iuos".contains(code) { return true }
        }
        return false
    }

    /// TextDecoding and PreviewPages.text: decoded lines hold no control but tab (C0, DEL, C1, ESC) and no character
    /// that reorders text; pages of widths and heights from 1 to 300 have at most that many lines, none wider (a wide
    /// character alone on a line of one column excepted, with any characters of no width beside it) and no control or
    /// tab, and lose nothing of the text.
    public static func textPreview(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        var random = FuzzRandom(bytes)
        let raw = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var texts = [raw]
        for truncated in [false, true] {
            let decoded = TextDecoding.decode(bytes, truncated: truncated)
            for line in decoded.lines where line.unicodeScalars.contains(where: { hidden($0) && $0 != "\t" }) {
                broken.append("decoded (\(decoded.encoding.rawValue)) line \(line.debugDescription) has a control character")
            }
            texts.append(decoded.lines)
        }
        // The decoded lines, and the input's own lines as they are (paging makes them visible itself).
        for lines in texts {
            let sizes = [(1, 1), (random.next(in: 1...300), random.next(in: 1...300)), (random.next(in: 1...12), random.next(in: 1...4))]
            for (width, height) in sizes { broken += textPages(lines, width: width, height: height) }
        }
        return broken
    }

    private static func textPages(_ lines: [String], width: Int, height: Int) -> [String] {
        var broken: [String] = []
        let pages = PreviewPages.text(lines, width: width, height: height)
        if pages.isEmpty { broken.append("no page") }
        if pages.dropLast().contains(where: { $0.count != height }) || (pages.last?.count ?? 0) > height {
            broken.append("pages of \(pages.map(\.count)) lines for a height of \(height)")
        }
        for line in pages.joined() {
            if line.unicodeScalars.contains(where: hidden) { broken.append("paged line \(line.debugDescription) has a control character") }
            let lineWidth = PreviewPages.displayWidth(line)
            // A wide character alone on a line of one column overflows it, whatever takes no column beside it.
            let widths = line.map { PreviewPages.displayWidth($0) }
            if lineWidth > width, !(width == 1 && widths.filter({ $0 > 0 }) == [2]) {
                broken.append("a line \(lineWidth) columns wide for a width of \(width): \(line.debugDescription)")
            }
        }
        let shown = pages.joined().joined()
        let text = lines.map { PreviewPages.expandingTabs(VisibleText.visible($0)) }.joined()
        if !shown.unicodeScalars.elementsEqual(text.unicodeScalars) { broken.append("the pages are not the text: \(shown.debugDescription)") }
        return broken
    }

    /// What a preview never sends to a terminal: C0 controls, DEL, C1 controls, and the characters that reorder text.
    static func hidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// DelimitedTable and PreviewPages.table, on the text as the preview decodes it: bounded parsing gives the
    /// unbounded rows cut to the bounds, and says so exactly when it cut; every page starts with the header row and
    /// its rule; no line is wider than the width or holds a control character or a tab.
    public static func table(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        var random = FuzzRandom(bytes)
        let text = TextDecoding.decode(bytes, truncated: false).lines.joined(separator: "\n")
        for delimiter in [TableDelimiter.comma, .tab] {
            let all = DelimitedTable.parse(text, delimiter: delimiter, maximumRows: .max, maximumColumns: .max)
            if all.truncated { broken.append("an unbounded parse was truncated") }
            for (rows, columns) in [(random.next(in: 0...12), random.next(in: 0...12)), (1, 1), (0, 3)] {
                let table = DelimitedTable.parse(text, delimiter: delimiter, maximumRows: rows, maximumColumns: columns)
                let expected = all.rows.prefix(rows).map { Array($0.prefix(columns)) }
                let cut = all.rows.count > rows || all.rows.prefix(rows).contains { $0.count > columns }
                if table.rows != expected || table.truncated != cut {
                    broken.append("bounds \(rows) × \(columns) gave \(table.rows.count) rows (truncated: \(table.truncated)), "
                                  + "not \(expected.count) (truncated: \(cut))")
                }
                if DelimitedTable.parse(text, delimiter: delimiter, maximumRows: rows - 13, maximumColumns: columns - 13)
                    != DelimitedTable.parse(text, delimiter: delimiter, maximumRows: max(0, rows - 13), maximumColumns: max(0, columns - 13)) {
                    broken.append("a negative bound is not a bound of 0")
                }
            }
            let table = DelimitedTable.parse(text, delimiter: delimiter)
            for (width, height) in [(random.next(in: 1...300), random.next(in: 1...300)), (random.next(in: 1...30), random.next(in: 1...5)), (1, 1)] {
                broken += tablePages(table, width: width, height: height)
            }
        }
        return broken
    }

    private static func tablePages(_ table: DelimitedTable, width: Int, height: Int) -> [String] {
        var broken: [String] = []
        let pages = PreviewPages.table(table, width: width, height: height)
        guard table.rows.contains(where: { !$0.isEmpty }) else {
            return pages == [[]] ? [] : ["a table without cells gave pages \(pages)"]
        }
        let rows = table.rows.count
        guard let first = pages.first, first.count >= 2 else { return ["no header and rule: \(pages)"] }
        let rule = first[1]
        let note = rule.drop { $0 == "─" || $0 == " " }
        let counted = note.dropFirst(2).prefix { $0.isASCII && $0.isNumber }
        let named = note.isEmpty || note == "(+1 column)"
            || (note.hasPrefix("(+") && !counted.hasPrefix("0") && note.dropFirst(2 + counted.count) == " columns)")
        if rule.first != "─" || !named {
            broken.append("the rule is \(rule.debugDescription)")
        }
        for page in pages {
            if page.count < 2 || page[0] != first[0] || page[1] != rule { broken.append("a page starts \(page.prefix(2))") }
            if page.count > max(3, height) || (rows > 1 && page.count < 3) {
                broken.append("a page of \(page.count) lines for a height of \(height)")
            }
            for line in page {
                if line.unicodeScalars.contains(where: { hidden($0) || $0 == "\t" }) {
                    broken.append("a table line \(line.debugDescription) has a control character")
                }
                if PreviewPages.displayWidth(line) > width {
                    broken.append("a table line \(PreviewPages.displayWidth(line)) columns wide for a width of \(width): "
                                  + line.debugDescription)
                }
            }
        }
        if pages.reduce(0, { $0 + $1.count - 2 }) != rows - 1 { broken.append("\(rows - 1) rows in pages \(pages.map(\.count))") }
        return broken
    }

    /// TerminalKey and PreviewPager: the input's first byte chooses how many items and when they shrink, the next
    /// bytes their page counts (0 and -1 among them), the rest is what the terminal sent. After every key the pager
    /// stands on a page that exists; paging moves one page through all items' pages in order, as a flat book would.
    public static func pager(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        guard let control = bytes.first else { return [] }
        let items = Int(control & 7)
        let shrinkAt = Int(control >> 3)
        let counts = bytes.dropFirst().prefix(items).map { Int($0 % 12) - 1 }
        let input = Array(bytes.dropFirst(1 + counts.count))
        let keys = TerminalKey.parse(input)
        if keys.count > input.count { broken.append("\(keys.count) keys from \(input.count) bytes") }
        var pager = PreviewPager(pageCounts: counts)
        for (index, key) in keys.enumerated() {
            if index == shrinkAt {
                pager.pageCounts = pager.pageCounts.prefix((pager.pageCounts.count + 1) / 2).map { $0 / 2 }
            }
            let pages = pager.pageCounts.map { max(1, $0) }
            // Where the pager stands once it has kept inside pageCounts, as a page of all items' pages laid end to end.
            let item = pages.isEmpty ? 0 : min(pager.item, pages.count - 1)
            let page = pages.isEmpty ? 0 : min(pager.page, pages[item] - 1)
            let flat = pages.prefix(item).reduce(0, +) + page
            let action = pager.handle(key)
            if pages.isEmpty {
                if pager.item != 0 || pager.page != 0 || !(action == .none || action == .dismiss) {
                    broken.append("\(key) on no items gave \(action) at \(pager.item), \(pager.page)")
                }
                continue
            }
            guard pages.indices.contains(pager.item), (0..<pages[pager.item]).contains(pager.page) else {
                broken.append("\(key) left the pager at item \(pager.item), page \(pager.page) of \(pager.pageCounts)")
                continue
            }
            if case .show(let shownItem, let shownPage) = action, (shownItem, shownPage) != (pager.item, pager.page) {
                broken.append("\(key) showed \(shownItem), \(shownPage) but stands at \(pager.item), \(pager.page)")
            }
            let now = pages.prefix(pager.item).reduce(0, +) + pager.page
            let total = pages.reduce(0, +)
            let expected: Int? = switch key {
            case .character(" "), .character("n"), .right, .down, .pageDown: min(flat + 1, total - 1)
            case .character("p"), .character("b"), .left, .up, .pageUp: max(flat - 1, 0)
            case .character("g"), .home: flat - page
            case .character("G"), .end: flat - page + pages[item] - 1
            case .character("q"), .character("Q"), .character("\u{03}"), .escape, .unknown: flat
            default: nil
            }
            if let expected, now != expected { broken.append("\(key) went to page \(now) of \(total), not \(expected)") }
            if (action == .none || action == .dismiss) != (now == flat && pager.item == item) {
                broken.append("\(key) gave \(action) moving from \(flat) to \(now)")
            }
        }
        return broken
    }
}

/// Choices made from an input's bytes (SplitMix64 seeded by their FNV-1a hash): the same input, the same choices.
struct FuzzRandom {
    private var state: UInt64

    init(_ bytes: [UInt8]) {
        state = bytes.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }

    mutating func next(in range: ClosedRange<Int>) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        return range.lowerBound + Int(value % UInt64(range.count))
    }
}
