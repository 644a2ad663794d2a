/// The text forms of XML property-list scalars: `<integer>`, `<real>`, `<date>` and `<data>` (base64).
enum PropertyListText {
    /// Decimal or `0x` hexadecimal with an optional sign, from Int64.min to UInt64.max (what CoreFoundation accepts).
    static func integer(_ text: String) -> Int128? {
        var digits = Substring(text)
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        var radix: Int128 = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        }
        guard !digits.isEmpty else { return nil }
        var magnitude: Int128 = 0
        for character in digits.unicodeScalars {
            guard let digit = digitValue(character), digit < radix else { return nil }
            magnitude = magnitude * radix + digit
            // Past UInt64.max nothing is valid; stopping here also keeps Int128 from overflowing.
            guard magnitude <= Int128(UInt64.max) else { return nil }
        }
        let value = negative ? -magnitude : magnitude
        return value >= Int128(Int64.min) ? value : nil
    }

    private static func digitValue(_ scalar: Unicode.Scalar) -> Int128? {
        switch scalar.value {
        case 0x30...0x39: Int128(scalar.value - 0x30)
        case 0x41...0x46: Int128(scalar.value - 0x41 + 10)
        case 0x61...0x66: Int128(scalar.value - 0x61 + 10)
        default: nil
        }
    }

    /// A real: decimal or exponent notation, `nan`, `inf`, `infinity`, with an optional sign.
    static func real(_ text: String) -> Double? {
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.isASCII && $0 != " " }) else { return nil }
        return Double(text)
    }

    /// ISO 8601 in UTC as the plist DTD has it, `2001-01-01T00:00:00Z`; like plistlib, the trailing fields may
    /// be left out (`2001-01-01Z`). Returns seconds since 2001-01-01T00:00:00Z.
    static func date(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.last == UInt8(ascii: "Z") else { return nil }
        // Fields and the separator that precedes each: year, -month, -day, Thour, :minute, :second.
        let separators: [UInt8?] = [nil, UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "T"), UInt8(ascii: ":"),
                                    UInt8(ascii: ":")]
        var fields = [2001, 1, 1, 0, 0, 0]
        var index = 0
        for (field, separator) in separators.enumerated() {
            if field > 0 && index == bytes.count - 1 { break }
            if let separator {
                guard bytes[index] == separator else { return nil }
                index += 1
            }
            let width = field == 0 ? 4 : 2
            guard index + width < bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + width] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            fields[field] = value
            index += width
        }
        guard index == bytes.count - 1 else { return nil }
        let (year, month, day, hour, minute, second) = (fields[0], fields[1], fields[2], fields[3], fields[4], fields[5])
        guard (1...12).contains(month), (1...daysIn(month, of: year)).contains(day), hour < 24, minute < 60,
              second < 60 else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day) - daysSinceEpoch(year: 2001, month: 1, day: 1)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Base64 (RFC 4648 alphabet, padded to a multiple of four); whitespace anywhere is skipped.
    static func base64(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var pending = 0
        var padding = 0
        for byte in text.utf8 {
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { continue }
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let sextet = sextet(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(sextet)
            pending += 1
            if pending == 4 {
                output += [UInt8(accumulator >> 16), UInt8(accumulator >> 8 & 0xFF), UInt8(accumulator & 0xFF)]
                accumulator = 0
                pending = 0
            }
        }
        // A final group of 2 or 3 characters carries 1 or 2 bytes and needs 2 or 1 '=' to make four.
        switch (pending, padding) {
        case (0, 0):
            return output
        case (2, 2):
            return output + [UInt8(accumulator >> 4 & 0xFF)]
        case (3, 1):
            return output + [UInt8(accumulator >> 10 & 0xFF), UInt8(accumulator >> 2 & 0xFF)]
        default:
            return nil
        }
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x41...0x5A: byte - 0x41
        case 0x61...0x7A: byte - 0x61 + 26
        case 0x30...0x39: byte - 0x30 + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
