/// Turning Info.plist values into registration values: InboxdHandler's as unit-file text (errors when wrong), and
/// Apple's strings and lists (warnings, and the bad part left out).
extension InfoPlistMapper {
    /// The [Handler] keys whose value may also be an array of strings, and how the words are joined.
    private static let wordKeys: Set<String> = ["Exec", "Environment", "ReadWritePaths"]

    /// An InboxdHandler value as unit-file text: a string as it is, a number printed, a boolean as yes or no, and
    /// for Exec, Environment and ReadWritePaths an array of strings as the words of the line.
    mutating func handlerValue(_ node: PropertyListNode, _ key: String, _ path: String) -> String? {
        switch node.value {
        case .string(let text):
            return carried(text, node, path)
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
                    sink.error(line(element.location, elementPath), message(element.location, elementPath,
                               "must hold only strings, not \(element.value.kind)"))
                    return nil
                }
                guard let word = carried(word, element, elementPath) else { return nil }
                // ReadWritePaths= is split at spaces, without quotes; Exec= and Environment= as systemd splits.
                if key == "ReadWritePaths" && (word.isEmpty || word.contains(" ")) {
                    sink.error(line(element.location, elementPath), message(element.location, elementPath,
                               "ReadWritePaths cannot hold an empty path or a space"))
                    return nil
                }
                words.append(key == "ReadWritePaths" ? word : Self.quoted(word))
            }
            return words.joined(separator: " ")
        default:
            let array = Self.wordKeys.contains(key) ? ", or an array of strings" : ""
            sink.error(line(node.location, path), message(node.location, path,
                       "must be a string, a number or a boolean\(array), not \(node.value.kind)"))
            return nil
        }
    }

    /// The text if a unit-file value can carry it: no line breaks, no NUL.
    private mutating func carried(_ text: String, _ node: PropertyListNode, _ path: String) -> String? {
        guard let what = Self.uncarried(text) else { return text }
        sink.error(line(node.location, path), message(node.location, path,
                   "holds \(what), which a registration value cannot carry"))
        return nil
    }

    private static func uncarried(_ text: String) -> String? {
        for scalar in text.unicodeScalars where scalar == "\n" || scalar == "\r" || scalar == "\0" {
            return scalar == "\0" ? "a NUL character" : "a line break"
        }
        return nil
    }

    // MARK: Apple's keys

    /// A string of one of Apple's keys with its build settings expanded; nil, with a warning that ends in
    /// `otherwise` (what happens instead), when it is not a string, names a setting BuildSettings does not give,
    /// or holds a line break or NUL.
    mutating func appleString(_ node: PropertyListNode, _ path: String, otherwise: String) -> String? {
        guard case .string(let raw) = node.value else {
            warn(node.location, path, "must be a string, not \(node.value.kind): \(otherwise)")
            return nil
        }
        switch settings.expand(raw) {
        case .unresolved(let reference, let setting):
            let named = reference == raw ? "is" : "uses"
            warn(node.location, path, "'\(raw.visible)' \(named) the Xcode build setting \(setting.visible), which "
                 + "InboxdHandler → BuildSettings does not give: \(otherwise)")
            return nil
        case .text(let text):
            if let what = Self.uncarried(text) {
                warn(node.location, path, "'\(text.visible)' holds \(what): \(otherwise)")
                return nil
            }
            return text
        }
    }

    /// The text without the whitespace and invisible characters at its ends (a warning when there were any).
    mutating func trimmed(_ text: String, _ location: PropertyListLocation, _ path: String) -> String {
        let scalars = Array(text.unicodeScalars)
        guard let first = scalars.firstIndex(where: { !Self.isBlank($0) }) else {
            if !text.isEmpty { warn(location, path, "'\(text.visible)' is only blanks: taken as empty") }
            return ""
        }
        let last = scalars.lastIndex { !Self.isBlank($0) } ?? first
        guard first > 0 || last < scalars.count - 1 else { return text }
        let result = String(String.UnicodeScalarView(scalars[first...last]))
        warn(location, path, "'\(text.visible)' has blanks or invisible characters at its ends: trimmed to "
             + "'\(result.visible)'")
        return result
    }

    /// Whitespace and the invisible format characters that copying text brings along (zero-width space, BOM).
    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar.properties.generalCategory == .format
            || scalar.properties.generalCategory == .control
    }

    /// The usable items of a list (an array of strings, or a single string, taken as one item; with a warning
    /// where Apple's key wants an array): expanded, trimmed, and valid for `isValid`; each other item is a warning and is skipped.
    mutating func words(_ node: PropertyListNode, _ path: String, what: String, isValid: (String) -> Bool,
                        hint: (String) -> String? = { _ in nil }, arrayExpected: Bool = false) -> [String] {
        locatedWords(node, path, what: what, isValid: isValid, hint: hint, arrayExpected: arrayExpected).map(\.0)
    }

    /// `words`, each with the location and key path of its element.
    mutating func locatedWords(_ node: PropertyListNode, _ path: String, what: String, isValid: (String) -> Bool,
                               hint: (String) -> String? = { _ in nil },
                               arrayExpected: Bool = false) -> [(String, PropertyListLocation, String)] {
        let elements: [(PropertyListNode, String)]
        switch node.value {
        case .array(let items):
            elements = items.enumerated().map { ($1, "\(path)[\($0)]") }
        case .string:
            if arrayExpected { warn(node.location, path, "a string where an array belongs: taken as a one-item array") }
            elements = [(node, path)]
        default:
            warn(node.location, path, "must be an array of strings, not \(node.value.kind): ignored")
            return []
        }
        var words: [(String, PropertyListLocation, String)] = []
        for (element, elementPath) in elements {
            guard let text = appleString(element, elementPath, otherwise: "item skipped") else { continue }
            let word = trimmed(text, element.location, elementPath)
            guard !word.isEmpty else {
                warn(element.location, elementPath, "empty item: skipped")
                continue
            }
            guard !word.unicodeScalars.contains(where: Self.isBlank), isValid(word) else {
                let why = hint(word) ?? "is not a valid \(what)"
                warn(element.location, elementPath, "'\(word.visible)' \(why): item skipped")
                continue
            }
            words.append((word, element.location, elementPath))
        }
        return words
    }

    /// A boolean: `<true/>`, `<false/>`, or the 1/0 and YES/NO that older plists use (with a warning).
    mutating func boolean(_ node: PropertyListNode, _ path: String) -> Bool? {
        switch node.value {
        case .bool(let flag):
            return flag
        case .integer(let number) where number == 0 || number == 1:
            return number == 1
        case .string(let text) where BooleanSyntax.parse(text) != nil:
            return BooleanSyntax.parse(text)
        default:
            warn(node.location, path, "must be a boolean, not \(node.value.kind): ignored")
            return nil
        }
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
