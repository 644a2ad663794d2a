/// A picture's format and size read from its first bytes, before any decoder is run: the size bound that keeps a
/// 30,000 × 30,000 PNG from reaching gdk-pixbuf.
public struct ImageHeader: Sendable, Hashable {
    public enum Format: String, Sendable, Hashable {
        case png, jpeg, gif, webp, bmp, tiff
    }

    public var format: Format
    public var width: Int
    public var height: Int

    public init(format: Format, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// The header of `bytes` (a file's first bytes, 64 KiB are enough for a JPEG's frame header in practice); nil when
    /// the format is none of these or the header is cut or malformed.
    ///
    /// A side of 0 is malformed (it would let any size through the bound). A TIFF's first directory may lie anywhere
    /// in the file (libtiff writes it after the pixels): when it lies past `bytes`, the answer is nil too.
    public static func read(_ bytes: [UInt8]) -> ImageHeader? {
        let header: ImageHeader?
        switch bytes.prefix(4) {
        case [0x89, 0x50, 0x4E, 0x47]: header = png(bytes) // "\x89PNG"
        case let prefix where prefix.starts(with: [0xFF, 0xD8]): header = jpeg(bytes) // SOI
        case [0x47, 0x49, 0x46, 0x38]: header = gif(bytes) // "GIF8"
        case [0x52, 0x49, 0x46, 0x46]: header = webp(bytes) // "RIFF"
        case let prefix where prefix.starts(with: [0x42, 0x4D]): header = bmp(bytes) // "BM"
        case [0x49, 0x49, 0x2A, 0x00], [0x4D, 0x4D, 0x00, 0x2A]: header = tiff(bytes) // "II*\0", "MM\0*"
        default: header = nil
        }
        guard let header, header.width > 0, header.height > 0 else { return nil }
        return header
    }

    /// width × height, saturating.
    public var pixels: Int {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? .max : product
    }
}
