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

    /// How many bytes at the end of a file hold the end record (and a Zip64 locator) at most.
    public static let tailSize = 65_557 + 20

    /// Finds the end of central directory record (Zip64 where it says so) in `tail`, the file's last bytes, which
    /// start at `tailOffset` of a file of `fileSize` bytes; nil when it is not a ZIP archive or the record is
    /// inconsistent with the file.
    public static func locate(tail: [UInt8], tailOffset: UInt64, fileSize: UInt64) -> Location? {
        fatalError("ZipDirectory.locate: to be written")
    }

    /// Parses the central directory's bytes (`location.size` of them from `location.offset`); nil when malformed.
    public static func parse(_ bytes: [UInt8], location: Location) -> ZipDirectory? {
        fatalError("ZipDirectory.parse: to be written")
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
