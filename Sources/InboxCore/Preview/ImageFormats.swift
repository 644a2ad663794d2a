/// One reader per format for ImageHeader.read, each given bytes that start with its signature. Each reads only the
/// fields that give the size, bounds-checked; a side of 0 is left for `read` to refuse.
extension ImageHeader {
    /// PNG: IHDR, which must be the first chunk.
    static func png(_ bytes: [UInt8]) -> ImageHeader? {
        PNGFile.dimensions(bytes).map { ImageHeader(format: .png, width: $0.width, height: $0.height) }
    }

    /// JPEG (ITU T.81, B.1.1): segments from SOI, skipped by their lengths, to the first frame header (SOF0...SOF15
    /// but DHT, JPG and DAC, which share the range). Reaching the scan or the end first is malformed.
    static func jpeg(_ bytes: [UInt8]) -> ImageHeader? {
        var offset = 2
        while true {
            guard ByteFields.uint8(bytes, at: offset) == 0xFF else { return nil }
            // Any number of 0xFF fill bytes may precede a marker (B.1.1.2).
            offset += 1
            while ByteFields.uint8(bytes, at: offset) == 0xFF { offset += 1 }
            guard let marker = ByteFields.uint8(bytes, at: offset) else { return nil }
            offset += 1
            switch marker {
            case 0x01, 0xD0...0xD7:
                continue // TEM and RST carry no length.
            case 0x00, 0xD8, 0xD9, 0xDA:
                return nil // A stuffed byte, a second SOI, EOI or SOS before any frame header.
            default:
                break
            }
            guard let length = ByteFields.uint16BE(bytes, at: offset), length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                // Length, precision, then the number of lines and the samples per line.
                guard length >= 8, let height = ByteFields.uint16BE(bytes, at: offset + 3),
                      let width = ByteFields.uint16BE(bytes, at: offset + 5)
                else { return nil }
                return ImageHeader(format: .jpeg, width: Int(width), height: Int(height))
            }
            offset += Int(length)
        }
    }

    /// GIF87a and GIF89a: the logical screen's size, little-endian.
    static func gif(_ bytes: [UInt8]) -> ImageHeader? {
        guard ["GIF87a", "GIF89a"].contains(where: { ByteFields.matches(bytes, at: 0, Array($0.utf8)) }),
              let width = ByteFields.uint16LE(bytes, at: 6), let height = ByteFields.uint16LE(bytes, at: 8)
        else { return nil }
        return ImageHeader(format: .gif, width: Int(width), height: Int(height))
    }

    /// WebP: the RIFF container's first chunk, VP8 (lossy, RFC 6386 9.1), VP8L (lossless) or VP8X (extended).
    static func webp(_ bytes: [UInt8]) -> ImageHeader? {
        guard ByteFields.matches(bytes, at: 8, Array("WEBP".utf8)) else { return nil }
        let data = 20
        if ByteFields.matches(bytes, at: 12, Array("VP8 ".utf8)) {
            // A key frame (bit 0 of the frame tag clear), the start code, then 14-bit sides with 2-bit scales.
            guard let tag = ByteFields.uint8(bytes, at: data), tag & 1 == 0,
                  ByteFields.matches(bytes, at: data + 3, [0x9D, 0x01, 0x2A]),
                  let width = ByteFields.uint16LE(bytes, at: data + 6),
                  let height = ByteFields.uint16LE(bytes, at: data + 8)
            else { return nil }
            return ImageHeader(format: .webp, width: Int(width & 0x3FFF), height: Int(height & 0x3FFF))
        }
        if ByteFields.matches(bytes, at: 12, Array("VP8L".utf8)) {
            // The signature 0x2F, then width - 1 and height - 1 in 14 bits each and a 3-bit version that must be 0.
            guard ByteFields.uint8(bytes, at: data) == 0x2F, let packed = ByteFields.uint32LE(bytes, at: data + 1),
                  packed >> 29 == 0
            else { return nil }
            return ImageHeader(format: .webp, width: Int(packed & 0x3FFF) + 1, height: Int(packed >> 14 & 0x3FFF) + 1)
        }
        if ByteFields.matches(bytes, at: 12, Array("VP8X".utf8)) {
            // Flags and three reserved bytes, then the canvas's width - 1 and height - 1 in 24 bits each.
            guard let width = ByteFields.uint24LE(bytes, at: data + 4),
                  let height = ByteFields.uint24LE(bytes, at: data + 7)
            else { return nil }
            return ImageHeader(format: .webp, width: Int(width) + 1, height: Int(height) + 1)
        }
        return nil
    }

    /// BMP: the DIB header after the 14-byte file header. OS/2's BITMAPCOREHEADER (12 bytes) has 16-bit sides;
    /// every later one (16 bytes for OS/2 2.x, 40 for BITMAPINFOHEADER and up) signed 32-bit ones, a negative height
    /// meaning rows top-down.
    static func bmp(_ bytes: [UInt8]) -> ImageHeader? {
        guard let headerSize = ByteFields.uint32LE(bytes, at: 14) else { return nil }
        if headerSize == 12 {
            guard let width = ByteFields.uint16LE(bytes, at: 18), let height = ByteFields.uint16LE(bytes, at: 20)
            else { return nil }
            return ImageHeader(format: .bmp, width: Int(width), height: Int(height))
        }
        guard headerSize >= 16, let width = ByteFields.uint32LE(bytes, at: 18),
              let height = ByteFields.uint32LE(bytes, at: 22)
        else { return nil }
        let signedWidth = Int(Int32(bitPattern: width))
        guard signedWidth > 0 else { return nil }
        return ImageHeader(format: .bmp, width: signedWidth, height: abs(Int(Int32(bitPattern: height))))
    }

    /// TIFF: ImageWidth (256) and ImageLength (257) in the first image file directory, as SHORT or LONG.
    static func tiff(_ bytes: [UInt8]) -> ImageHeader? {
        let bigEndian = bytes.first == 0x4D
        func uint16(_ offset: Int) -> UInt16? {
            bigEndian ? ByteFields.uint16BE(bytes, at: offset) : ByteFields.uint16LE(bytes, at: offset)
        }
        func uint32(_ offset: Int) -> UInt32? {
            bigEndian ? ByteFields.uint32BE(bytes, at: offset) : ByteFields.uint32LE(bytes, at: offset)
        }
        guard let directory = uint32(4).flatMap({ Int(exactly: $0) }), let count = uint16(directory) else {
            return nil
        }
        var width: UInt32?
        var height: UInt32?
        for index in 0..<Int(count) {
            let entry = directory + 2 + index * 12
            guard let tag = uint16(entry), let type = uint16(entry + 2), let values = uint32(entry + 4) else {
                return nil
            }
            guard tag == 256 || tag == 257 else { continue }
            // A single SHORT sits in the value field's first two bytes, in the file's byte order.
            let value: UInt32?
            switch type {
            case 3: value = uint16(entry + 8).map(UInt32.init)
            case 4: value = uint32(entry + 8)
            default: return nil
            }
            guard values >= 1, let value else { return nil }
            if tag == 256 { width = value } else { height = value }
            if let width, let height {
                return ImageHeader(format: .tiff, width: Int(width), height: Int(height))
            }
        }
        return nil
    }
}
