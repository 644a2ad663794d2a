/// The encoding a text preview was decoded from.
public enum TextEncoding: String, Sendable, Hashable {
    case utf8 = "UTF-8"
    case utf16LE = "UTF-16LE"
    case utf16BE = "UTF-16BE"
    case latin1 = "ISO-8859-1"
    case windows1252 = "windows-1252"
}

/// A text document decoded for showing: its lines, with every control character but tab made visible (a text file
/// must never drive the terminal it is shown on).
public struct DecodedText: Sendable, Hashable {
    public var lines: [String]
    public var encoding: TextEncoding
    /// Only the first bytes of the file were given (`decode(_:truncated:)`).
    public var truncated: Bool

    public init(lines: [String], encoding: TextEncoding, truncated: Bool) {
        self.lines = lines
        self.encoding = encoding
        self.truncated = truncated
    }
}

/// Text previews: encoding detection and decoding.
///
/// Lines end at LF, CRLF or CR; a line break at the very end makes no empty last line. What remains visible: C0
/// controls and DEL in caret notation (`^[` for ESC, `^?` for DEL), C1 controls and the invisible characters that
/// reorder text (bidirectional overrides and isolates, Trojan Source) as `<U+XXXX>`; tab stays for the layout to expand.
public enum TextDecoding {
    /// Decodes `bytes` (the file's first bytes; `truncated` when there are more): a byte order mark decides, else
    /// valid UTF-8 is UTF-8, else UTF-16 without a mark where its zero bytes say so, else windows-1252 where it uses
    /// 0x80...0x9F as that encoding's characters, else ISO-8859-1.
    ///
    /// The zero bytes are looked at before UTF-8 is tried: ASCII in UTF-16 is valid UTF-8 full of NULs.
    public static func decode(_ bytes: [UInt8], truncated: Bool) -> DecodedText {
        let (encoding, start) = detect(bytes, truncated: truncated)
        var lines = LineCollector()
        let body = bytes[start...]
        switch encoding {
        case .utf8:
            var content = body
            if truncated { content = content.dropLast(incompleteUTF8Tail(content)) }
            for scalar in String(decoding: content, as: UTF8.self).unicodeScalars { lines.add(scalar) }
        case .utf16LE, .utf16BE:
            decodeUTF16(body, bigEndian: encoding == .utf16BE, truncated: truncated, into: &lines)
        case .latin1:
            for byte in body { lines.add(Unicode.Scalar(byte)) }
        case .windows1252:
            for byte in body { lines.add(windows1252(byte)) }
        }
        return DecodedText(lines: lines.finish(), encoding: encoding, truncated: truncated)
    }

    /// The encoding and where the text starts (after a byte order mark).
    static func detect(_ bytes: [UInt8], truncated: Bool) -> (TextEncoding, Int) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8, 3) }
        if bytes.starts(with: [0xFF, 0xFE]) { return (.utf16LE, 2) }
        if bytes.starts(with: [0xFE, 0xFF]) { return (.utf16BE, 2) }
        if let utf16 = utf16ByZeros(bytes) { return (utf16, 0) }
        let checked = truncated ? bytes.dropLast(incompleteUTF8Tail(bytes[...])) : bytes[...]
        if String(validating: checked, as: UTF8.self) != nil { return (.utf8, 0) }
        if bytes.contains(where: { windows1252Defined($0) }) { return (.windows1252, 0) }
        return (.latin1, 0)
    }

    /// UTF-16 without a mark: mostly-ASCII text has a zero in (nearly) every high byte, which falls on the odd
    /// offsets in little-endian and the even ones in big-endian; the other half then has (nearly) none.
    private static func utf16ByZeros(_ bytes: [UInt8]) -> TextEncoding? {
        let pairs = bytes.count / 2
        guard pairs > 0 else { return nil }
        var evenZeros = 0
        var oddZeros = 0
        for index in 0..<(pairs * 2) where bytes[index] == 0 {
            if index % 2 == 0 { evenZeros += 1 } else { oddZeros += 1 }
        }
        if oddZeros * 2 >= pairs && evenZeros * 8 <= oddZeros { return .utf16LE }
        if evenZeros * 2 >= pairs && oddZeros * 8 <= evenZeros { return .utf16BE }
        return nil
    }

    /// How many bytes at the end start a UTF-8 sequence that the buffer cut short (0 when the end is whole).
    static func incompleteUTF8Tail(_ bytes: ArraySlice<UInt8>) -> Int {
        var continuations = 0
        var index = bytes.endIndex
        while index > bytes.startIndex && continuations < 4 {
            index -= 1
            let byte = bytes[index]
            if byte & 0xC0 == 0x80 {
                continuations += 1
                continue
            }
            let length = byte >= 0xF0 && byte <= 0xF4 ? 4 : byte >= 0xE0 && byte <= 0xEF ? 3
                : byte >= 0xC2 && byte <= 0xDF ? 2 : 0
            return length > continuations + 1 ? continuations + 1 : 0
        }
        return 0
    }

    private static func decodeUTF16(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, truncated: Bool,
                                    into lines: inout LineCollector) {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let first = UInt16(bytes[index])
            let second = UInt16(bytes[index + 1])
            units.append(bigEndian ? first << 8 | second : second << 8 | first)
            index += 2
        }
        // A buffer cut in the middle of a surrogate pair loses the pair's first half rather than showing a U+FFFD.
        if truncated, let last = units.last, last >= 0xD800 && last <= 0xDBFF { units.removeLast() }
        for scalar in String(decoding: units, as: UTF16.self).unicodeScalars { lines.add(scalar) }
        // A lone last byte is half a code unit: gone when the file goes on, a wrong byte when it does not.
        if index < bytes.endIndex && !truncated { lines.add("\u{FFFD}") }
    }

    /// windows-1252's characters at 0x80...0x9F; 0 where it defines none (0x81, 0x8D, 0x8F, 0x90, 0x9D).
    private static let windows1252High: [UInt32] = [
        0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
        0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
    ]

    private static func windows1252Defined(_ byte: UInt8) -> Bool {
        byte >= 0x80 && byte <= 0x9F && windows1252High[Int(byte - 0x80)] != 0
    }

    private static func windows1252(_ byte: UInt8) -> Unicode.Scalar {
        guard byte >= 0x80 && byte <= 0x9F else { return Unicode.Scalar(byte) }
        // The five undefined bytes decode to the C1 control of the same value, as WHATWG's decoder has it (and are
        // then made visible like any C1 control).
        let value = windows1252High[Int(byte - 0x80)]
        return value == 0 ? Unicode.Scalar(byte) : Unicode.Scalar(value) ?? Unicode.Scalar(byte)
    }
}

/// Splits a stream of scalars into lines and makes what could drive a terminal visible.
private struct LineCollector {
    private var lines: [String] = []
    private var current = String.UnicodeScalarView()
    /// The last scalar was a CR: a following LF belongs to it.
    private var afterCR = false
    /// A line is open (something followed the last break).
    private var open = false

    mutating func add(_ scalar: Unicode.Scalar) {
        defer { afterCR = scalar == "\r" }
        switch scalar {
        case "\n" where afterCR:
            return
        case "\n", "\r":
            lines.append(String(current))
            current = String.UnicodeScalarView()
            open = false
        default:
            VisibleText.append(scalar, to: &current)
            open = true
        }
    }

    mutating func finish() -> [String] {
        if open { lines.append(String(current)) }
        return lines
    }
}

/// The one rule for what a preview may send to a terminal: shared by text and table previews.
enum VisibleText {
    /// Appends `scalar`, or its visible stand-in when it is a control character (tab excepted) or reorders text.
    static func append(_ scalar: Unicode.Scalar, to text: inout String.UnicodeScalarView) {
        let value = scalar.value
        switch value {
        case 0x09:
            text.append(scalar)
        case 0x00...0x1F:
            text.append("^")
            text.append(Unicode.Scalar(UInt8(value + 0x40)))
        case 0x7F:
            text.append(contentsOf: "^?".unicodeScalars)
        case 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
            text.append(contentsOf: codePoint(value).unicodeScalars)
        default:
            text.append(scalar)
        }
    }

    /// `text` with every scalar passed through `append`.
    static func visible(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { append(scalar, to: &result) }
        return String(result)
    }

    /// `<U+009B>`: Unicode's own way of naming a code point.
    private static func codePoint(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "<U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + ">"
    }
}
