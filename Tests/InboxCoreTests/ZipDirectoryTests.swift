import Testing
@testable import InboxCore

/// The ZIP central directory: archives written by Python's zipfile and Info-ZIP, archives written here (Zip64 ones
/// among them), and archives that lie.
@Suite("ZIP central directory")
struct ZipDirectoryTests {
    typealias B = BinaryBytes

    typealias Entry = ZipDirectory.Entry

    /// The central directory of a whole archive, read the way the system layer reads a file: its last `tailSize`
    /// bytes, then the directory's bytes.
    static func directory(of archive: [UInt8]) -> (ZipDirectory.Location, ZipDirectory)? {
        let tail = Array(archive.suffix(ZipDirectory.tailSize))
        guard let location = ZipDirectory.locate(tail: tail, tailOffset: UInt64(archive.count - tail.count),
                                                 fileSize: UInt64(archive.count)),
              let start = Int(exactly: location.offset), let size = Int(exactly: location.size),
              start + size <= archive.count,
              let directory = ZipDirectory.parse(Array(archive[start..<start + size]), location: location)
        else { return nil }
        return (location, directory)
    }

    struct FixtureCase: Sendable, CustomTestStringConvertible {
        let name: String
        let archive: [UInt8]
        let location: ZipDirectory.Location
        let entries: [Entry]
        var testDescription: String { name }
    }

    /// Expected values are what Python's zipfile reads from the same bytes (`_EndRecData`, `infolist()`).
    static let fixtures: [FixtureCase] = [
        FixtureCase(name: "zipfile, stored", archive: ZipFixtures.stored,
                    location: .init(offset: 124, size: 111, entryCount: 2),
                    entries: [entry("mimetype", 0, 39, 39, 0), entry("content.xml", 0, 6, 6, 77)]),
        FixtureCase(name: "zipfile, deflated, with a comment", archive: ZipFixtures.deflated,
                    location: .init(offset: 163, size: 178, entryCount: 3),
                    entries: [entry("word/document.xml", 8, 21, 225, 0), entry("[Content_Types].xml", 8, 10, 8, 68),
                              entry("dir/", 8, 2, 0, 127)]),
        FixtureCase(name: "zipfile, force_zip64", archive: ZipFixtures.forceZip64,
                    location: .init(offset: 60, size: 51, entryCount: 1), entries: [entry("a.txt", 0, 5, 5, 0)]),
        FixtureCase(name: "zipfile, Zip64 end records", archive: ZipFixtures.zip64End,
                    location: .init(offset: 80, size: 102, entryCount: 2),
                    entries: [entry("a.txt", 0, 5, 5, 0), entry("b.txt", 0, 5, 5, 40)]),
        FixtureCase(name: "zip -fz: 0xFFFFFFFF offset and size", archive: ZipFixtures.infoZipZip64,
                    location: .init(offset: 61, size: 63, entryCount: 1), entries: [entry("a.txt", 0, 6, 6, 0)]),
    ]

    static func entry(_ name: String, _ method: UInt16, _ compressed: UInt64, _ uncompressed: UInt64,
                      _ offset: UInt64) -> Entry {
        Entry(name: Array(name.utf8), method: method, compressedSize: compressed, uncompressedSize: uncompressed,
              localHeaderOffset: offset)
    }

    @Test(arguments: fixtures)
    func readsRealArchive(_ test: FixtureCase) throws {
        let (location, directory) = try #require(Self.directory(of: test.archive))
        #expect(location == test.location)
        #expect(directory.entries == test.entries)
    }

    @Test func lookupAndTotal() throws {
        let (_, directory) = try #require(Self.directory(of: ZipFixtures.deflated))
        #expect(directory.entry(named: "word/document.xml")?.uncompressedSize == 225)
        #expect(directory.entry(named: "word/document") == nil)
        #expect(directory.totalUncompressedSize == 233)
    }

    // MARK: Written here

    @Test(arguments: [false, true])
    func writtenHere(zip64: Bool) throws {
        let members = [ZipWriter.Member(name: "a", data: Array("first".utf8)),
                       ZipWriter.Member(name: "dir/b\u{E9}", data: [UInt8](repeating: 7, count: 300))]
        let writer = ZipWriter(members: members, comment: Array("a comment".utf8), zip64: zip64)
        let (location, directory) = try #require(Self.directory(of: writer.archive))
        #expect(location == writer.location)
        #expect(directory.entries == writer.entries)
    }

    @Test func emptyArchive() throws {
        let (location, directory) = try #require(Self.directory(of: ZipWriter(members: []).archive))
        #expect(location == .init(offset: 0, size: 0, entryCount: 0))
        #expect(directory.entries.isEmpty)
    }

    /// The last signature lies in the comment and leads nowhere; the real record before it is found.
    @Test(arguments: [
        // Five entries in no bytes.
        B.le32(0) + B.le16(5) + B.le16(5) + [UInt8](repeating: 0, count: 10),
        // A comment longer than what is left.
        [UInt8](repeating: 0, count: 16) + B.le16(100),
        // Cut short.
        [UInt8](repeating: 0, count: 10),
    ])
    func commentHoldingASignature(fake: [UInt8]) throws {
        let comment = ZipDirectory.EndRecord.signature + fake
        let writer = ZipWriter(members: [.init(name: "a", data: [1])], comment: comment)
        #expect(try #require(Self.directory(of: writer.archive)).1.entries == writer.entries)
    }

    @Test func archiveLargerThanTheTail() throws {
        let members: [ZipWriter.Member] = [.init(name: "big", data: [UInt8](repeating: 1, count: 70_000)),
                                           .init(name: "small", data: [2])]
        let writer = ZipWriter(members: members, comment: [UInt8](repeating: 0x20, count: 65_535))
        #expect(writer.archive.count > ZipDirectory.tailSize)
        let (location, directory) = try #require(Self.directory(of: writer.archive))
        #expect(location == writer.location)
        #expect(directory.entries == writer.entries)
    }

    @Test func zip64WithLongestComment() throws {
        // The tail must reach the Zip64 record behind a 65,535-byte comment.
        let writer = ZipWriter(members: [.init(name: "a", data: [1])], comment: [UInt8](repeating: 0x41, count: 65_535),
                               zip64: true)
        #expect(try #require(Self.directory(of: writer.archive)).0 == writer.location)
    }

    // MARK: Lies and damage

    struct DamageCase: Sendable, CustomTestStringConvertible {
        let name: String
        let archive: [UInt8]
        var testDescription: String { name }
    }

    static let one = ZipWriter(members: [.init(name: "a", data: Array("data".utf8)), .init(name: "b", data: [])])
    static let one64 = ZipWriter(members: [.init(name: "a", data: Array("data".utf8))], zip64: true)

    static let damage: [DamageCase] = [
        DamageCase(name: "more entries than the directory holds", archive: one.patchingEnd(8, B.le16(3) + B.le16(3))),
        DamageCase(name: "entries the directory cannot hold", archive: one.patchingEnd(8, B.le16(9) + B.le16(9))),
        DamageCase(name: "fewer entries", archive: one.patchingEnd(8, B.le16(1) + B.le16(1))),
        DamageCase(name: "entries on disk differ", archive: one.patchingEnd(8, B.le16(1))),
        DamageCase(name: "directory past the end record",
                   archive: one.patchingEnd(16, B.le32(UInt32(one.directoryOffset + 1)))),
        DamageCase(name: "directory size past the end", archive: one.patchingEnd(12, B.le32(0xFFFF_FF00))),
        DamageCase(name: "second disk", archive: one.patchingEnd(4, B.le16(1))),
        DamageCase(name: "0xFFFFFFFF offset, no Zip64", archive: one.patchingEnd(16, B.le32(0xFFFF_FFFF))),
        DamageCase(name: "comment longer than the file", archive: one.patchingEnd(20, B.le16(1))),
        DamageCase(name: "directory offset off by one",
                   archive: one.patchingEnd(16, B.le32(UInt32(one.directoryOffset - 1)))),
        DamageCase(name: "central header signature",
                   archive: B.patched(one.archive, at: one.directoryOffset, [0x50, 0x4B, 0x03, 0x04])),
        DamageCase(name: "name past the directory",
                   archive: B.patched(one.archive, at: one.directoryOffset + 28, B.le16(200))),
        DamageCase(name: "extra field overruns", archive: one.patchingCentral(30, B.le16(4)) ),
        DamageCase(name: "local header past the directory",
                   archive: one.patchingCentral(42, B.le32(UInt32(one.directoryOffset)))),
        DamageCase(name: "data past the directory", archive: one.patchingCentral(20, B.le32(1000))),
        DamageCase(name: "0xFFFFFFFF size without Zip64 extra", archive: one.patchingCentral(24, B.le32(0xFFFF_FFFF))),
        DamageCase(name: "Zip64 record signature", archive: one64.patchingZip64Record(0, [0x50, 0x4B, 0x06, 0x05])),
        DamageCase(name: "Zip64 record past the file", archive: one64.patchingLocator(8, B.le64(UInt64.max - 4))),
        DamageCase(name: "Zip64 record overlapping the locator",
                   archive: one64.patchingLocator(8, B.le64(UInt64(one64.locatorOffset - 40)))),
        DamageCase(name: "Zip64 record size too small", archive: one64.patchingZip64Record(4, B.le64(43))),
        DamageCase(name: "Zip64 record size huge", archive: one64.patchingZip64Record(4, B.le64(.max))),
        DamageCase(name: "Zip64 directory offset + size overflow",
                   archive: one64.patchingZip64Record(40, B.le64(.max))),
        DamageCase(name: "Zip64 entry count huge",
                   archive: one64.patchingZip64Record(24, B.le64(.max / 2) + B.le64(.max / 2))),
        DamageCase(name: "Zip64 two disks", archive: one64.patchingLocator(16, B.le32(2))),
        DamageCase(name: "Zip64 extra missing the offset", archive: one64.patchingCentral(46 + 1 + 2, B.le16(16))),
        DamageCase(name: "Zip64 local offset overflows", archive: one64.patchingCentral(46 + 1 + 4 + 16, B.le64(.max))),
        DamageCase(name: "garbage", archive: Array("not a zip archive at all, not even close".utf8)),
        DamageCase(name: "empty", archive: []),
    ]

    @Test(arguments: damage)
    func refusesDamage(_ test: DamageCase) {
        #expect(Self.directory(of: test.archive) == nil)
    }

    @Test func theUndamagedOnesRead() {
        // So that each damage case above fails for its damage alone.
        #expect(Self.directory(of: Self.one.archive)?.1.entries == Self.one.entries)
        #expect(Self.directory(of: Self.one64.archive)?.1.entries == Self.one64.entries)
    }

    @Test func zip64RecordMustBeInTheTail() {
        let archive = Self.one64.archive
        let end = archive.count - Self.one64.locatorOffset
        #expect(ZipDirectory.locate(tail: Array(archive.suffix(end + 56)), tailOffset: UInt64(archive.count - end - 56),
                                    fileSize: UInt64(archive.count)) == Self.one64.location)
        #expect(ZipDirectory.locate(tail: Array(archive.suffix(end + 55)), tailOffset: UInt64(archive.count - end - 55),
                                    fileSize: UInt64(archive.count)) == nil)
    }

    @Test func tailMustEndTheFile() {
        let archive = ZipFixtures.stored
        #expect(ZipDirectory.locate(tail: archive, tailOffset: 0, fileSize: UInt64(archive.count)) != nil)
        #expect(ZipDirectory.locate(tail: archive, tailOffset: 1, fileSize: UInt64(archive.count)) == nil)
        #expect(ZipDirectory.locate(tail: archive, tailOffset: .max, fileSize: UInt64(archive.count)) == nil)
    }

    @Test func parseNeedsTheWholeDirectory() throws {
        let (location, _) = try #require(Self.directory(of: ZipFixtures.stored))
        let bytes = Array(ZipFixtures.stored[124..<235])
        #expect(ZipDirectory.parse(Array(bytes.dropLast()), location: location) == nil)
        #expect(ZipDirectory.parse(bytes, location: .init(offset: 124, size: 111, entryCount: 3)) == nil)
        #expect(ZipDirectory.parse(bytes, location: .init(offset: 124, size: .max, entryCount: 2)) == nil)
        #expect(ZipDirectory.parse(bytes, location: .init(offset: 124, size: 111, entryCount: .max)) == nil)
        #expect(ZipDirectory.parse(bytes + [0], location: location)?.entries.count == 2)
    }

    @Test(arguments: [ZipFixtures.stored, ZipFixtures.deflated, ZipFixtures.zip64End, ZipFixtures.infoZipZip64])
    func everyCutNeverTraps(_ archive: [UInt8]) {
        for count in 0..<archive.count {
            // A cut archive reads only when the cut falls in the comment.
            let cut = Array(archive.prefix(count))
            if let (_, directory) = Self.directory(of: cut) { #expect(!directory.entries.isEmpty) }
            _ = ZipDirectory.locate(tail: Array(archive.suffix(count)), tailOffset: UInt64(archive.count - count),
                                    fileSize: UInt64(archive.count))
        }
    }

    @Test func garbageNeverTraps() {
        var garbage = Garbage(state: 0x21_9F1E)
        for _ in 0..<300 {
            var archive = Self.one64.archive
            for _ in 0..<4 {
                let index = Int(garbage.next() % UInt64(archive.count))
                archive[index] = UInt8(truncatingIfNeeded: garbage.next())
            }
            _ = Self.directory(of: archive)
            let noise = garbage.bytes(Int(garbage.next() % 300))
            _ = ZipDirectory.parse(noise, location: .init(offset: 0, size: UInt64(noise.count), entryCount: 1))
            _ = Self.directory(of: noise + ZipDirectory.EndRecord.signature + garbage.bytes(18))
        }
    }
}
