/// Turning Info.plist values into registration values: strings, printed numbers, yes/no, and word lists.
extension InfoPlistMapper {
    /// The [Handler] keys whose value may also be an array of strings, and how the words are joined.
    private static let wordKeys: Set<String> = ["Exec", "Environment", "ReadWritePaths"]

    /// A string value; anything else is reported.
    mutating func string(_ node: PropertyListNode, _ key: String, _ path: String) -> String? {
        guard case .string(let text) = node.value else {
            sink.error(line(node.location, path), "\(key) must be a string, not \(node.value.kind)")
            return nil
        }
        return carried(text, key, node, path)
    }

    /// An InboxdHandler value as unit-file text: a string as it is, a number printed, a boolean as yes or no, and
    /// for Exec, Environment and ReadWritePaths an array of strings as the words of the line.
    mutating func handlerValue(_ node: PropertyListNode, _ key: String, _ path: String) -> String? {
        switch node.value {
        case .string(let text):
            return carried(text, key, node, path)
        case .integer(let number):
            return String(number)
        case .real(let number):
            return String(number)
        case .bool(let flag):
            return flag ? "yes" : "no"
        case .array(let elements) where Self.wordKeys.contains(key):
            var words: [String] = []
            for (index, element) in elements.enumerated() {
                let elementPath = "\(path)[\(index)]"
                guard case .string(let word) = element.value else {
                    sink.error(line(element.location, elementPath),
                               "\(key) must hold only strings, not \(element.value.kind)")
                    return nil
                }
                guard let word = carried(word, key, element, elementPath) else { return nil }
                // ReadWritePaths= is split at spaces, without quotes; Exec= and Environment= as systemd splits.
                if key == "ReadWritePaths" && (word.isEmpty || word.contains(" ")) {
                    sink.error(line(element.location, elementPath), "ReadWritePaths cannot hold an empty path or a space")
                    return nil
                }
                words.append(key == "ReadWritePaths" ? word : Self.quoted(word))
            }
            return words.joined(separator: " ")
        default:
            let array = Self.wordKeys.contains(key) ? ", or an array of strings" : ""
            sink.error(line(node.location, path),
                       "\(key) must be a string, a number or a boolean\(array), not \(node.value.kind)")
            return nil
        }
    }

    /// A space-separated list (ContentTypes=, IconFiles=, ...) from an array of strings, or from a single string
    /// where `singleString` allows it. Words cannot be empty or hold blanks, which the list syntax cannot carry.
    mutating func list(_ node: PropertyListNode, _ key: String, _ path: String, singleString: Bool) -> [String]? {
        let elements: [(PropertyListNode, String)]
        switch node.value {
        case .array(let items):
            elements = items.enumerated().map { ($1, "\(path)[\($0)]") }
        case .string where singleString:
            elements = [(node, path)]
        default:
            let expected = singleString ? "a string or an array of strings" : "an array of strings"
            sink.error(line(node.location, path), "\(key) must be \(expected), not \(node.value.kind)")
            return nil
        }
        var words: [String] = []
        for (element, elementPath) in elements {
            guard case .string(let word) = element.value else {
                sink.error(line(element.location, elementPath),
                           "\(key) must hold only strings, not \(element.value.kind)")
                return nil
            }
            guard let word = carried(word, key, element, elementPath) else { return nil }
            guard !word.isEmpty, !word.contains(where: { $0 == " " || $0 == "\t" }) else {
                sink.error(line(element.location, elementPath),
                           "\(key) holds '\(word.abbreviated)': a list item cannot be empty or hold blanks")
                return nil
            }
            words.append(word)
        }
        return words
    }

    /// Adds `list(...)` as a `key=` entry when it has words.
    mutating func appendList(_ node: PropertyListNode, _ plistKey: String, _ path: String, as key: String,
                             to section: inout INISection) {
        guard let words = list(node, plistKey, path, singleString: true), !words.isEmpty else { return }
        section.entries.append(INIEntry(key: key, value: words.joined(separator: " "), line: line(node.location, path),
                                        label: plistKey))
    }

    /// The text if a unit-file value can carry it: no line breaks, no NUL.
    private mutating func carried(_ text: String, _ key: String, _ node: PropertyListNode, _ path: String) -> String? {
        for scalar in text.unicodeScalars where scalar == "\n" || scalar == "\r" || scalar == "\0" {
            let what = scalar == "\0" ? "a NUL character" : "a line break"
            sink.error(line(node.location, path), "\(key) holds \(what), which a registration value cannot carry")
            return nil
        }
        return text
    }

    /// A word quoted for systemd's splitting (WordSplitter) when it needs to be: in double quotes, with `"` and `\`
    /// escaped.
    static func quoted(_ word: String) -> String {
        let special: Set<Unicode.Scalar> = [" ", "\t", "\"", "'", "\\"]
        guard word.isEmpty || word.unicodeScalars.contains(where: special.contains) else { return word }
        var result = "\""
        for scalar in word.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { result += "\\" }
            result.unicodeScalars.append(scalar)
        }
        return result + "\""
    }
}
