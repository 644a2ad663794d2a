/// Where a property-list value was found: a line of an XML file, or a byte offset in a binary one.
public enum PropertyListLocation: Sendable, Hashable, CustomStringConvertible {
    /// 1-based line of the value's start tag (XML).
    case line(Int)
    /// Byte offset of the object in the file (binary, which has no lines).
    case offset(Int)

    /// `line 12` or `offset 4096`.
    public var description: String {
        switch self {
        case .line(let line): "line \(line)"
        case .offset(let offset): "offset \(offset)"
        }
    }
}

/// One value of a property list and where it was found.
public struct PropertyListNode: Sendable, Hashable {
    /// The value.
    public var value: PropertyListValue
    /// Where its element (XML) or object (binary) starts.
    public var location: PropertyListLocation

    /// Creates a node.
    public init(_ value: PropertyListValue, at location: PropertyListLocation) {
        self.value = value
        self.location = location
    }
}

/// One key of a dict with its value; keys keep their own location, and dicts keep file order.
public struct PropertyListEntry: Sendable, Hashable {
    /// The key's text.
    public var key: String
    /// Where the key is (`<key>` element or string object).
    public var keyLocation: PropertyListLocation
    /// The value.
    public var value: PropertyListNode

    /// Creates an entry.
    public init(key: String, at keyLocation: PropertyListLocation, value: PropertyListNode) {
        self.key = key
        self.keyLocation = keyLocation
        self.value = value
    }
}

/// The values a property list can hold (XML and binary `bplist00`).
public enum PropertyListValue: Sendable, Hashable {
    case string(String)
    /// Integers from Int64.min to UInt64.max (both formats store unsigned 64-bit values above Int64.max).
    case integer(Int128)
    case real(Double)
    case bool(Bool)
    /// Seconds since 2001-01-01T00:00:00Z, as both formats store dates.
    case date(Double)
    case data([UInt8])
    /// Binary sets and ordered sets are read as arrays.
    case array([PropertyListNode])
    case dict([PropertyListEntry])
    /// A binary plist UID (NSKeyedArchiver's object references); XML has none.
    case uid(UInt64)

    /// The kind with an article, for messages: "a string", "an array".
    public var kind: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .real: "a real"
        case .bool: "a boolean"
        case .date: "a date"
        case .data: "data"
        case .array: "an array"
        case .dict: "a dict"
        case .uid: "a UID"
        }
    }
}

extension PropertyListNode {
    /// The entry for `key` in a dict, if this is a dict and has it.
    public subscript(key: String) -> PropertyListEntry? {
        guard case .dict(let entries) = value else { return nil }
        return entries.first { $0.key == key }
    }
}

/// Why bytes are not a property list, and where.
public struct PropertyListError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A short phrase.
    public let message: String
    /// Where the problem is: a line (XML) or a byte offset (binary).
    public let location: PropertyListLocation

    /// Creates an error.
    public init(_ message: String, at location: PropertyListLocation) {
        self.message = message
        self.location = location
    }

    /// `line 3: message` or `offset 40: message`.
    public var description: String { "\(location): \(message)" }
}
