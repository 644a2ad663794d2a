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
public enum TextDecoding {
    /// Decodes `bytes` (the file's first bytes; `truncated` when there are more): a byte order mark decides, else
    /// valid UTF-8 is UTF-8, else UTF-16 without a mark where its zero bytes say so, else windows-1252 where it uses
    /// 0x80...0x9F as that encoding's characters, else ISO-8859-1.
    public static func decode(_ bytes: [UInt8], truncated: Bool) -> DecodedText {
        fatalError("TextDecoding.decode: to be written")
    }
}
