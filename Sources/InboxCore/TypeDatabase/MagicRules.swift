/// shared-mime-info's content rules: the compiled `magic` file of each MIME directory (the format GLib's xdgmime
/// reads), parsed forgivingly and matched by priority over a file's first bytes.
///
/// The file is `MIME-Magic\0\n`, then sections `[priority:mime-type]\n`, each followed by matchlet lines
/// `[indent]>start-offset=value[&mask][~word-size][+range-length]\n`: `value` is a two-byte big-endian length and
/// that many bytes, `mask` as many bytes again. A matchlet matches when `value` (masked) occurs at some offset in
/// `start-offset ..< start-offset + range-length`; a matchlet with deeper-indented children matches only if one of
/// them does too (GLib's `_xdg_mime_magic_matchlet_compare_level`). A section whose lines do not parse, whose
/// numbers are out of bounds or whose indents skip a level is dropped and counted; the rest stand.
///
/// Every bound is here so that a hostile or broken file cannot make matching unbounded: offsets and ranges at most
/// `maximumOffset`, values at most `maximumValueLength` bytes, and no rule ever reads past `maximumExtent`.
public struct MagicRules: Sendable {
    /// One line of a section.
    public struct Matchlet: Sendable, Hashable {
        public let indent: Int
        public let offset: Int
        public let rangeLength: Int
        public let value: [UInt8]
        /// Same length as `value`; nil: every bit counts.
        public let mask: [UInt8]?

        /// One past the last byte this line can read.
        public var extent: Int { offset + rangeLength - 1 + value.count }
    }

    /// One `[priority:mime-type]` section.
    public struct Section: Sendable, Hashable {
        public let priority: Int
        public let mimeType: String
        public let matchlets: [Matchlet]
    }

    /// A section that matched.
    public struct Match: Sendable, Hashable {
        public let mimeType: String
        public let priority: Int

        public init(mimeType: String, priority: Int) {
            self.mimeType = mimeType
            self.priority = priority
        }
    }

    public static let header: [UInt8] = Array("MIME-Magic\0\n".utf8)
    /// The largest start offset or range a line may give.
    public static let maximumOffset = 1 << 16
    /// The longest value a line may give.
    public static let maximumValueLength = 1024
    /// The deepest indent a line may give.
    public static let maximumIndent = 64
    /// No rule reads past this many bytes of a file: a line that would is kept, reading only what is there.
    public static let maximumExtent = 64 * 1024

    /// Every section, highest priority first (file order within a priority).
    public let sections: [Section]
    /// Sections dropped because they did not parse or broke a bound.
    public let skippedSections: Int
    /// Files that were not magic files at all (no header).
    public let rejectedFiles: Int
    /// How many bytes of a file the rules can look at (at most `maximumExtent`).
    public let extent: Int
    /// The sections compiled for matching: every line in one array, every value and mask in one pool.
    private let compiled: Compiled

    /// No rules: nothing matches, nothing is read.
    public static let empty = MagicRules(sources: [])

    /// The rules of several `magic` files, most important directory first: a MIME type that a more important file
    /// has a section for (or a `__NOMAGIC__` line) loses the sections of the less important ones.
    public init(sources: [[UInt8]]) {
        var all: [Section] = []
        var skipped = 0
        var rejected = 0
        var claimed: Set<String> = []
        for bytes in sources {
            guard let parsed = Self.parse(bytes) else {
                if !bytes.isEmpty { rejected += 1 }
                continue
            }
            skipped += parsed.skipped
            let fresh = parsed.sections.filter { !claimed.contains($0.mimeType) }
            claimed.formUnion(parsed.sections.map(\.mimeType))
            claimed.formUnion(parsed.overridden)
            all += fresh.filter { !$0.matchlets.isEmpty }
        }
        // Stable: file order within a priority.
        sections = all.enumerated().sorted { a, b in
            a.element.priority != b.element.priority ? a.element.priority > b.element.priority : a.offset < b.offset
        }.map(\.element)
        skippedSections = skipped
        rejectedFiles = rejected
        extent = min(Self.maximumExtent, sections.lazy.flatMap(\.matchlets).map(\.extent).max() ?? 0)
        compiled = Compiled(sections)
    }

    /// The highest-priority section that matches `bytes` (only the first `extent` are looked at).
    public func match(_ bytes: UnsafeRawBufferPointer) -> Match? {
        let data = UnsafeRawBufferPointer(rebasing: bytes.prefix(extent))
        return compiled.lines.withUnsafeBufferPointer { lines in
            compiled.pool.withUnsafeBufferPointer { pool in
                for (index, section) in compiled.ranges.enumerated()
                where Self.matches(lines, section.lowerBound, section.upperBound, level: 0, pool, data).matched {
                    return Match(mimeType: sections[index].mimeType, priority: sections[index].priority)
                }
                return nil
            }
        }
    }

    /// The highest-priority section that matches `bytes`.
    public func match(_ bytes: some Collection<UInt8>) -> Match? {
        let copy = Array(bytes.prefix(extent))
        return copy.withUnsafeBytes { match($0) }
    }

    // MARK: Matching

    /// One matchlet as plain numbers; its value (then its mask) lie in the pool from `value`.
    private struct Line {
        let indent: Int
        let offset: Int
        let range: Int
        let value: Int
        let length: Int
        let masked: Bool
    }

    private struct Compiled {
        var lines: [Line] = []
        var pool: [UInt8] = []
        var ranges: [Range<Int>] = []

        init(_ sections: [Section]) {
            for section in sections {
                let start = lines.count
                for line in section.matchlets {
                    lines.append(Line(indent: line.indent, offset: line.offset, range: line.rangeLength, value: pool.count,
                                      length: line.value.count, masked: line.mask != nil))
                    pool += line.value
                    if let mask = line.mask { pool += mask }
                }
                ranges.append(start..<lines.count)
            }
        }
    }

    /// Evaluates the lines at `level` from `index` (GLib's compare_level): true when one of them matches and, if it
    /// has children, one of its children's chains does. `next` is the index after this level's run.
    private static func matches(_ lines: UnsafeBufferPointer<Line>, _ start: Int, _ end: Int, level: Int,
                                _ pool: UnsafeBufferPointer<UInt8>,
                                _ data: UnsafeRawBufferPointer) -> (matched: Bool, next: Int) {
        var index = start
        while index < end && lines[index].indent >= level {
            guard lines[index].indent == level else {
                index += 1
                continue
            }
            let hit = compare(lines[index], pool, data)
            index += 1
            let hasChildren = index < end && lines[index].indent > level
            if hit {
                if !hasChildren { return (true, index) }
                let deeper = matches(lines, index, end, level: level + 1, pool, data)
                if deeper.matched { return (true, deeper.next) }
                index = deeper.next
            } else {
                while index < end && lines[index].indent > level { index += 1 }
            }
        }
        return (false, index)
    }

    private static func compare(_ line: Line, _ pool: UnsafeBufferPointer<UInt8>, _ data: UnsafeRawBufferPointer) -> Bool {
        let length = line.length
        guard length > 0 else { return true }
        let last = min(line.offset + line.range - 1, data.count - length)
        guard line.offset <= last else { return false }
        let value = line.value, mask = line.value + length
        let first = pool[value]
        for start in line.offset...last {
            if line.masked {
                var equal = true
                for j in 0..<length where pool[value + j] & pool[mask + j] != data[start + j] & pool[mask + j] {
                    equal = false
                    break
                }
                if equal { return true }
            } else {
                guard data[start] == first else { continue }
                var j = 1
                while j < length && pool[value + j] == data[start + j] { j += 1 }
                if j == length { return true }
            }
        }
        return false
    }

    // MARK: Parsing

    private struct Parsed {
        var sections: [Section] = []
        var overridden: [String] = []
        var skipped = 0
    }

    /// nil when the bytes are not a magic file.
    private static func parse(_ bytes: [UInt8]) -> Parsed? {
        guard bytes.starts(with: header) else { return nil }
        var parsed = Parsed()
        var cursor = header.count
        while cursor < bytes.count {
            guard bytes[cursor] == UInt8(ascii: "[") else {
                // Lines outside a section (after a broken one): skip to the next section.
                cursor = nextSection(bytes, after: cursor)
                continue
            }
            switch section(bytes, at: &cursor) {
            case .section(let made): parsed.sections.append(made)
            case .noMagic(let type): parsed.overridden.append(type)
            case .broken:
                parsed.skipped += 1
                cursor = nextSection(bytes, after: cursor)
            }
        }
        return parsed
    }

    private enum SectionResult {
        case section(Section)
        case noMagic(String)
        case broken
    }

    /// One section from its `[` to the start of the next; on `.broken`, `cursor` is somewhere inside it.
    private static func section(_ bytes: [UInt8], at cursor: inout Int) -> SectionResult {
        cursor += 1
        guard let close = bytes[cursor...].firstIndex(of: UInt8(ascii: "]")), close - cursor <= 512,
              close + 1 < bytes.count || close + 1 == bytes.count,
              let colon = bytes[cursor..<close].firstIndex(of: UInt8(ascii: ":")),
              let priority = decimal(bytes[cursor..<colon]), priority <= 100 else { return .broken }
        // A third field ([50:type:flags]) is allowed and ignored.
        let rest = bytes[(colon + 1)..<close]
        let typeBytes = rest.firstIndex(of: UInt8(ascii: ":")).map { rest[..<$0] } ?? rest
        guard let mimeType = String(validating: typeBytes, as: UTF8.self), MIMEDatabase.isMIMEType(mimeType) else {
            return .broken
        }
        cursor = close + 1
        guard cursor < bytes.count, bytes[cursor] == 0x0A else { return .broken }
        cursor += 1
        var lines: [Matchlet] = []
        var previousIndent = -1
        while cursor < bytes.count && bytes[cursor] != UInt8(ascii: "[") {
            if bytes[cursor...].starts(with: "__NOMAGIC__\n".utf8) {
                cursor += 12
                return .noMagic(mimeType)
            }
            let start = cursor
            guard let line = matchlet(bytes, at: &cursor), line.indent <= previousIndent + 1 else {
                // Resynchronise from this line's start: the next section may begin on the line after it.
                cursor = start
                return .broken
            }
            previousIndent = line.indent
            lines.append(line)
        }
        return .section(Section(priority: priority, mimeType: mimeType, matchlets: lines))
    }

    /// `[indent]>offset=value[&mask][~word-size][+range-length]\n`, or nil.
    private static func matchlet(_ bytes: [UInt8], at cursor: inout Int) -> Matchlet? {
        let indent = number(bytes, &cursor, upTo: UInt8(ascii: ">"), optional: true) ?? -1
        guard indent >= 0, indent <= maximumIndent, take(bytes, &cursor, ">"),
              let offset = number(bytes, &cursor, upTo: UInt8(ascii: "="), optional: false), offset <= maximumOffset,
              take(bytes, &cursor, "="), cursor + 2 <= bytes.count else { return nil }
        let length = Int(bytes[cursor]) << 8 | Int(bytes[cursor + 1])
        cursor += 2
        guard length <= maximumValueLength, cursor + length <= bytes.count else { return nil }
        var value = Array(bytes[cursor..<(cursor + length)])
        cursor += length
        var mask: [UInt8]?
        if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "&") {
            cursor += 1
            guard cursor + length <= bytes.count else { return nil }
            mask = Array(bytes[cursor..<(cursor + length)])
            cursor += length
        }
        var wordSize = 1
        if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "~") {
            cursor += 1
            guard let size = digits(bytes, &cursor), [0, 1, 2, 4].contains(size) else { return nil }
            wordSize = max(size, 1)
        }
        var range = 1
        if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "+") {
            cursor += 1
            guard let given = digits(bytes, &cursor), given >= 1, given <= maximumOffset else { return nil }
            range = given
        }
        guard take(bytes, &cursor, "\n"), length % wordSize == 0 else { return nil }
        // Words are stored big-endian; they are compared in the host's order (as GLib does).
        if wordSize > 1 && UInt16(1).littleEndian == 1 {
            value = swapped(value, wordSize)
            mask = mask.map { swapped($0, wordSize) }
        }
        return Matchlet(indent: indent, offset: offset, rangeLength: range, value: value, mask: mask)
    }

    private static func swapped(_ bytes: [UInt8], _ size: Int) -> [UInt8] {
        stride(from: 0, to: bytes.count, by: size).flatMap { bytes[$0..<($0 + size)].reversed() }
    }

    private static func take(_ bytes: [UInt8], _ cursor: inout Int, _ character: Unicode.Scalar) -> Bool {
        guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: character) else { return false }
        cursor += 1
        return true
    }

    /// Decimal digits up to `end`; nil when there are none and they are not optional (then 0 when optional: the
    /// indent's default), or when there are more than seven.
    private static func number(_ bytes: [UInt8], _ cursor: inout Int, upTo end: UInt8, optional: Bool) -> Int? {
        let start = cursor
        guard let value = digits(bytes, &cursor) else {
            return optional && cursor < bytes.count && bytes[cursor] == end && cursor == start ? 0 : nil
        }
        return value
    }

    /// One to seven decimal digits at the cursor.
    private static func digits(_ bytes: [UInt8], _ cursor: inout Int) -> Int? {
        var value = 0
        var count = 0
        while cursor < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[cursor]) {
            guard count < 7 else { return nil }
            value = value * 10 + Int(bytes[cursor] - UInt8(ascii: "0"))
            count += 1
            cursor += 1
        }
        return count == 0 ? nil : value
    }

    private static func decimal(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 7, bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// The start of the next line that begins a section after `cursor`, or the end.
    private static func nextSection(_ bytes: [UInt8], after cursor: Int) -> Int {
        var index = cursor
        if index < bytes.count && bytes[index] == UInt8(ascii: "[") && index > 0 && bytes[index - 1] == 0x0A {
            return index
        }
        while index < bytes.count {
            guard let newline = bytes[index...].firstIndex(of: 0x0A) else { return bytes.count }
            index = newline + 1
            if index < bytes.count && bytes[index] == UInt8(ascii: "[") { return index }
        }
        return bytes.count
    }
}

/// Which check answered a file's content: shared-mime-info's rules alone, libmagic alone (the rules said nothing),
/// both (the rules said only a generic container that libmagic refines), libmagic's built-in checks without its
/// database (`quick`: tar, JSON, CSV, an OLE2 kind, or binary content nothing names), or neither (`text`: plain
/// UTF-8 text whose kind the decision does not need; `empty`: an empty file).
public enum SniffPath: String, Sendable, Hashable, CaseIterable {
    case rules, libmagic, both, quick, text, empty
}

extension MagicRules {
    /// Answers of the rules that libmagic can refine and the decision can need refined: a ZIP or OLE2 container
    /// (libmagic reads the members and the directory: a `.docx` name on an OpenDocument file, an Excel file without
    /// a name), and plain text.
    public static let refinedByLibmagic: Set<String> = ["application/zip", "application/x-ole-storage", "text/plain"]

    /// True when the rules' answer is not the last word: they said nothing, or only a generic container.
    public static func needsLibmagic(_ match: Match?) -> Bool {
        match.map { refinedByLibmagic.contains($0.mimeType) } ?? true
    }

    /// True when libmagic's whole database must be searched after its built-in checks (`quick`: their answer,
    /// MAGIC_NO_CHECK_SOFT). Not when those checks named the content (tar, JSON, CSV, an OLE2 kind: libmagic
    /// searches its database only after them and stops at the first that answers, so it would say the same). For
    /// text, yes (the database names scripts and source languages), and for a container the rules named, whose
    /// kinds it tells apart. For binary that neither they nor the rules name, only when `namingBinary`: when the
    /// decision has no claim that would stand against "some data" (TypeResolver.Claim.needsBinaryNamed). For text,
    /// only when `classifyingText` (ContentNeeds.Text.all: some registration claims a kind of text).
    public static func needsSoftMagic(rules match: Match?, quick: String, namingBinary: Bool,
                                      classifyingText: Bool = true) -> Bool {
        switch quick.split(separator: ";").first.map({ String($0).trimmingINIWhitespace().lowercased() }) ?? "" {
        case "text/plain": classifyingText
        case "application/octet-stream": match != nil || namingBinary
        default: false
        }
    }

    /// The content's MIME type from the rules' answer (nil: none) and libmagic's: libmagic's unless it says nothing
    /// (a ZIP header alone is `application/octet-stream` to libmagic, `application/zip` to the rules).
    public static func combine(rules: Match?, libmagic: String) -> (mimeType: String, path: SniffPath) {
        guard let rules else { return (libmagic, .libmagic) }
        let plain = libmagic.split(separator: ";").first.map { String($0).trimmingINIWhitespace().lowercased() } ?? ""
        if TypeResolver.uninformativeMIMETypes.contains(plain) { return (rules.mimeType, .both) }
        return (libmagic, .both)
    }
}
