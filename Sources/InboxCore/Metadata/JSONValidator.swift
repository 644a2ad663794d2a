/// A recursive-descent RFC 8259 checker; recursion is bounded by JSON.maximumDepth.
struct JSONValidator {
    struct Failure: Error {
        let message: String
        let offset: Int
        init(_ message: String, at offset: Int) {
            self.message = message
            self.offset = offset
        }
    }

    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    private func unexpected() -> Failure {
        guard offset < bytes.count else { return Failure("unexpected end of input", at: offset) }
        let byte = bytes[offset]
        let hex = String(byte, radix: 16, uppercase: true)
        return Failure("unexpected byte 0x\(byte < 16 ? "0" : "")\(hex)", at: offset)
    }

    mutating func value(depth: Int) throws(Failure) {
        guard offset < bytes.count else { throw unexpected() }
        switch bytes[offset] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < JSON.maximumDepth else {
                throw Failure("nesting deeper than \(JSON.maximumDepth)", at: offset)
            }
            try container(depth: depth + 1)
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw unexpected()
        }
    }

    private mutating func container(depth: Int) throws(Failure) {
        let isObject = bytes[offset] == UInt8(ascii: "{")
        let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        offset += 1
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == close {
            offset += 1
            return
        }
        while true {
            if isObject {
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw unexpected() }
                try string()
                skipWhitespace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw unexpected() }
                offset += 1
                skipWhitespace()
            }
            try value(depth: depth)
            skipWhitespace()
            guard offset < bytes.count else { throw unexpected() }
            if bytes[offset] == close {
                offset += 1
                return
            }
            guard bytes[offset] == UInt8(ascii: ",") else { throw unexpected() }
            offset += 1
            skipWhitespace()
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        for expected in word.utf8 {
            guard offset < bytes.count, bytes[offset] == expected else { throw unexpected() }
            offset += 1
        }
    }

    private mutating func digits() -> Int {
        let start = offset
        while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
        return offset - start
    }

    private mutating func number() throws(Failure) {
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 else { throw unexpected() }
        if bytes[offset] == UInt8(ascii: "0") { offset += 1 } else { _ = digits() }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw unexpected() }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard digits() > 0 else { throw unexpected() }
        }
    }

    fileprivate mutating func string() throws(Failure) {
        let start = offset
        offset += 1
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return
            case UInt8(ascii: "\\"):
                offset += 1
                guard offset < bytes.count else { throw Failure("unterminated string", at: start) }
                switch bytes[offset] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    offset += 1
                case UInt8(ascii: "u"):
                    offset += 1
                    for _ in 0..<4 {
                        guard offset < bytes.count, isHexDigit(bytes[offset]) else {
                            throw Failure("invalid \\u escape", at: offset)
                        }
                        offset += 1
                    }
                default:
                    throw Failure("invalid escape", at: offset - 1)
                }
            case 0x00..<0x20:
                throw Failure("control character in string", at: offset)
            case 0x80...:
                try utf8Sequence()
            default:
                offset += 1
            }
        }
        throw Failure("unterminated string", at: start)
    }

    private func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    /// One multi-byte UTF-8 sequence per RFC 3629 table 3-7: no overlongs, no surrogates, nothing past U+10FFFF.
    private mutating func utf8Sequence() throws(Failure) {
        let lead = bytes[offset]
        let failure = Failure("invalid UTF-8", at: offset)
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw failure
        }
        guard offset + length <= bytes.count else { throw failure }
        for index in 1..<length {
            let byte = bytes[offset + index]
            let (min, max) = index == 1 ? (low, high) : (0x80, 0xBF)
            guard byte >= min && byte <= max else { throw failure }
        }
        offset += length
    }
}

extension JSON {
    /// The members of a top-level JSON object, each value as its raw text (so a number or an embedded
    /// document is passed on exactly as written). nil if the text is valid JSON but not an object.
    public static func members(_ bytes: [UInt8]) -> Result<[(key: String, raw: [UInt8])]?, JSONError> {
        if let problem = validate(bytes) { return .failure(JSONError(message: problem)) }
        var walker = JSONValidator(bytes: bytes)
        walker.skipWhitespace()
        guard bytes[walker.offset] == UInt8(ascii: "{") else { return .success(nil) }
        walker.offset += 1
        var members: [(key: String, raw: [UInt8])] = []
        // The text is valid, so the walk below needs no error paths of its own.
        while true {
            walker.skipWhitespace()
            if bytes[walker.offset] == UInt8(ascii: "}") { break }
            if bytes[walker.offset] == UInt8(ascii: ",") {
                walker.offset += 1
                walker.skipWhitespace()
            }
            let keyStart = walker.offset
            try? walker.string()
            let key = (try? JSONValue.parse(Array(bytes[keyStart..<walker.offset])).get())?.string ?? ""
            walker.skipWhitespace()
            walker.offset += 1  // ':'
            walker.skipWhitespace()
            let valueStart = walker.offset
            try? walker.value(depth: 1)
            members.append((key, Array(bytes[valueStart..<walker.offset])))
        }
        return .success(members)
    }
}
