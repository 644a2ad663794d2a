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

/// PNG files: the size in the header, tEXt chunks (PNG specification, 5.3 and 11.3.4.3).
public enum PNGFile {
    /// The eight bytes every PNG starts with.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Width and height from IHDR; nil when `bytes` is not a PNG.
    public static func dimensions(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard ByteFields.matches(bytes, at: 0, signature),
              let header = chunk(in: bytes, at: signature.count), header.type == ihdr, header.length == 13,
              let width = ByteFields.uint32BE(bytes, at: header.dataStart),
              let height = ByteFields.uint32BE(bytes, at: header.dataStart + 4),
              (1...maximumLength).contains(width), (1...maximumLength).contains(height)
        else { return nil }
        return (Int(width), Int(height))
    }

    /// `png` with one tEXt chunk per pair (Latin-1 keys of 1...79 bytes; the value as UTF-8 bytes) after IHDR, each
    /// with its CRC; nil when `png` is not a PNG, a key is not valid or a value holds a NUL.
    ///
    /// A tEXt chunk already in `png` under one of the keys is dropped (gdk-pixbuf-thumbnailer writes its own
    /// Thumb::URI and Thumb::MTime), so a reader finds one value per key; every other chunk is kept byte for byte.
    public static func inserting(text: [(String, String)], into png: [UInt8]) -> [UInt8]? {
        guard dimensions(png) != nil, let header = chunk(in: png, at: signature.count), header.end <= png.count
        else { return nil }
        var inserted: [UInt8] = []
        var keys: Set<[UInt8]> = []
        for (key, value) in text {
            guard let keyBytes = keyword(key) else { return nil }
            let valueBytes = Array(value.utf8)
            guard !valueBytes.contains(0) else { return nil }
            let data = keyBytes + [0] + valueBytes
            guard let length = UInt32(exactly: data.count), length <= maximumLength else { return nil }
            inserted += bigEndian(length)
            let typeAndData = textType + data
            inserted += typeAndData
            inserted += bigEndian(CRC32.checksum(typeAndData))
            keys.insert(keyBytes)
        }
        var result = Array(png[..<header.end]) + inserted
        var offset = header.end
        // Walk the rest only as far as it parses; what follows a malformed chunk is copied as it is.
        while let next = chunk(in: png, at: offset), next.end <= png.count, next.type != iend {
            let replaced = next.type == textType && split(png[next.dataStart..<next.dataEnd]).map {
                keys.contains($0.0)
            } == true
            if !replaced { result += png[offset..<next.end] }
            offset = next.end
        }
        result += png[offset...]
        return result
    }

    /// The tEXt chunks of `png`, in order: keys as Latin-1, values as UTF-8 where they are valid UTF-8 and as
    /// Latin-1 otherwise. Chunks whose CRC does not verify are left out; the walk stops at IEND or a malformed chunk.
    public static func text(of png: [UInt8]) -> [(key: String, value: String)] {
        guard ByteFields.matches(png, at: 0, signature) else { return [] }
        var found: [(key: String, value: String)] = []
        var offset = signature.count
        while let next = chunk(in: png, at: offset), next.end <= png.count, next.type != iend {
            if next.type == textType, let stored = ByteFields.uint32BE(png, at: next.dataEnd),
               CRC32.checksum(png[next.dataStart - 4..<next.dataEnd]) == stored,
               let (key, value) = split(png[next.dataStart..<next.dataEnd]) {
                found.append((latin1(key), String(validating: value, as: UTF8.self) ?? latin1(value)))
            }
            offset = next.end
        }
        return found
    }

    /// A chunk's frame: its type, where its data lies and where the chunk (with its CRC) ends. The end may lie past
    /// the bytes; callers that need the whole chunk check it.
    private struct Chunk {
        var type: [UInt8]
        var length: Int
        var dataStart: Int
        var dataEnd: Int
        var end: Int
    }

    private static func chunk(in bytes: [UInt8], at offset: Int) -> Chunk? {
        guard let length = ByteFields.uint32BE(bytes, at: offset), length <= maximumLength,
              offset <= bytes.count, bytes.count - offset >= 8
        else { return nil }
        let dataStart = offset + 8
        let dataEnd = dataStart + Int(length)
        return Chunk(type: Array(bytes[offset + 4..<dataStart]), length: Int(length), dataStart: dataStart,
                     dataEnd: dataEnd, end: dataEnd + 4)
    }

    /// A tEXt chunk's data split at its first NUL, when the key before it is a valid keyword's length.
    private static func split(_ data: ArraySlice<UInt8>) -> ([UInt8], ArraySlice<UInt8>)? {
        guard let nul = data.firstIndex(of: 0), (1...79).contains(nul - data.startIndex) else { return nil }
        return (Array(data[..<nul]), data[(nul + 1)...])
    }

    /// A keyword's Latin-1 bytes: 1...79 printable characters, no leading, trailing or doubled space (11.3.4.2).
    private static func keyword(_ key: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        for scalar in key.unicodeScalars {
            guard (0x20...0x7E).contains(scalar.value) || (0xA1...0xFF).contains(scalar.value) else { return nil }
            bytes.append(UInt8(truncatingIfNeeded: scalar.value))
        }
        guard (1...79).contains(bytes.count), bytes.first != 0x20, bytes.last != 0x20,
              !zip(bytes, bytes.dropFirst()).contains(where: { $0 == 0x20 && $1 == 0x20 })
        else { return nil }
        return bytes
    }

    private static func latin1(_ bytes: some Sequence<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) }
    }

    /// PNG's limit for lengths, widths and heights: 2^31 - 1.
    private static let maximumLength: UInt32 = 0x7FFF_FFFF
    private static let ihdr: [UInt8] = Array("IHDR".utf8)
    private static let iend: [UInt8] = Array("IEND".utf8)
    private static let textType: [UInt8] = Array("tEXt".utf8)
}
