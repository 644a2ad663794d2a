/// One word of a document type's `NamePatterns=`: an fnmatch(3)-style glob on a file's name, without regard to case
/// (as shared-mime-info's globs: `*.PDF` is `*.pdf`), since scanners and mail clients capitalise names freely.
///
/// `*` matches any run of characters (a leading `.` included: names starting with one are never dispatched anyway),
/// `?` one character, `[abc]`, `[a-z]` and `[!abc]` (or `[^abc]`) one of a set, and `\` makes the next character
/// literal. A name has no `/`, so a pattern with one would match nothing and is refused.
public struct NamePattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written.
    public let text: String
    private let elements: [Element]

    private enum Element: Sendable, Hashable {
        case literal(Unicode.Scalar)
        case any
        case star
        /// `negated`, then the ranges (a single character is a range of one).
        case set(negated: Bool, ranges: [ClosedRange<UInt32>])
    }

    /// Why a pattern is refused.
    public struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    /// The longest pattern taken: a file name's limit (NAME_MAX, in bytes).
    public static let maximumLength = 255

    /// Parses a pattern.
    public init(_ text: String) throws(SyntaxError) {
        guard !text.isEmpty else { throw SyntaxError(description: "empty pattern") }
        guard text.utf8.count <= Self.maximumLength else {
            throw SyntaxError(description: "longer than \(Self.maximumLength) bytes")
        }
        guard !text.utf8.contains(UInt8(ascii: "/")) else {
            throw SyntaxError(description: "a file name has no '/'")
        }
        let scalars = Array(text.lowercased().unicodeScalars)
        var elements: [Element] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            switch scalar {
            case "*":
                if elements.last != .star { elements.append(.star) }
            case "?":
                elements.append(.any)
            case "\\":
                guard index < scalars.count else { throw SyntaxError(description: "'\\' at the end escapes nothing") }
                elements.append(.literal(scalars[index]))
                index += 1
            case "[":
                var negated = false
                if index < scalars.count, scalars[index] == "!" || scalars[index] == "^" {
                    negated = true
                    index += 1
                }
                var ranges: [ClosedRange<UInt32>] = []
                var first = true
                var closed = false
                while index < scalars.count {
                    var low = scalars[index]
                    if low == "]" && !first {
                        closed = true
                        index += 1
                        break
                    }
                    first = false
                    index += 1
                    if low == "\\", index < scalars.count {
                        low = scalars[index]
                        index += 1
                    }
                    if index + 1 < scalars.count, scalars[index] == "-", scalars[index + 1] != "]" {
                        var high = scalars[index + 1]
                        index += 2
                        if high == "\\", index < scalars.count {
                            high = scalars[index]
                            index += 1
                        }
                        guard low.value <= high.value else {
                            throw SyntaxError(description: "range '\(low)-\(high)' is backwards")
                        }
                        ranges.append(low.value...high.value)
                    } else {
                        ranges.append(low.value...low.value)
                    }
                }
                guard closed else { throw SyntaxError(description: "'[' without a closing ']'") }
                elements.append(.set(negated: negated, ranges: ranges))
            default:
                elements.append(.literal(scalar))
            }
        }
        self.text = text
        self.elements = elements
    }

    public var description: String { text }

    /// True if the whole of `name` matches. `name` must be lowercased already (`String.lowercased()`): selection
    /// lowercases a file's name once for all its patterns.
    public func matches(lowercased name: String) -> Bool {
        matches(scalars: Array(name.unicodeScalars))
    }

    /// The same, for a lowercased name's scalars (made once for all the patterns a name is matched against).
    func matches(scalars: [Unicode.Scalar]) -> Bool {
        // The classic single-backtrack glob match: on a mismatch, the last '*' takes one more character.
        var p = 0, s = 0
        var starP = -1, starS = 0
        while s < scalars.count {
            if p < elements.count {
                switch elements[p] {
                case .star:
                    starP = p
                    starS = s
                    p += 1
                    continue
                case .any:
                    p += 1
                    s += 1
                    continue
                case .literal(let scalar) where scalar == scalars[s]:
                    p += 1
                    s += 1
                    continue
                case .set(let negated, let ranges) where ranges.contains { $0.contains(scalars[s].value) } != negated:
                    p += 1
                    s += 1
                    continue
                default:
                    break
                }
            }
            guard starP >= 0 else { return false }
            p = starP + 1
            starS += 1
            s = starS
        }
        while p < elements.count, elements[p] == .star { p += 1 }
        return p == elements.count
    }

    /// True if `name` matches, whatever its case.
    public func matches(_ name: String) -> Bool { matches(lowercased: name.lowercased()) }
}
