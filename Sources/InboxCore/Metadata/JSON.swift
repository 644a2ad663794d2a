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
        // Most strings (paths, identifiers) need no escaping: skip the per-scalar work.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) { return "\"" + s + "\"" }
        var result = "\""
        result.reserveCapacity(s.utf8.count + 2)
        let hex: [Character] = Array("0123456789abcdef")
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case "\u{00}"..."\u{1F}":
                result += "\\u00"
                result.append(hex[Int(scalar.value >> 4)])
                result.append(hex[Int(scalar.value & 0xF)])
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        result += "\""
        return result
    }
}
