/// A parsed JSON value, for reading what the agent writes (its status file); key order is kept.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// Parses RFC 8259 JSON text; the error is JSON.validate's reason.
    public static func parse(_ bytes: [UInt8]) -> Result<JSONValue, JSONError> {
        if let problem = JSON.validate(bytes) { return .failure(JSONError(message: problem)) }
        var reader = Reader(bytes: bytes)
        return .success(reader.value())
    }

    /// The member of an object, nil for a missing key or another kind of value.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var string: String? { if case .string(let text) = self { text } else { nil } }
    public var number: Double? { if case .number(let value) = self { value } else { nil } }
    public var int: Int? { number.flatMap { $0.isFinite && abs($0) < 9.0e15 ? Int($0) : nil } }
    public var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    public var array: [JSONValue]? { if case .array(let items) = self { items } else { nil } }

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let flag): hasher.combine(flag)
        case .number(let value): hasher.combine(value)
        case .string(let text): hasher.combine(text)
        case .array(let items): hasher.combine(items)
        case .object(let members):
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }

    /// Reads text that JSON.validate accepted (so it needs no error paths of its own; depth is bounded there).
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func skipWhitespace() {
            while offset < bytes.count {
                switch bytes[offset] {
                case 0x20, 0x09, 0x0A, 0x0D: offset += 1
                default: return
                }
            }
        }

        mutating func value() -> JSONValue {
            skipWhitespace()
            switch bytes[offset] {
            case UInt8(ascii: "{"):
                offset += 1
                var members: [(key: String, value: JSONValue)] = []
                skipWhitespace()
                while bytes[offset] != UInt8(ascii: "}") {
                    skipWhitespace()
                    let key = string()
                    skipWhitespace()
                    offset += 1  // ':'
                    members.append((key, value()))
                    skipWhitespace()
                    if bytes[offset] == UInt8(ascii: ",") { offset += 1 }
                    skipWhitespace()
                }
                offset += 1
                return .object(members)
            case UInt8(ascii: "["):
                offset += 1
                var items: [JSONValue] = []
                skipWhitespace()
                while bytes[offset] != UInt8(ascii: "]") {
                    items.append(value())
                    skipWhitespace()
                    if bytes[offset] == UInt8(ascii: ",") { offset += 1 }
                    skipWhitespace()
                }
                offset += 1
                return .array(items)
            case UInt8(ascii: "\""):
                return .string(string())
            case UInt8(ascii: "t"):
                offset += 4
                return .bool(true)
            case UInt8(ascii: "f"):
                offset += 5
                return .bool(false)
            case UInt8(ascii: "n"):
                offset += 4
                return .null
            default:
                let start = offset
                while offset < bytes.count, "+-.0123456789eE".utf8.contains(bytes[offset]) { offset += 1 }
                return .number(Double(String(decoding: bytes[start..<offset], as: UTF8.self)) ?? 0)
            }
        }

        mutating func string() -> String {
            offset += 1  // opening quote
            // Without escapes (most strings), the text between the quotes as it is.
            var end = offset
            while bytes[end] != UInt8(ascii: "\"") && bytes[end] != UInt8(ascii: "\\") { end += 1 }
            if bytes[end] == UInt8(ascii: "\"") {
                defer { offset = end + 1 }
                return String(decoding: bytes[offset..<end], as: UTF8.self)
            }
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll(keepingCapacity: true)
            }
            while bytes[offset] != UInt8(ascii: "\"") {
                guard bytes[offset] == UInt8(ascii: "\\") else {
                    raw.append(bytes[offset])
                    offset += 1
                    continue
                }
                flush()
                let escape = bytes[offset + 1]
                offset += 2
                switch escape {
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = hex4()
                    // A surrogate pair stands for one scalar beyond the BMP.
                    if (0xD800...0xDBFF).contains(code), offset + 1 < bytes.count,
                       bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") {
                        offset += 2
                        let low = hex4()
                        code = 0x10000 + ((code - 0xD800) << 10) + (low & 0x3FF)
                    }
                    scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                default: scalars.append(Unicode.Scalar(escape))
                }
            }
            flush()
            offset += 1
            return String(scalars)
        }

        mutating func hex4() -> UInt32 {
            let text = String(decoding: bytes[offset..<min(offset + 4, bytes.count)], as: UTF8.self)
            offset += 4
            return UInt32(text, radix: 16) ?? 0xFFFD
        }
    }
}

/// Why text is not JSON.
public struct JSONError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
