/// The ZIP records ZipDirectory reads, as PKWARE's APPNOTE.TXT lays them out (sections 4.3.12, 4.3.14 to 4.3.16,
/// 4.5.3). Every field is read bounds-checked and every sum checked: the archive is untrusted.
extension ZipDirectory {
    /// The end of central directory record, with the Zip64 end record standing in for it when a locator precedes it.
    struct EndRecord {
        static let signature: [UInt8] = [0x50, 0x4B, 0x05, 0x06]
        static let size = 22
        static let locatorSignature: [UInt8] = [0x50, 0x4B, 0x06, 0x07]
        static let locatorSize = 20
        static let zip64Signature: [UInt8] = [0x50, 0x4B, 0x06, 0x06]
        /// The Zip64 record's fixed fields after its signature and its own size field.
        static let zip64FieldsSize: UInt64 = 44

        /// Where the record starts in the tail.
        var start: Int
        var disk: UInt32
        var directoryDisk: UInt32
        var entriesOnDisk: UInt64
        var entryCount: UInt64
        var directorySize: UInt64
        var directoryOffset: UInt64

        /// The record at `start`, when its comment fits in the tail.
        init?(_ tail: [UInt8], at start: Int) {
            guard let disk = ByteFields.uint16LE(tail, at: start + 4),
                  let directoryDisk = ByteFields.uint16LE(tail, at: start + 6),
                  let entriesOnDisk = ByteFields.uint16LE(tail, at: start + 8),
                  let entryCount = ByteFields.uint16LE(tail, at: start + 10),
                  let directorySize = ByteFields.uint32LE(tail, at: start + 12),
                  let directoryOffset = ByteFields.uint32LE(tail, at: start + 16),
                  let commentLength = ByteFields.uint16LE(tail, at: start + 20),
                  tail.count - start - Self.size >= Int(commentLength)
            else { return nil }
            self.start = start
            self.disk = UInt32(disk)
            self.directoryDisk = UInt32(directoryDisk)
            self.entriesOnDisk = UInt64(entriesOnDisk)
            self.entryCount = UInt64(entryCount)
            self.directorySize = UInt64(directorySize)
            self.directoryOffset = UInt64(directoryOffset)
        }

        /// Whether a field holds the value that says "see the Zip64 record".
        var saysZip64: Bool {
            disk == 0xFFFF || directoryDisk == 0xFFFF || entriesOnDisk == 0xFFFF || entryCount == 0xFFFF
                || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF
        }

        /// The directory's place, checked against the file: one disk, the directory before the end records, room
        /// for every entry's fixed-size header.
        func location(tail: [UInt8], tailOffset: UInt64) -> Location? {
            var record = self
            var directoryEnd = tailOffset + UInt64(start)
            let locator = start - Self.locatorSize
            if locator >= 0, ByteFields.matches(tail, at: locator, Self.locatorSignature) {
                if let zip64 = Self.zip64(tail, locator: locator, tailOffset: tailOffset) {
                    (record, directoryEnd) = zip64
                } else if saysZip64 {
                    return nil
                }
                // Otherwise, as Python's zipfile does, the locator led nowhere and the plain record stands.
            }
            let (end, overflow) = record.directoryOffset.addingReportingOverflow(record.directorySize)
            let (least, tooMany) = record.entryCount.multipliedReportingOverflow(by: UInt64(CentralHeader.size))
            guard record.disk == 0, record.directoryDisk == 0, record.entriesOnDisk == record.entryCount,
                  !overflow, end <= directoryEnd, !tooMany, least <= record.directorySize
            else { return nil }
            return Location(offset: record.directoryOffset, size: record.directorySize, entryCount: record.entryCount)
        }

        /// The Zip64 end record the locator points to, with its absolute position; nil unless it lies in the tail,
        /// ends before the locator and carries its signature.
        private static func zip64(_ tail: [UInt8], locator: Int, tailOffset: UInt64) -> (EndRecord, UInt64)? {
            guard let recordDisk = ByteFields.uint32LE(tail, at: locator + 4),
                  let position = ByteFields.uint64LE(tail, at: locator + 8),
                  let disks = ByteFields.uint32LE(tail, at: locator + 16),
                  recordDisk == 0, disks <= 1, position >= tailOffset,
                  let start = Int(exactly: position - tailOffset), start < locator, locator - start >= 56,
                  ByteFields.matches(tail, at: start, zip64Signature),
                  let recordSize = ByteFields.uint64LE(tail, at: start + 4), recordSize >= zip64FieldsSize,
                  recordSize <= UInt64(locator - start - 12),
                  let disk = ByteFields.uint32LE(tail, at: start + 16),
                  let directoryDisk = ByteFields.uint32LE(tail, at: start + 20),
                  let entriesOnDisk = ByteFields.uint64LE(tail, at: start + 24),
                  let entryCount = ByteFields.uint64LE(tail, at: start + 32),
                  let directorySize = ByteFields.uint64LE(tail, at: start + 40),
                  let directoryOffset = ByteFields.uint64LE(tail, at: start + 48)
            else { return nil }
            let record = EndRecord(start: start, disk: disk, directoryDisk: directoryDisk, entriesOnDisk: entriesOnDisk,
                                   entryCount: entryCount, directorySize: directorySize,
                                   directoryOffset: directoryOffset)
            return (record, position)
        }

        private init(start: Int, disk: UInt32, directoryDisk: UInt32, entriesOnDisk: UInt64, entryCount: UInt64,
                     directorySize: UInt64, directoryOffset: UInt64) {
            self.start = start
            self.disk = disk
            self.directoryDisk = directoryDisk
            self.entriesOnDisk = entriesOnDisk
            self.entryCount = entryCount
            self.directorySize = directorySize
            self.directoryOffset = directoryOffset
        }
    }

    /// A central directory file header.
    enum CentralHeader {
        static let signature: [UInt8] = [0x50, 0x4B, 0x01, 0x02]
        static let size = 46
        static let zip64ExtraID: UInt16 = 0x0001

        /// The entry whose header starts at `offset`, and where the next header starts.
        static func read(_ directory: [UInt8], at offset: Int) -> (Entry, Int)? {
            guard ByteFields.matches(directory, at: offset, signature),
                  let method = ByteFields.uint16LE(directory, at: offset + 10),
                  let compressed = ByteFields.uint32LE(directory, at: offset + 20),
                  let uncompressed = ByteFields.uint32LE(directory, at: offset + 24),
                  let nameLength = ByteFields.uint16LE(directory, at: offset + 28),
                  let extraLength = ByteFields.uint16LE(directory, at: offset + 30),
                  let commentLength = ByteFields.uint16LE(directory, at: offset + 32),
                  let localOffset = ByteFields.uint32LE(directory, at: offset + 42)
            else { return nil }
            // Offsets within an array of at most Int.max bytes plus three 16-bit lengths: no overflow.
            let nameStart = offset + size
            let extraStart = nameStart + Int(nameLength)
            let extraEnd = extraStart + Int(extraLength)
            let next = extraEnd + Int(commentLength)
            guard next <= directory.count, let zip64 = zip64Extra(directory, from: extraStart, to: extraEnd) else {
                return nil
            }
            // The Zip64 field holds, in this order, exactly the values whose 32-bit fields are 0xFFFFFFFF.
            var cursor = zip64.lowerBound
            func widened(_ value: UInt32) -> UInt64? {
                guard value == 0xFFFF_FFFF else { return UInt64(value) }
                guard cursor <= zip64.upperBound - 8, let wide = ByteFields.uint64LE(directory, at: cursor) else {
                    return nil
                }
                cursor += 8
                return wide
            }
            guard let uncompressedSize = widened(uncompressed), let compressedSize = widened(compressed),
                  let localHeaderOffset = widened(localOffset)
            else { return nil }
            let entry = Entry(name: Array(directory[nameStart..<extraStart]), method: method,
                              compressedSize: compressedSize, uncompressedSize: uncompressedSize,
                              localHeaderOffset: localHeaderOffset)
            return (entry, next)
        }

        /// The data range of the Zip64 extended information field (empty when there is none); nil when a field
        /// overruns the extra data. Fewer than four bytes left over are padding, as Python's zipfile also reads them.
        private static func zip64Extra(_ bytes: [UInt8], from start: Int, to end: Int) -> Range<Int>? {
            var offset = start
            var found = end..<end
            while end - offset >= 4 {
                guard let id = ByteFields.uint16LE(bytes, at: offset),
                      let length = ByteFields.uint16LE(bytes, at: offset + 2),
                      end - offset - 4 >= Int(length)
                else { return nil }
                if id == zip64ExtraID { found = offset + 4..<offset + 4 + Int(length) }
                offset += 4 + Int(length)
            }
            return found
        }
    }
}

extension ZipDirectory.Entry {
    /// Whether the member's local header (30 bytes at least) and its data lie before the central directory.
    func fits(before directoryOffset: UInt64) -> Bool {
        let (header, overflow) = localHeaderOffset.addingReportingOverflow(30)
        let (end, tooLarge) = header.addingReportingOverflow(compressedSize)
        return !overflow && !tooLarge && end <= directoryOffset
    }
}
