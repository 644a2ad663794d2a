/// Reads a binary property list (`bplist00`: CoreFoundation's format, which Python's plistlib also writes).
///
/// Layout: the magic, the objects, a table of object offsets, and a 32-byte trailer giving the table's place,
/// its integer size, the size of object references, the object count and the top object. Every offset, count
/// and reference is checked against the file before it is used; a cycle of references, nesting past
/// `PropertyList.maximumDepth` and a graph whose shared references would expand past a bound are errors.
struct BinaryPropertyListReader {
    /// Values the file may expand to: objects can be referenced many times, so a small file could otherwise
    /// describe an enormous tree.
    static let maximumValues = 1 << 18
    /// String and data bytes the file may expand to, for the same reason.
    static let maximumBytes = 1 << 24

    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    /// Where the offset table starts, which is also where the objects must end.
    private let tableStart: Int
    /// The objects being read, from the top object down: a reference to one of them is a cycle.
    private var ancestors: Set<Int> = []
    private var values = 0
    private var payload = 0
    /// Repeated dict keys, each kept as its last value.
    private(set) var warnings: [PropertyListError] = []

    init(_ bytes: [UInt8]) throws(PropertyListError) {
        self.bytes = bytes
        guard bytes.starts(with: Array("bplist00".utf8)) else {
            let version = String(decoding: bytes.dropFirst(6).prefix(2), as: UTF8.self)
            throw PropertyListError("unsupported binary property list version '\(version)'", at: .offset(6))
        }
        // The magic, one object, a one-entry offset table and the trailer.
        guard bytes.count >= 8 + 1 + 1 + 32 else {
            throw PropertyListError("truncated: \(bytes.count) bytes is too short for a binary property list",
                                    at: .offset(0))
        }
        let trailer = bytes.count - 32
        func field(_ position: Int) -> UInt64 { Self.unsigned(bytes, at: trailer + position, size: 8) }
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw PropertyListError("trailer: invalid offset size \(offsetSize) or reference size \(referenceSize)",
                                    at: .offset(trailer))
        }
        // Every object takes at least a byte, so a count above the file size cannot be right (and cannot overflow).
        let count = field(8)
        guard count >= 1, count <= UInt64(trailer) else {
            throw PropertyListError("trailer: object count \(count) does not fit in the file", at: .offset(trailer))
        }
        objectCount = Int(count)
        let top = field(16)
        guard top < count else {
            throw PropertyListError("trailer: top object \(top) is not one of the \(count) objects", at: .offset(trailer))
        }
        topObject = Int(top)
        let table = field(24)
        let (tableSize, overflow) = objectCount.multipliedReportingOverflow(by: offsetSize)
        guard table >= 9, table <= UInt64(trailer), !overflow, Int(table) + tableSize <= trailer else {
            throw PropertyListError("trailer: offset table at \(table) (\(objectCount) entries) lies outside the file",
                                    at: .offset(trailer))
        }
        tableStart = Int(table)
    }

    mutating func read() throws(PropertyListError) -> PropertyListNode {
        try readObject(topObject, depth: 1)
    }

    private mutating func readObject(_ reference: Int, depth: Int) throws(PropertyListError) -> PropertyListNode {
        let entry = tableStart + reference * offsetSize
        let offset64 = Self.unsigned(bytes, at: entry, size: offsetSize)
        guard offset64 >= 8, offset64 < UInt64(tableStart) else {
            throw PropertyListError("object \(reference) has offset \(offset64), outside the objects", at: .offset(entry))
        }
        let offset = Int(offset64)
        let location = PropertyListLocation.offset(offset)
        func failure(_ message: String) -> PropertyListError { PropertyListError(message, at: location) }
        values += 1
        guard values <= Self.maximumValues else {
            throw failure("more than \(Self.maximumValues) values once shared references are expanded")
        }
        let marker = bytes[offset]
        let info = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch info {
            case 0x8: return PropertyListNode(.bool(false), at: location)
            case 0x9: return PropertyListNode(.bool(true), at: location)
            case 0x0: throw failure("null is not a property-list value")
            default: throw failure("unknown object type 0x\(Self.hex(marker))")
            }
        case 0x1:
            guard info <= 4 else { throw failure("integer of \(1 << info) bytes is not supported") }
            let size = 1 << info
            try checkSpan(offset + 1, count: size, unit: 1, location)
            return PropertyListNode(.integer(Self.integer(bytes, at: offset + 1, size: size)), at: location)
        case 0x2:
            guard info == 2 || info == 3 else { throw failure("real of \(1 << info) bytes is not supported") }
            try checkSpan(offset + 1, count: 1 << info, unit: 1, location)
            let bits = Self.unsigned(bytes, at: offset + 1, size: 1 << info)
            let value = info == 2 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits))) : Double(bitPattern: bits)
            return PropertyListNode(.real(value), at: location)
        case 0x3:
            guard info == 3 else { throw failure("unknown object type 0x\(Self.hex(marker))") }
            try checkSpan(offset + 1, count: 8, unit: 1, location)
            let seconds = Double(bitPattern: Self.unsigned(bytes, at: offset + 1, size: 8))
            return PropertyListNode(.date(seconds), at: location)
        case 0x4:
            let (start, count) = try span(offset, info: info, unit: 1)
            try charge(count, location)
            return PropertyListNode(.data(Array(bytes[start..<start + count])), at: location)
        case 0x5:
            let (start, count) = try span(offset, info: info, unit: 1)
            try charge(count, location)
            let text = bytes[start..<start + count]
            guard !text.contains(where: { $0 >= 0x80 }) else { throw failure("ASCII string holds a non-ASCII byte") }
            return PropertyListNode(.string(String(decoding: text, as: UTF8.self)), at: location)
        case 0x6:
            let (start, count) = try span(offset, info: info, unit: 2)
            try charge(count * 2, location)
            let units = (0..<count).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
            guard let text = String(validating: units, as: UTF16.self) else {
                throw failure("string is not valid UTF-16")
            }
            return PropertyListNode(.string(text), at: location)
        case 0x8:
            guard info < 8 else { throw failure("UID of \(info + 1) bytes is not supported") }
            try checkSpan(offset + 1, count: info + 1, unit: 1, location)
            return PropertyListNode(.uid(Self.unsigned(bytes, at: offset + 1, size: info + 1)), at: location)
        case 0xA, 0xB, 0xC:
            return PropertyListNode(.array(try readArray(offset, reference: reference, info: info, depth: depth)),
                                    at: location)
        case 0xD:
            return PropertyListNode(.dict(try readDict(offset, reference: reference, info: info, depth: depth)),
                                    at: location)
        default:
            throw failure("unknown object type 0x\(Self.hex(marker))")
        }
    }

    private mutating func readArray(_ offset: Int, reference: Int, info: Int,
                                    depth: Int) throws(PropertyListError) -> [PropertyListNode] {
        let references = try enterContainer(offset, reference: reference, info: info, depth: depth, multiple: 1)
        var elements: [PropertyListNode] = []
        for child in references { elements.append(try readObject(child, depth: depth + 1)) }
        ancestors.remove(reference)
        return elements
    }

    private mutating func readDict(_ offset: Int, reference: Int, info: Int,
                                   depth: Int) throws(PropertyListError) -> [PropertyListEntry] {
        let references = try enterContainer(offset, reference: reference, info: info, depth: depth, multiple: 2)
        let count = references.count / 2
        var entries: [PropertyListEntry] = []
        var seen: [String: Int] = [:]
        for index in 0..<count {
            let key = try readObject(references[index], depth: depth + 1)
            guard case .string(let name) = key.value else {
                throw PropertyListError("dict key is \(key.value.kind), not a string", at: key.location)
            }
            let value = try readObject(references[count + index], depth: depth + 1)
            // CoreFoundation keeps the last of repeated keys; so do we, and say so.
            if let first = seen[name] {
                warnings.append(PropertyListError("duplicate key '\(name.visible)': the last one is used",
                                                  at: key.location))
                entries.remove(at: first)
                for (other, position) in seen where position > first { seen[other] = position - 1 }
            }
            seen[name] = entries.count
            entries.append(PropertyListEntry(key: name, at: key.location, value: value))
        }
        ancestors.remove(reference)
        return entries
    }

    /// Checks depth and cycles, marks the container as being read, and returns its references
    /// (`multiple` per element: a dict lists its keys, then its values).
    private mutating func enterContainer(_ offset: Int, reference: Int, info: Int, depth: Int,
                                         multiple: Int) throws(PropertyListError) -> [Int] {
        let location = PropertyListLocation.offset(offset)
        guard depth <= PropertyList.maximumDepth else {
            throw PropertyListError("nested deeper than \(PropertyList.maximumDepth) levels", at: location)
        }
        guard ancestors.insert(reference).inserted else {
            throw PropertyListError("reference cycle: object \(reference) contains itself", at: location)
        }
        let (start, count) = try span(offset, info: info, unit: referenceSize * multiple)
        var references: [Int] = []
        references.reserveCapacity(count * multiple)
        for index in 0..<count * multiple {
            let child = Self.unsigned(bytes, at: start + index * referenceSize, size: referenceSize)
            guard child < UInt64(objectCount) else {
                throw PropertyListError("reference \(child) is not one of the \(objectCount) objects", at: location)
            }
            references.append(Int(child))
        }
        return references
    }

    /// The start and element count of a variable-length object: the count is the marker's low nibble, or when
    /// that is 0xF, an integer object that follows the marker. Checks that `count * unit` bytes are there.
    private func span(_ offset: Int, info: Int, unit: Int) throws(PropertyListError) -> (start: Int, count: Int) {
        let location = PropertyListLocation.offset(offset)
        guard info == 0xF else {
            try checkSpan(offset + 1, count: info, unit: unit, location)
            return (offset + 1, info)
        }
        try checkSpan(offset + 1, count: 1, unit: 1, location)
        let marker = bytes[offset + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw PropertyListError("invalid length marker 0x\(Self.hex(marker))", at: location)
        }
        let size = 1 << Int(marker & 0x0F)
        try checkSpan(offset + 2, count: size, unit: 1, location)
        let count = Self.unsigned(bytes, at: offset + 2, size: size)
        guard count <= UInt64(tableStart) else {
            throw PropertyListError("length \(count) runs past the end of the objects", at: location)
        }
        try checkSpan(offset + 2 + size, count: Int(count), unit: unit, location)
        return (offset + 2 + size, Int(count))
    }

    /// Checks that `count` items of `unit` bytes from `start` lie before the offset table.
    private func checkSpan(_ start: Int, count: Int, unit: Int,
                           _ location: PropertyListLocation) throws(PropertyListError) {
        let (size, overflow) = count.multipliedReportingOverflow(by: unit)
        guard !overflow, start <= tableStart, size <= tableStart - start else {
            throw PropertyListError("object runs past the end of the objects (truncated?)", at: location)
        }
    }

    private mutating func charge(_ count: Int, _ location: PropertyListLocation) throws(PropertyListError) {
        payload += count
        guard payload <= Self.maximumBytes else {
            throw PropertyListError("more than \(Self.maximumBytes) bytes of strings and data once shared references "
                                    + "are expanded", at: location)
        }
    }

    /// A big-endian unsigned integer of 1 to 8 bytes; the caller has checked the bounds.
    private static func unsigned(_ bytes: [UInt8], at start: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<start + size { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    /// An integer object's value: 1, 2 and 4 bytes are unsigned, 8 and 16 bytes signed (as CoreFoundation reads them).
    private static func integer(_ bytes: [UInt8], at start: Int, size: Int) -> Int128 {
        switch size {
        case 16:
            let high = Int64(bitPattern: unsigned(bytes, at: start, size: 8))
            return Int128(high) << 64 | Int128(unsigned(bytes, at: start + 8, size: 8))
        case 8:
            return Int128(Int64(bitPattern: unsigned(bytes, at: start, size: 8)))
        default:
            return Int128(unsigned(bytes, at: start, size: size))
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }
}
