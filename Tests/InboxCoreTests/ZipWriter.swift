@testable import InboxCore

/// A small ZIP writer for the tests: stored members, their local headers, the central directory and the end record,
/// as APPNOTE.TXT lays them out; with `zip64`, every size and offset goes through Zip64 extra fields and end records.
struct ZipWriter {
    typealias B = BinaryBytes

    struct Member {
        var name: String
        var data: [UInt8]
    }

    let archive: [UInt8]
    let entries: [ZipDirectory.Entry]
    let location: ZipDirectory.Location
    let directoryOffset: Int
    /// Where the Zip64 end record and its locator start (zip64 only), and the end record.
    let zip64RecordOffset: Int
    let locatorOffset: Int
    let endOffset: Int

    init(members: [Member], comment: [UInt8] = [], zip64: Bool = false) {
        var archive: [UInt8] = []
        var central: [UInt8] = []
        var entries: [ZipDirectory.Entry] = []
        for member in members {
            let name = Array(member.name.utf8)
            let size = UInt32(member.data.count)
            let crc = CRC32.checksum(member.data)
            let offset = UInt32(archive.count)
            archive += [0x50, 0x4B, 0x03, 0x04] + B.le16(20) + B.le16(0) + B.le16(0) + B.le32(0) + B.le32(crc)
            archive += B.le32(size) + B.le32(size) + B.le16(UInt16(name.count)) + B.le16(0) + name + member.data
            let extra = zip64 ? B.le16(1) + B.le16(24) + B.le64(UInt64(size)) + B.le64(UInt64(size))
                + B.le64(UInt64(offset)) : []
            let (sizeField, offsetField) = zip64 ? (UInt32.max, UInt32.max) : (size, offset)
            central += [0x50, 0x4B, 0x01, 0x02] + B.le16(0x031E) + B.le16(zip64 ? 45 : 20) + B.le16(0) + B.le16(0)
            central += B.le32(0) + B.le32(crc) + B.le32(sizeField) + B.le32(sizeField) + B.le16(UInt16(name.count))
            central += B.le16(UInt16(extra.count)) + B.le16(0) + B.le16(0) + B.le16(0) + B.le32(0)
            central += B.le32(offsetField) + name + extra
            entries.append(.init(name: name, method: 0, compressedSize: UInt64(size), uncompressedSize: UInt64(size),
                                 localHeaderOffset: UInt64(offset)))
        }
        directoryOffset = archive.count
        archive += central
        let count = UInt64(members.count)
        zip64RecordOffset = archive.count
        if zip64 {
            archive += [0x50, 0x4B, 0x06, 0x06] + B.le64(44) + B.le16(45) + B.le16(45) + B.le32(0) + B.le32(0)
            archive += B.le64(count) + B.le64(count) + B.le64(UInt64(central.count)) + B.le64(UInt64(directoryOffset))
        }
        locatorOffset = archive.count
        if zip64 {
            archive += [0x50, 0x4B, 0x06, 0x07] + B.le32(0) + B.le64(UInt64(zip64RecordOffset)) + B.le32(1)
        }
        endOffset = archive.count
        let count16 = zip64 ? UInt16.max : UInt16(count)
        archive += [0x50, 0x4B, 0x05, 0x06] + B.le16(0) + B.le16(0) + B.le16(count16) + B.le16(count16)
        archive += B.le32(zip64 ? .max : UInt32(central.count)) + B.le32(zip64 ? .max : UInt32(directoryOffset))
        archive += B.le16(UInt16(comment.count)) + comment
        self.archive = archive
        self.entries = entries
        location = .init(offset: UInt64(directoryOffset), size: UInt64(central.count), entryCount: count)
    }

    /// The archive with `field` written at `offset` of the end record.
    func patchingEnd(_ offset: Int, _ field: [UInt8]) -> [UInt8] {
        B.patched(archive, at: endOffset + offset, field)
    }

    /// The archive with `field` written at `offset` of the first central directory header.
    func patchingCentral(_ offset: Int, _ field: [UInt8]) -> [UInt8] {
        B.patched(archive, at: directoryOffset + offset, field)
    }

    func patchingZip64Record(_ offset: Int, _ field: [UInt8]) -> [UInt8] {
        B.patched(archive, at: zip64RecordOffset + offset, field)
    }

    func patchingLocator(_ offset: Int, _ field: [UInt8]) -> [UInt8] {
        B.patched(archive, at: locatorOffset + offset, field)
    }
}
