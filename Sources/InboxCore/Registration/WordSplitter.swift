/// Why a line could not be split into words.
struct WordSplitError: Error, Sendable {
    let message: String
}

/// Splits text into words the way systemd splits Exec= and Environment= (systemd.service(7), "Command lines"):
/// whitespace separates words, single and double quotes group, C-style backslash escapes work everywhere.
enum WordSplitter {
    static func split(_ text: String) throws(WordSplitError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            if character == "\\" {
                guard let escaped = iterator.next() else {
                    throw WordSplitError(message: "trailing backslash")
                }
                current.append(contentsOf: try unescape(escaped, rest: &iterator))
                inWord = true
            } else if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " || character == "\t" || character == "\n" || character == "\r" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if let quote { throw WordSplitError(message: "unterminated \(quote) quote") }
        if inWord { words.append(current) }
        return words
    }

    private static func unescape(_ character: Character, rest: inout String.Iterator) throws(WordSplitError) -> String {
        switch character {
        case "a": return "\u{07}"
        case "b": return "\u{08}"
        case "f": return "\u{0C}"
        case "n": return "\n"
        case "r": return "\r"
        case "t": return "\t"
        case "v": return "\u{0B}"
        case "s", " ": return " "
        case "\\", "\"", "'": return String(character)
        case "x": return try scalar(digits: 2, radix: 16, prefix: "x", from: &rest)
        case "u": return try scalar(digits: 4, radix: 16, prefix: "u", from: &rest)
        case "U": return try scalar(digits: 8, radix: 16, prefix: "U", from: &rest)
        case "0"..."7":
            var digits = String(character)
            for _ in 0..<2 { digits.append(rest.next() ?? " ") }
            return try scalar(text: digits, radix: 8, prefix: "")
        default:
            throw WordSplitError(message: "invalid escape '\\\(character)'")
        }
    }

    private static func scalar(digits: Int, radix: Int, prefix: String,
                               from rest: inout String.Iterator) throws(WordSplitError) -> String {
        var text = ""
        for _ in 0..<digits { text.append(rest.next() ?? " ") }
        return try scalar(text: text, radix: radix, prefix: prefix)
    }

    private static func scalar(text: String, radix: Int, prefix: String) throws(WordSplitError) -> String {
        guard let value = UInt32(text, radix: radix), value != 0, let scalar = Unicode.Scalar(value) else {
            throw WordSplitError(message: "invalid escape '\\\(prefix)\(text.trimmingINIWhitespace())'")
        }
        return String(Character(scalar))
    }
}
