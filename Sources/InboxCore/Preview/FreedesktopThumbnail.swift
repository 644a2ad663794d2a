/// The freedesktop Thumbnail Managing Standard's naming and metadata: `$XDG_CACHE_HOME/thumbnails/<size>/<md5 of the
/// URI>.png`, a PNG carrying `Thumb::URI` and `Thumb::MTime` (and `Thumb::Size`, `Thumb::Mime`) as tEXt chunks.
public enum FreedesktopThumbnail {
    public enum Size: String, Sendable, Hashable, CaseIterable {
        case normal
        case large
        case xLarge = "x-large"
        case xxLarge = "xx-large"

        /// The longest side in pixels: 128, 256, 512, 1024.
        public var pixels: Int {
            switch self {
            case .normal: 128
            case .large: 256
            case .xLarge: 512
            case .xxLarge: 1024
            }
        }

        /// The directory under `thumbnails/`.
        public var directory: String { rawValue }
    }

    /// The thumbnail's file name for a file's URI: the MD5 of the URI as 32 lowercase hex digits, `.png`.
    public static func fileName(forURI uri: String) -> String {
        MD5.hex(Array(uri.utf8)) + ".png"
    }

    /// `png` with the standard's keys inserted as tEXt chunks right after IHDR; nil when `png` is not a PNG.
    public static func annotate(_ png: [UInt8], uri: String, modified: Int64, size: Int64?,
                                mimeType: String?) -> [UInt8]? {
        var text: [(String, String)] = [("Thumb::URI", uri), ("Thumb::MTime", String(modified))]
        if let size { text.append(("Thumb::Size", String(size))) }
        if let mimeType { text.append(("Thumb::Mime", mimeType)) }
        text.append(("Software", "inboxd"))
        return PNGFile.inserting(text: text, into: png)
    }
}

/// PNG files: the size in the header, tEXt chunks.
public enum PNGFile {
    /// Width and height from IHDR; nil when `bytes` is not a PNG.
    public static func dimensions(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        fatalError("PNGFile.dimensions: to be written")
    }

    /// `png` with one tEXt chunk per pair (Latin-1 keys of 1...79 bytes; the value as UTF-8 bytes) after IHDR, each
    /// with its CRC; nil when `png` is not a PNG or a key is not valid.
    public static func inserting(text: [(String, String)], into png: [UInt8]) -> [UInt8]? {
        fatalError("PNGFile.inserting: to be written")
    }

    /// The tEXt chunks of `png`, in order.
    public static func text(of png: [UInt8]) -> [(key: String, value: String)] {
        fatalError("PNGFile.text: to be written")
    }
}

/// CRC-32 (ISO-HDLC, as PNG and ZIP use it).
public enum CRC32 {
    public static func checksum(_ bytes: some Sequence<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        fatalError("CRC32.checksum: to be written")
    }
}

/// MD5 (RFC 1321), for thumbnail names only: the standard names them so; it protects nothing.
public enum MD5 {
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        fatalError("MD5.digest: to be written")
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        digest(bytes).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
