/// The small amount of JSON the agent needs: validating annotations and writing string literals.
public enum JSON {
    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 64

    /// Validates RFC 8259 JSON text (UTF-8); nil if valid, else a short reason with the byte offset.
    public static func validate(_ bytes: [UInt8]) -> String? {
        var validator = JSONValidator(bytes: bytes)
        do throws(JSONValidator.Failure) {
            validator.skipWhitespace()
            guard validator.offset < bytes.count else { throw JSONValidator.Failure("empty JSON text", at: validator.offset) }
            try validator.value(depth: 0)
            validator.skipWhitespace()
            guard validator.offset == bytes.count else {
                throw JSONValidator.Failure("unexpected data after the JSON value", at: validator.offset)
            }
            return nil
        } catch {
            return "\(error.message) at byte \(error.offset)"
        }
    }

    /// A JSON string literal: quotes, backslash escapes for `"` and `\`, \n \r \t \b \f, and \u00XX for other
    /// control characters.
    public static func quote(_ s: String) -> String {
        var bytes: [UInt8] = []
        appendQuoted(s, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `quote(s)`, appended to a document being written as bytes: what the agent writes per delivery, without a
    /// string built for each value.
    public static func appendQuoted(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        // Most strings (paths, identifiers) need no escaping: copied whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out += s.utf8
            out.append(0x22)
            return
        }
        for byte in s.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]  // \"
            case 0x5C: out += [0x5C, 0x5C]  // \\
            case 0x0A: out += [0x5C, 0x6E]  // \n
            case 0x0D: out += [0x5C, 0x72]  // \r
            case 0x09: out += [0x5C, 0x74]  // \t
            case 0x08: out += [0x5C, 0x62]  // \b
            case 0x0C: out += [0x5C, 0x66]  // \f
            case 0x00..<0x20:
                out += [0x5C, 0x75, 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]  // \u00XX
            default:
                // Every other byte of the UTF-8 text as it is: a multi-byte scalar's bytes are all 0x80 or more.
                out.append(byte)
            }
        }
        out.append(0x22)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

/// A JSON document written as bytes as it is built, for the documents the agent writes per delivery (a handler's
/// stdin, a cluster's delivery message): literal pieces, strings quoted (`JSON.appendQuoted`) or `null`, arrays of
/// strings, integers and booleans, without a string built for each value.
struct JSONBytes {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Text written as it stands: punctuation and member names (`,"name":`).
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes += $0 }
    }

    /// Bytes written as they stand (JSON text already checked, such as a valid annotation).
    mutating func raw(_ text: [UInt8]) {
        bytes += text
    }

    /// A string literal, or `null`.
    mutating func string(_ value: String?) {
        if let value { JSON.appendQuoted(value, to: &bytes) } else { raw("null") }
    }

    /// An array of string literals.
    mutating func strings(_ values: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSON.appendQuoted(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// An integer, or `null`.
    mutating func integer(_ value: (some BinaryInteger)?) {
        if let value { bytes += String(value).utf8 } else { raw("null") }
    }

    /// `true` or `false`.
    mutating func boolean(_ value: Bool) {
        raw(value ? "true" : "false")
    }
}
