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
    public static func read(_ bytes: [UInt8]) -> ImageHeader? {
        fatalError("ImageHeader.read: to be written")
    }

    /// width × height, saturating.
    public var pixels: Int {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? .max : product
    }
}
