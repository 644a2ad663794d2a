import Testing
@testable import InboxCore

/// PNG's header and tEXt chunks, against PNGs written by Python's zlib (CRC and Adler-32 made by another
/// implementation) and by ImageMagick.
@Suite("PNG files")
struct PNGFileTests {
    typealias B = BinaryBytes

    /// A 1 × 1 8-bit grey PNG: IHDR, an IDAT holding a zlib stream of one stored block, IEND (Python, zlib.crc32).
    static let tiny = BinaryBytes.hex("""
        89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b550000000d494441547801010200fdff00800082
        0081c36e25e00000000049454e44ae426082
        """)

    /// `tiny` with Thumb::URI and Thumb::MTime after IHDR, by Python; ImageMagick's `identify -verbose` reads both.
    static let annotated = BinaryBytes.hex("""
        89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b550000002a744558745468756d623a3a55524900
        66696c653a2f2f2f686f6d652f6a656e732f70686f746f732f6d652e706e67a1b2dbfe00000017744558745468756d623a3a4d54
        696d65003137303030303030303015746b200000000d494441547801010200fdff008000820081c36e25e00000000049454e44ae
        426082
        """)

    /// ImageMagick's 37 × 21 red PNG (`convert -size 37x21 xc:red -strip`).
    static let imageMagick = BinaryBytes.hex("""
        89504e470d0a1a0a0000000d4948445200000025000000150103000000fb2ab5ed00000003504c5445ff000019e209370000000c
        4944415408d7636018480000007e0001fdb537520000000049454e44ae426082
        """)

    /// A chunk as the PNG specification lays it out, with its CRC.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = Array(type.utf8) + data
        return B.be32(UInt32(data.count)) + typeAndData + B.be32(CRC32.checksum(typeAndData))
    }

    /// The same PNG as `tiny`, built here: our CRC-32 and a stored deflate block with its Adler-32.
    static func handMade(width: UInt32 = 1, height: UInt32 = 1, after header: [UInt8] = []) -> [UInt8] {
        let raw: [UInt8] = [0x00, 0x80] // Filter type 0, one grey pixel.
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in raw { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        let zlib: [UInt8] = [0x78, 0x01, 0x01] + B.le16(2) + B.le16(~2) + raw + B.be32(b << 16 | a)
        let ihdr = B.be32(width) + B.be32(height) + [8, 0, 0, 0, 0]
        return PNGFile.signature + chunk("IHDR", ihdr) + header + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    /// The chunks of a PNG as (type, whole chunk bytes), walked independently of PNGFile; nil when one is cut.
    static func chunks(_ png: [UInt8]) -> [(type: String, bytes: [UInt8])]? {
        var found: [(type: String, bytes: [UInt8])] = []
        var offset = 8
        while offset < png.count {
            guard png.count - offset >= 12 else { return nil }
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard png.count - offset >= 12 + length else { return nil }
            let type = String(decoding: png[offset + 4..<offset + 8], as: UTF8.self)
            found.append((type, Array(png[offset..<offset + 12 + length])))
            offset += 12 + length
        }
        return found
    }

    @Test func handMadeMatchesZlib() {
        #expect(Self.handMade() == Self.tiny)
    }

    struct DimensionCase: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        let width: Int?
        let height: Int?
        var testDescription: String { name }
    }

    static let dimensionCases: [DimensionCase] = [
        DimensionCase(name: "tiny", input: tiny, width: 1, height: 1),
        DimensionCase(name: "ImageMagick", input: imageMagick, width: 37, height: 21),
        DimensionCase(name: "30000 square",
                      input: handMade(width: 30_000, height: 30_000), width: 30_000, height: 30_000),
        DimensionCase(name: "largest", input: handMade(width: 0x7FFF_FFFF, height: 1), width: 0x7FFF_FFFF, height: 1),
        DimensionCase(name: "cut after the height", input: Array(tiny.prefix(24)), width: 1, height: 1),
        DimensionCase(name: "cut in the height", input: Array(tiny.prefix(23)), width: nil, height: nil),
        DimensionCase(name: "width 2^31", input: handMade(width: 0x8000_0000), width: nil, height: nil),
        DimensionCase(name: "height 0", input: handMade(height: 0), width: nil, height: nil),
        DimensionCase(name: "IHDR of 12 bytes", input: B.patched(tiny, at: 11, [12]), width: nil, height: nil),
        DimensionCase(name: "another chunk first",
                      input: PNGFile.signature + chunk("tEXt", Array("a\u{0}b".utf8)) + tiny.dropFirst(8),
                      width: nil, height: nil),
        DimensionCase(name: "bad signature", input: B.patched(tiny, at: 1, [0x70]), width: nil, height: nil),
        DimensionCase(name: "empty", input: [], width: nil, height: nil),
        DimensionCase(name: "signature only", input: PNGFile.signature, width: nil, height: nil),
    ]

    @Test(arguments: dimensionCases)
    func dimensions(_ test: DimensionCase) {
        let found = PNGFile.dimensions(test.input)
        #expect(found?.width == test.width)
        #expect(found?.height == test.height)
    }

    @Test func insertingMatchesPython() {
        let text = [("Thumb::URI", "file:///home/jens/photos/me.png"), ("Thumb::MTime", "1700000000")]
        #expect(PNGFile.inserting(text: text, into: Self.tiny) == Self.annotated)
        #expect(PNGFile.text(of: Self.annotated).map { [$0.key, $0.value] } == text.map { [$0.0, $0.1] })
    }

    @Test func insertingKeepsEveryChunk() throws {
        let text = [("Thumb::URI", "file:///tmp/caf%C3%A9.png"), ("Comment", "h\u{E9}llo \u{2603}"),
                    ("Gr\u{F6}\u{DF}e", "1")]
        let result = try #require(PNGFile.inserting(text: text, into: Self.imageMagick))
        let before = try #require(Self.chunks(Self.imageMagick))
        let after = try #require(Self.chunks(result))
        // IHDR, the three new chunks, then the original ones unchanged.
        #expect(after.map(\.type) == ["IHDR", "tEXt", "tEXt", "tEXt", "PLTE", "IDAT", "IEND"])
        #expect(after[0].bytes == before[0].bytes)
        #expect(after.dropFirst(4).map(\.bytes) == before.dropFirst().map(\.bytes))
        for chunk in after {
            let stored = chunk.bytes.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            #expect(CRC32.checksum(chunk.bytes.dropFirst(4).dropLast(4)) == stored, "\(chunk.type)")
        }
        // The Latin-1 key is stored as one byte per character; the value as UTF-8 and read back as such.
        #expect(after[3].bytes[8..<14] == [0x47, 0x72, 0xF6, 0xDF, 0x65, 0x00])
        #expect(PNGFile.text(of: result).map { [$0.key, $0.value] } == text.map { [$0.0, $0.1] })
        #expect(PNGFile.dimensions(result)?.width == 37)
    }

    @Test func insertingReplacesTheSameKeys() throws {
        // As gdk-pixbuf-thumbnailer leaves it: its own Thumb::URI, and a comment to keep.
        let written = Self.chunk("tEXt", Array("Thumb::URI\u{0}file:///old".utf8))
        let comment = Self.chunk("tEXt", Array("Comment\u{0}kept".utf8))
        let png = Self.handMade(after: written + comment)
        let result = try #require(PNGFile.inserting(text: [("Thumb::URI", "file:///new")], into: png))
        let pairs = PNGFile.text(of: result).map { [$0.key, $0.value] }
        #expect(pairs == [["Thumb::URI", "file:///new"], ["Comment", "kept"]])
        #expect(try #require(Self.chunks(result)).map(\.type) == ["IHDR", "tEXt", "tEXt", "IDAT", "IEND"])
    }

    @Test(arguments: ["", String(repeating: "k", count: 80), " lead", "trail ", "two  spaces", "nul\u{0}", "tab\t",
                      "del\u{7F}", "euro\u{20AC}", "nbsp\u{A0}"])
    func insertingRefusesKey(_ key: String) {
        #expect(PNGFile.inserting(text: [("Title", "ok"), (key, "value")], into: Self.tiny) == nil)
    }

    @Test func insertingAcceptsLongestKey() {
        let key = String(repeating: "k", count: 79)
        #expect(PNGFile.inserting(text: [(key, "")], into: Self.tiny).map { PNGFile.text(of: $0).first?.key } == key)
    }

    @Test func insertingRefuses() {
        #expect(PNGFile.inserting(text: [("Title", "a\u{0}b")], into: Self.tiny) == nil)
        #expect(PNGFile.inserting(text: [("Title", "a")], into: Array(Self.tiny.prefix(32))) == nil)
        #expect(PNGFile.inserting(text: [("Title", "a")], into: Array("GIF89a".utf8)) == nil)
        #expect(PNGFile.inserting(text: [], into: Self.tiny) == Self.tiny)
    }

    @Test func textLeavesOutBadCRC() {
        var corrupt = Self.annotated
        corrupt[45] ^= 0x01 // In the first tEXt chunk's key: "Thumc::URI" no longer matches its CRC.
        #expect(PNGFile.text(of: corrupt).map(\.key) == ["Thumb::MTime"])
    }

    @Test func textStopsAtIEND() {
        let png = Self.tiny + Self.chunk("tEXt", Array("After\u{0}end".utf8))
        #expect(PNGFile.text(of: png).isEmpty)
        let beforeEnd = Self.handMade(after: Self.chunk("tEXt", Array("Before\u{0}end".utf8)))
        #expect(PNGFile.text(of: beforeEnd).map(\.key) == ["Before"])
    }

    @Test func textOfEveryPrefixIsAPrefix() {
        let whole = PNGFile.text(of: Self.annotated).map(\.key)
        for count in 0...Self.annotated.count {
            let keys = PNGFile.text(of: Array(Self.annotated.prefix(count))).map(\.key)
            #expect(Array(whole.prefix(keys.count)) == keys, "prefix \(count)")
        }
    }

    @Test func garbageNeverTraps() {
        var garbage = Garbage(state: 0x5EED_0F_9A6E)
        for round in 0..<500 {
            var bytes = PNGFile.signature + garbage.bytes(Int(garbage.next() % 200))
            if round % 2 == 0 { bytes = Array(Self.annotated.prefix(33)) + bytes.dropFirst(8) }
            _ = PNGFile.dimensions(bytes)
            _ = PNGFile.text(of: bytes)
            _ = PNGFile.inserting(text: [("Thumb::URI", "file:///x")], into: bytes)
        }
        // A chunk claiming 2^31 - 1 bytes, and one claiming more than PNG allows.
        let huge = Array(Self.tiny.prefix(33)) + B.be32(0x7FFF_FFFF) + Array("tEXt".utf8)
        let tooBig = Array(Self.tiny.prefix(33)) + B.be32(0xFFFF_FFFF) + Array("tEXt".utf8)
        #expect(PNGFile.text(of: huge).isEmpty && PNGFile.text(of: tooBig).isEmpty)
        #expect(PNGFile.inserting(text: [("K", "v")], into: huge).map { Array($0.suffix(8)) } == Array(huge.suffix(8)))
    }
}
