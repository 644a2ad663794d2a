import Testing
@testable import InboxCore

/// An input the property-list reader must reject, and the error it must give.
struct PropertyListErrorCase: Sendable, CustomTestStringConvertible {
    let name: String
    let input: [UInt8]
    let error: String
    var testDescription: String { name }
}

/// A value wrapped in the standard XML header: line 1 declaration, 2 DOCTYPE, 3 `<plist>`, 4 the value.
func xml(_ body: String) -> [UInt8] {
    lines("<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
          "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">",
          "<plist version=\"1.0\">", body, "</plist>", "")
}

/// A hand-made `bplist00`: the objects in order after the magic, an offset table and the trailer; each field can
/// be overridden to make it wrong.
func bplist(_ objects: [[UInt8]], top: UInt64 = 0, offsetSize: UInt8 = 1, referenceSize: UInt8 = 1,
            count: UInt64? = nil, table: UInt64? = nil, offsets: [Int]? = nil) -> [UInt8] {
    func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
    }
    var bytes = Array("bplist00".utf8)
    var starts: [Int] = []
    for object in objects {
        starts.append(bytes.count)
        bytes += object
    }
    let tableStart = bytes.count
    for start in offsets ?? starts { bytes += bigEndian(UInt64(start), max(Int(offsetSize), 1)) }
    bytes += [0, 0, 0, 0, 0, 0, offsetSize, referenceSize]
    bytes += bigEndian(count ?? UInt64(objects.count), 8) + bigEndian(top, 8) + bigEndian(table ?? UInt64(tableStart), 8)
    return bytes
}

/// A node at a placeholder location, for comparing values without their places.
func node(_ value: PropertyListValue) -> PropertyListNode { PropertyListNode(value, at: .offset(0)) }

/// The value with every location (of nested nodes and keys) replaced by a placeholder, and dict keys sorted.
func stripped(_ value: PropertyListValue?) -> PropertyListValue? {
    guard let value else { return nil }
    switch value {
    case .array(let elements):
        return .array(elements.map { node(stripped($0.value)!) })
    case .dict(let entries):
        // Sorted too: plistlib writes binary dicts in key order.
        return .dict(entries.sorted { $0.key < $1.key }.map {
            PropertyListEntry(key: $0.key, at: .offset(0), value: node(stripped($0.value.value)!))
        })
    default:
        return value
    }
}
