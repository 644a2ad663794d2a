/// Fixed-width integers read out of untrusted bytes: every read is bounds-checked and answers nil past the end, so
/// the binary readers (PNG, ZIP, image headers) never trap on a cut or lying file.
enum ByteFields {
    static func uint8(_ bytes: [UInt8], at offset: Int) -> UInt8? {
        offset >= 0 && offset < bytes.count ? bytes[offset] : nil
    }

    static func uint16BE(_ bytes: [UInt8], at offset: Int) -> UInt16? {
        field(bytes, at: offset, width: 2, bigEndian: true).map { UInt16(truncatingIfNeeded: $0) }
    }

    static func uint16LE(_ bytes: [UInt8], at offset: Int) -> UInt16? {
        field(bytes, at: offset, width: 2, bigEndian: false).map { UInt16(truncatingIfNeeded: $0) }
    }

    static func uint24LE(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        field(bytes, at: offset, width: 3, bigEndian: false).map { UInt32(truncatingIfNeeded: $0) }
    }

    static func uint32BE(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        field(bytes, at: offset, width: 4, bigEndian: true).map { UInt32(truncatingIfNeeded: $0) }
    }

    static func uint32LE(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        field(bytes, at: offset, width: 4, bigEndian: false).map { UInt32(truncatingIfNeeded: $0) }
    }

    static func uint64LE(_ bytes: [UInt8], at offset: Int) -> UInt64? {
        field(bytes, at: offset, width: 8, bigEndian: false)
    }

    /// Whether `bytes` holds `expected` at `offset`.
    static func matches(_ bytes: [UInt8], at offset: Int, _ expected: [UInt8]) -> Bool {
        guard offset >= 0, offset <= bytes.count, bytes.count - offset >= expected.count else { return false }
        return bytes[offset..<offset + expected.count].elementsEqual(expected)
    }

    private static func field(_ bytes: [UInt8], at offset: Int, width: Int, bigEndian: Bool) -> UInt64? {
        guard offset >= 0, offset <= bytes.count, bytes.count - offset >= width else { return nil }
        var value: UInt64 = 0
        for index in 0..<width {
            let byte = UInt64(bytes[bigEndian ? offset + index : offset + width - 1 - index])
            value = value << 8 | byte
        }
        return value
    }
}
