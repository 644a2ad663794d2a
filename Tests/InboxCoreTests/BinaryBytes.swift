/// Byte builders for the binary readers' tests (PNG, ZIP, image headers): fixtures as hex, fields in either order.
enum BinaryBytes {
    /// The bytes of a hex string; whitespace is ignored, so fixtures can be wrapped.
    static func hex(_ text: String) -> [UInt8] {
        let digits = text.compactMap(\.hexDigitValue)
        precondition(digits.count % 2 == 0, "odd number of hex digits in a fixture")
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(digits[$0] << 4 | digits[$0 + 1]) }
    }

    static func le16(_ value: UInt16) -> [UInt8] { little(UInt64(value), 2) }
    static func le32(_ value: UInt32) -> [UInt8] { little(UInt64(value), 4) }
    static func le64(_ value: UInt64) -> [UInt8] { little(value, 8) }
    static func be16(_ value: UInt16) -> [UInt8] { little(UInt64(value), 2).reversed() }
    static func be32(_ value: UInt32) -> [UInt8] { little(UInt64(value), 4).reversed() }

    /// `bytes` with `field` written over it at `offset`.
    static func patched(_ bytes: [UInt8], at offset: Int, _ field: [UInt8]) -> [UInt8] {
        var copy = bytes
        copy.replaceSubrange(offset..<offset + field.count, with: field)
        return copy
    }

    private static func little(_ value: UInt64, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64($0 * 8)) }
    }
}
