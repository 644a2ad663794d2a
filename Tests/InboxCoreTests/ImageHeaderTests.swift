import Testing
@testable import InboxCore

/// Picture sizes from the first bytes: files ImageMagick wrote, and headers made here to the formats' layouts.
@Suite("Image headers")
struct ImageHeaderTests {
    typealias B = BinaryBytes

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        let expected: ImageHeader?
        var testDescription: String { name }
    }

    static func size(_ format: ImageHeader.Format, _ width: Int, _ height: Int) -> ImageHeader {
        ImageHeader(format: format, width: width, height: height)
    }

    /// `convert -size 37x21 xc:red -strip` to each format (BMP: the first 64 bytes).
    static let realFiles: [Case] = [
        Case(name: "PNG", input: PNGFileTests.imageMagick, expected: size(.png, 37, 21)),
        Case(name: "baseline JPEG", input: ImageFixtures.jpeg, expected: size(.jpeg, 37, 21)),
        Case(name: "progressive JPEG", input: ImageFixtures.progressiveJPEG, expected: size(.jpeg, 37, 21)),
        Case(name: "GIF89a", input: ImageFixtures.gif, expected: size(.gif, 37, 21)),
        Case(name: "WebP lossy", input: ImageFixtures.webpLossy, expected: size(.webp, 37, 21)),
        Case(name: "WebP lossless", input: ImageFixtures.webpLossless, expected: size(.webp, 37, 21)),
        Case(name: "WebP extended, with alpha", input: ImageFixtures.webpExtended, expected: size(.webp, 37, 21)),
        Case(name: "BMP, BITMAPV5HEADER", input: ImageFixtures.bmp, expected: size(.bmp, 37, 21)),
        Case(name: "BMP, OS/2 BITMAPCOREHEADER", input: ImageFixtures.os2BMP, expected: size(.bmp, 37, 21)),
        Case(name: "TIFF, little-endian", input: ImageFixtures.tiffLittleEndian, expected: size(.tiff, 37, 21)),
        Case(name: "TIFF, big-endian", input: ImageFixtures.tiffBigEndian, expected: size(.tiff, 37, 21)),
    ]

    @Test(arguments: realFiles)
    func readsRealFile(_ test: Case) {
        #expect(ImageHeader.read(test.input) == test.expected)
    }

    // MARK: Made here

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker] + B.be16(UInt16(payload.count + 2)) + payload
    }

    static func frame(_ marker: UInt8 = 0xC0, width: UInt16, height: UInt16) -> [UInt8] {
        segment(marker, [8] + B.be16(height) + B.be16(width) + [1, 1, 0x11, 0])
    }

    static let soi: [UInt8] = [0xFF, 0xD8]
    static let app0 = segment(0xE0, Array("JFIF\u{0}".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0])
    /// A DHT segment whose bytes would read as a 65535 × 65535 frame if it were taken for one.
    static let dht = segment(0xC4, [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])

    static let jpegCases: [Case] = [
        Case(name: "SOF0 after APP0",
             input: soi + app0 + frame(width: 4000, height: 3000), expected: size(.jpeg, 4000, 3000)),
        Case(name: "DHT, JPG and DAC are no frames",
             input: soi + dht + segment(0xC8, [0, 0, 1, 0, 1, 0]) + segment(0xCC, [0, 0, 1, 0, 1, 0])
                + frame(0xC2, width: 640, height: 480), expected: size(.jpeg, 640, 480)),
        Case(name: "SOF15", input: soi + frame(0xCF, width: 1, height: 2), expected: size(.jpeg, 1, 2)),
        Case(name: "fill bytes, RST and TEM", input: soi + [0xFF, 0xFF, 0xFF, 0x01, 0xFF, 0xD3] + app0 + [0xFF, 0xFF]
                + frame(width: 7, height: 9), expected: size(.jpeg, 7, 9)),
        Case(name: "largest", input: soi + frame(width: 65_535, height: 65_535), expected: size(.jpeg, 65_535, 65_535)),
        Case(name: "scan before any frame",
             input: soi + app0 + segment(0xDA, [1, 1, 0, 0, 63, 0]) + frame(width: 7, height: 9),
             expected: nil),
        Case(name: "end before any frame",
             input: soi + app0 + [0xFF, 0xD9] + frame(width: 7, height: 9), expected: nil),
        Case(name: "no marker after a segment", input: soi + app0 + [0x00] + frame(width: 7, height: 9), expected: nil),
        Case(name: "segment length 1",
             input: soi + [0xFF, 0xE1, 0x00, 0x01] + frame(width: 7, height: 9), expected: nil),
        Case(name: "segment longer than the bytes", input: soi + [0xFF, 0xE1, 0xFF, 0xFF, 0, 0], expected: nil),
        Case(name: "frame cut in its width",
             input: Array((soi + frame(width: 7, height: 9)).dropLast(6)), expected: nil),
        Case(name: "frame of length 7", input: soi + [0xFF, 0xC0, 0x00, 0x07, 8, 0, 9, 0, 7], expected: nil),
        Case(name: "height 0 (a DNL segment follows)", input: soi + frame(width: 7, height: 0), expected: nil),
        Case(name: "SOI only", input: soi, expected: nil),
        Case(name: "fill bytes only", input: soi + [UInt8](repeating: 0xFF, count: 1000), expected: nil),
    ]

    static func webp(_ chunk: String, _ data: [UInt8]) -> [UInt8] {
        Array("RIFF".utf8) + B.le32(UInt32(data.count + 12)) + Array("WEBP".utf8) + Array(chunk.utf8)
            + B.le32(UInt32(data.count)) + data
    }

    static func vp8(frameTag: UInt8 = 0x50, startCode: [UInt8] = [0x9D, 0x01, 0x2A], width: UInt16,
                    height: UInt16) -> [UInt8] {
        webp("VP8 ", [frameTag, 0x03, 0x00] + startCode + B.le16(width) + B.le16(height) + [0, 0])
    }

    static func vp8l(width: UInt32, height: UInt32, version: UInt32 = 0) -> [UInt8] {
        webp("VP8L", [0x2F] + B.le32((width - 1) | (height - 1) << 14 | version << 29) + [0, 0, 0])
    }

    static func vp8x(width: UInt32, height: UInt32) -> [UInt8] {
        webp("VP8X", [0x10, 0, 0, 0] + Array(B.le32(width - 1).prefix(3)) + Array(B.le32(height - 1).prefix(3)))
    }

    static let otherCases: [Case] = [
        Case(name: "PNG 30000 square",
             input: PNGFileTests.handMade(width: 30_000, height: 30_000), expected: size(.png, 30_000, 30_000)),
        Case(name: "PNG cut", input: Array(PNGFileTests.tiny.prefix(20)), expected: nil),
        Case(name: "GIF87a",
             input: Array("GIF87a".utf8) + B.le16(640) + B.le16(480) + [0, 0, 0], expected: size(.gif, 640, 480)),
        Case(name: "GIF largest",
             input: Array("GIF89a".utf8) + B.le16(.max) + B.le16(.max), expected: size(.gif, 65_535, 65_535)),
        Case(name: "GIF88a", input: Array("GIF88a".utf8) + B.le16(640) + B.le16(480), expected: nil),
        Case(name: "GIF cut", input: Array("GIF89a".utf8) + B.le16(640) + [1], expected: nil),
        Case(name: "GIF 0 wide", input: Array("GIF89a".utf8) + B.le16(0) + B.le16(480), expected: nil),
        Case(name: "VP8 with scaling bits",
             input: vp8(width: 0xC000 | 1000, height: 0x4000 | 700), expected: size(.webp, 1000, 700)),
        Case(name: "VP8 interframe", input: vp8(frameTag: 0x51, width: 10, height: 10), expected: nil),
        Case(name: "VP8 start code", input: vp8(startCode: [0x9D, 0x01, 0x2B], width: 10, height: 10), expected: nil),
        Case(name: "VP8L largest", input: vp8l(width: 16_384, height: 16_384), expected: size(.webp, 16_384, 16_384)),
        Case(name: "VP8L 1 × 1", input: vp8l(width: 1, height: 1), expected: size(.webp, 1, 1)),
        Case(name: "VP8L version 1", input: vp8l(width: 5, height: 5, version: 1), expected: nil),
        Case(name: "VP8L signature", input: B.patched(vp8l(width: 5, height: 5), at: 20, [0x2E]), expected: nil),
        Case(name: "VP8X largest",
             input: vp8x(width: 1 << 24, height: 1 << 24), expected: size(.webp, 1 << 24, 1 << 24)),
        Case(name: "VP8X cut", input: Array(vp8x(width: 9, height: 9).dropLast(1)), expected: nil),
        Case(name: "another RIFF",
             input: Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8) + [UInt8](repeating: 1, count: 20), expected: nil),
        Case(name: "unknown WebP chunk", input: webp("VP8Z", [UInt8](repeating: 1, count: 10)), expected: nil),
        Case(name: "BMP top-down",
             input: bmp(40, B.le32(800) + B.le32(UInt32(bitPattern: -600))), expected: size(.bmp, 800, 600)),
        Case(name: "BMP height Int32.min",
             input: bmp(40, B.le32(1) + B.le32(0x8000_0000)), expected: size(.bmp, 1, 2_147_483_648)),
        Case(name: "BMP negative width", input: bmp(40, B.le32(UInt32(bitPattern: -5)) + B.le32(5)), expected: nil),
        Case(name: "BMP OS/2 2.x", input: bmp(16, B.le32(300) + B.le32(200)), expected: size(.bmp, 300, 200)),
        Case(name: "BMP core", input: bmp(12, B.le16(300) + B.le16(200)), expected: size(.bmp, 300, 200)),
        Case(name: "BMP header size 13", input: bmp(13, B.le32(300) + B.le32(200)), expected: nil),
        Case(name: "BMP cut", input: Array(bmp(40, B.le32(300) + B.le32(200)).dropLast(5)), expected: nil),
        Case(name: "TIFF SHORT and LONG", input: tiff(bigEndian: false, [(256, 3, 1, 640), (257, 4, 1, 100_000)]),
             expected: size(.tiff, 640, 100_000)),
        Case(name: "TIFF big-endian SHORT",
             input: tiff(bigEndian: true, [(254, 4, 1, 0), (256, 3, 1, 3), (257, 3, 1, 4)]),
             expected: size(.tiff, 3, 4)),
        Case(name: "TIFF largest", input: tiff(bigEndian: true, [(256, 4, 1, .max), (257, 4, 1, .max)]),
             expected: size(.tiff, 4_294_967_295, 4_294_967_295)),
        Case(name: "TIFF no length", input: tiff(bigEndian: false, [(256, 3, 1, 640)]), expected: nil),
        Case(name: "TIFF RATIONAL width",
             input: tiff(bigEndian: false, [(256, 5, 1, 8), (257, 3, 1, 4)]), expected: nil),
        Case(name: "TIFF no values", input: tiff(bigEndian: false, [(256, 3, 0, 8), (257, 3, 1, 4)]), expected: nil),
        Case(name: "TIFF directory past the bytes",
             input: B.patched(tiff(bigEndian: false, [(256, 3, 1, 8), (257, 3, 1, 4)]), at: 4,
                                                                      B.le32(0xFFFF_FFF0)), expected: nil),
        Case(name: "TIFF more entries than bytes", input: B.patched(tiff(bigEndian: false, [(254, 3, 1, 8)]), at: 8,
                                                                     B.le16(.max)), expected: nil),
        Case(name: "BigTIFF",
             input: [0x49, 0x49, 0x2B, 0x00, 8, 0, 0, 0] + [UInt8](repeating: 0, count: 16), expected: nil),
        Case(name: "empty", input: [], expected: nil),
        Case(name: "text", input: Array("width=3 height=4".utf8), expected: nil),
    ]

    static func bmp(_ headerSize: UInt32, _ sides: [UInt8]) -> [UInt8] {
        Array("BM".utf8) + B.le32(1000) + B.le32(0) + B.le32(54) + B.le32(headerSize) + sides + [1, 0, 24, 0]
    }

    static func tiff(bigEndian: Bool, _ entries: [(UInt16, UInt16, UInt32, UInt32)]) -> [UInt8] {
        let u16 = bigEndian ? B.be16 : B.le16
        let u32 = bigEndian ? B.be32 : B.le32
        let order: [UInt8] = bigEndian ? [0x4D, 0x4D, 0x00, 0x2A] : [0x49, 0x49, 0x2A, 0x00]
        var bytes = order + u32(8) + u16(UInt16(entries.count))
        for (tag, type, count, value) in entries {
            // A SHORT sits left-justified in the value field.
            let field = type == 3 ? u16(UInt16(truncatingIfNeeded: value)) + [0, 0] : u32(value)
            bytes += u16(tag) + u16(type) + u32(count) + field
        }
        return bytes + u32(0)
    }

    @Test(arguments: jpegCases + otherCases)
    func reads(_ test: Case) {
        #expect(ImageHeader.read(test.input) == test.expected)
    }

    @Test func pixels() {
        #expect(ImageHeader.read(PNGFileTests.handMade(width: 30_000, height: 30_000))?.pixels == 900_000_000)
        #expect(ImageHeader.read(Self.vp8x(width: 1 << 24, height: 1 << 24))?.pixels == 1 << 48)
        #expect(ImageHeader(format: .png, width: .max, height: 2).pixels == .max)
        #expect(ImageHeader(format: .png, width: Int.max / 2, height: 2).pixels == Int.max - 1)
    }

    @Test(arguments: realFiles)
    func everyCutNeverTraps(_ test: Case) {
        for count in 0..<test.input.count {
            let header = ImageHeader.read(Array(test.input.prefix(count)))
            #expect(header == nil || header == test.expected, "cut at \(count)")
        }
    }

    @Test func garbageNeverTraps() {
        var garbage = Garbage(state: 0x1_3A6E)
        let prefixes: [[UInt8]] = [PNGFile.signature, Self.soi, Array("GIF89a".utf8),
                                   Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8".utf8), Array("BM".utf8),
                                   [0x49, 0x49, 0x2A, 0x00], [0x4D, 0x4D, 0x00, 0x2A]]
        for round in 0..<700 {
            _ = ImageHeader.read(prefixes[round % prefixes.count] + garbage.bytes(Int(garbage.next() % 64)))
        }
    }
}
