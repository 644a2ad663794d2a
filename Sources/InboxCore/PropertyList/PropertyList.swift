/// Reads property lists, XML or binary (`bplist00`), without Foundation.
///
/// Input is untrusted: every size, offset and count is checked, nesting is bounded, reference cycles and
/// exponential sharing in binary files are errors, and no input makes the reader trap.
public enum PropertyList {
    /// Arrays and dicts nested deeper than this are rejected; the readers recurse once per level.
    public static let maximumDepth = 64

    /// Parses a whole file: binary if it starts with `bplist`, XML otherwise; what was accepted but is worth
    /// saying (a repeated dict key) is left out.
    public static func parse(_ bytes: [UInt8]) throws(PropertyListError) -> PropertyListNode {
        var warnings: [PropertyListError] = []
        return try parse(bytes, warnings: &warnings)
    }

    /// Parses a whole file, adding to `warnings` what CoreFoundation accepts but a reader should hear about: a key
    /// repeated in a dict (the last one is kept, as CoreFoundation and plistlib keep it).
    public static func parse(_ bytes: [UInt8],
                             warnings: inout [PropertyListError]) throws(PropertyListError) -> PropertyListNode {
        if isBinary(bytes) {
            var reader = try BinaryPropertyListReader(bytes)
            defer { warnings += reader.warnings }
            return try reader.read()
        }
        var reader = try XMLPropertyListReader(transcoding: bytes)
        defer { warnings += reader.warnings }
        return try reader.read()
    }

    /// True if the bytes start with the binary property list magic `bplist` (any version).
    public static func isBinary(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x62, 0x70, 0x6C, 0x69, 0x73, 0x74])
    }
}
