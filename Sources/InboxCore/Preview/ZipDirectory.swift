/// A ZIP archive's central directory, read without inflating anything: which members an iWork document carries, and
/// whether an Office document is a zip bomb (its members' declared sizes against a bound).
public struct ZipDirectory: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        /// The member's name as stored (CP437 or UTF-8; compared as bytes).
        public var name: [UInt8]
        /// 0 stored, 8 deflated, others as the format lists.
        public var method: UInt16
        public var compressedSize: UInt64
        public var uncompressedSize: UInt64
        public var localHeaderOffset: UInt64

        public init(name: [UInt8], method: UInt16, compressedSize: UInt64, uncompressedSize: UInt64,
                    localHeaderOffset: UInt64) {
            self.name = name
            self.method = method
            self.compressedSize = compressedSize
            self.uncompressedSize = uncompressedSize
            self.localHeaderOffset = localHeaderOffset
        }
    }

    /// Where the central directory lies, from the archive's last bytes.
    public struct Location: Sendable, Hashable {
        public var offset: UInt64
        public var size: UInt64
        public var entryCount: UInt64

        public init(offset: UInt64, size: UInt64, entryCount: UInt64) {
            self.offset = offset
            self.size = size
            self.entryCount = entryCount
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) {
        self.entries = entries
    }

    /// How many bytes at the end of a file hold the end record (and a Zip64 locator and record) at most: the 22-byte
    /// end record with a comment of up to 65,535 bytes, the 20-byte locator and the 56-byte Zip64 record before it.
    public static let tailSize = 65_557 + 20 + 56

    /// Finds the end of central directory record (Zip64 where it says so) in `tail`, the file's last bytes, which
    /// start at `tailOffset` of a file of `fileSize` bytes; nil when it is not a ZIP archive or the record is
    /// inconsistent with the file.
    ///
    /// The Zip64 end record must lie within `tail` (a `tailSize` tail always holds one written right before its
    /// locator, as every writer does). Archives spanning disks and archives with bytes prepended to them (whose
    /// offsets are off by that much) are not read.
    public static func locate(tail: [UInt8], tailOffset: UInt64, fileSize: UInt64) -> Location? {
        let (tailEnd, overflow) = tailOffset.addingReportingOverflow(UInt64(tail.count))
        guard !overflow, tailEnd == fileSize, tail.count >= EndRecord.size else { return nil }
        // Backwards, as a comment may itself hold the signature; a candidate that fails the checks is passed over.
        for start in stride(from: tail.count - EndRecord.size, through: 0, by: -1)
        where ByteFields.matches(tail, at: start, EndRecord.signature) {
            if let location = EndRecord(tail, at: start)?.location(tail: tail, tailOffset: tailOffset) {
                return location
            }
        }
        return nil
    }

    /// Parses the central directory's bytes (`location.size` of them from `location.offset`); nil when malformed.
    ///
    /// The directory must hold exactly `location.entryCount` headers and nothing after them, each member's local
    /// header and data must lie before the directory, and Zip64 extra fields must supply every value marked 0xFFFFFFFF.
    public static func parse(_ bytes: [UInt8], location: Location) -> ZipDirectory? {
        guard let size = Int(exactly: location.size), bytes.count >= size else { return nil }
        let directory = Array(bytes[..<size])
        var entries: [Entry] = []
        entries.reserveCapacity(Int(min(location.entryCount, UInt64(size / CentralHeader.size))))
        var offset = 0
        while offset < size {
            guard UInt64(entries.count) < location.entryCount,
                  let (entry, next) = CentralHeader.read(directory, at: offset),
                  entry.fits(before: location.offset)
            else { return nil }
            entries.append(entry)
            offset = next
        }
        guard UInt64(entries.count) == location.entryCount else { return nil }
        return ZipDirectory(entries: entries)
    }

    /// The entry named `name` (compared as bytes), if present.
    public func entry(named name: String) -> Entry? {
        entries.first { $0.name == Array(name.utf8) }
    }

    /// The sum of the members' declared uncompressed sizes (stopping at `UInt64.max`).
    public var totalUncompressedSize: UInt64 {
        entries.reduce(0) { $0.addingReportingOverflow($1.uncompressedSize).overflow ? .max : $0 + $1.uncompressedSize }
    }
}
