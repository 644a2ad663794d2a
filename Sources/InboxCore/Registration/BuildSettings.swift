/// Xcode build settings left in a source-tree Info.plist: `$(NAME)`, `${NAME}`, and with Xcode's modifiers
/// `$(NAME:rfc1034identifier)`, `:c99extidentifier`, `:identifier`, `:lower`, `:upper`. Xcode expands them when it
/// builds the app; a registration gives their values in `InboxdHandler` → `BuildSettings`.
struct BuildSettings: Sendable {
    /// The settings by name; a value may refer to other settings, as in Xcode.
    var values: [String: String] = [:]

    /// The text with every reference replaced, or the first reference that cannot be.
    enum Expansion: Equatable {
        case text(String)
        /// The reference as written (`$(PRODUCT_BUNDLE_IDENTIFIER)`) and the setting it names.
        case unresolved(reference: String, setting: String)
    }

    /// Expansions may refer to settings that refer to others; past this many characters the text is refused, so
    /// that a few settings cannot describe an enormous string.
    static let maximumLength = 4096

    func expand(_ text: String) -> Expansion {
        var cache: [String: Expansion] = [:]
        return expand(text, depth: 0, cache: &cache)
    }

    /// `cache` holds each setting's expansion, so that one used many times is expanded once.
    private func expand(_ text: String, depth: Int, cache: inout [String: Expansion]) -> Expansion {
        guard text.contains("$(") || text.contains("${") else { return .text(text) }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var length = 0
        var index = 0
        while index < scalars.count {
            guard scalars[index] == "$", index + 1 < scalars.count, scalars[index + 1] == "(" || scalars[index + 1] == "{"
            else {
                result.append(scalars[index])
                length += 1
                index += 1
                continue
            }
            let close: Unicode.Scalar = scalars[index + 1] == "(" ? ")" : "}"
            let start = index
            var end = index + 2
            while end < scalars.count, scalars[end] != close { end += 1 }
            let reference = String(String.UnicodeScalarView(scalars[start..<min(end + 1, scalars.count)]))
            let inner = String(String.UnicodeScalarView(scalars[(index + 2)..<min(end, scalars.count)]))
            let parts = inner.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let name = parts[0]
            var expanded: Expansion?
            if end < scalars.count, Self.isName(name), depth < 8, let raw = values[name] {
                expanded = cache[name] ?? expand(raw, depth: depth + 1, cache: &cache)
                cache[name] = expanded
            }
            guard case .text(var value) = expanded else {
                return .unresolved(reference: reference, setting: Self.isName(name) ? name : reference)
            }
            for modifier in parts.dropFirst() {
                guard let modified = Self.apply(modifier, to: value) else {
                    return .unresolved(reference: reference, setting: name + ":" + modifier)
                }
                value = modified
            }
            result.append(contentsOf: value.unicodeScalars)
            length += value.unicodeScalars.count
            guard length <= Self.maximumLength else {
                return .unresolved(reference: reference, setting: name + " (longer than \(Self.maximumLength) characters)")
            }
            index = end + 1
        }
        return .text(String(result))
    }

    private static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, !(first.value >= 0x30 && first.value <= 0x39) else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || $0 == "_"
                                                               || ($0.value >= 0x30 && $0.value <= 0x39)) }
    }

    /// Xcode's modifiers; nil for one it has not (or we do not know).
    private static func apply(_ modifier: String, to value: String) -> String? {
        func map(_ keep: (Unicode.Scalar) -> Bool, _ replacement: Character) -> String {
            String(value.unicodeScalars.map { keep($0) ? Character($0) : replacement })
        }
        func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII && (scalar.properties.isAlphabetic || (scalar.value >= 0x30 && scalar.value <= 0x39))
        }
        switch modifier {
        case "rfc1034identifier":
            return map({ isAlphanumeric($0) || $0 == "-" || $0 == "." }, "-")
        case "c99extidentifier", "identifier":
            let mapped = map({ isAlphanumeric($0) || $0 == "_" }, "_")
            return mapped.first.map { $0.isNumber } == true ? "_" + mapped : mapped
        case "lower": return value.lowercased()
        case "upper": return value.uppercased()
        default: return nil
        }
    }
}
