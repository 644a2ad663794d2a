/// One `globs2` line: a pattern, the MIME type it names and its weight.
struct Glob: Sendable, Hashable {
    let pattern: String
    let mimeType: String
    let weight: Int
    let caseSensitive: Bool
}

/// shared-mime-info's globs, indexed the way the specification checks them: literal names, simple suffixes
/// (`*.ext`, `*~`) in a hash, and full patterns (`*.so.[0-9]*`) matched one by one.
struct GlobTable: Sendable {
    private var literals: [String: [Glob]] = [:]
    private var suffixes: [String: [Glob]] = [:]
    private var patterns: [(glob: Glob, scalars: [Unicode.Scalar])] = []
    private var longestSuffix = 0
    /// The first characters of the suffixes (mostly "."), so that only suffixes that can match are looked up.
    private var suffixStarts: Set<Unicode.Scalar> = []
    private var order: [Glob: Int] = [:]
    private var extensionsByType: [String: [String]] = [:]

    /// Every MIME type some glob names.
    var mimeTypes: [String] { Array(Set(order.keys.map(\.mimeType))) }

    mutating func add(_ glob: Glob) {
        guard order[glob] == nil else { return }
        order[glob] = order.count
        let body = glob.pattern.dropFirst()
        if !glob.pattern.contains(where: Self.isWildcard) {
            literals[glob.pattern, default: []].append(glob)
        } else if glob.pattern.first == "*", !body.contains(where: Self.isWildcard) {
            suffixes[String(body), default: []].append(glob)
            longestSuffix = max(longestSuffix, body.unicodeScalars.count)
            if let first = body.unicodeScalars.first { suffixStarts.insert(first) }
            if body.first == ".", body.count > 1 {
                extensionsByType[glob.mimeType, default: []].append(String(body.dropFirst()))
            }
        } else {
            patterns.append((glob, Array(glob.pattern.unicodeScalars)))
        }
    }

    /// Orders each type's extensions by weight (stable), once every glob is in.
    mutating func finish() {
        let weights = Dictionary(order.keys.map { ("\($0.mimeType) \($0.pattern)", $0.weight) }, uniquingKeysWith: max)
        for (type, list) in extensionsByType {
            let unique = list.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            extensionsByType[type] = unique.enumerated().sorted { a, b in
                let wa = weights["\(type) *.\(a.element)"] ?? 0
                let wb = weights["\(type) *.\(b.element)"] ?? 0
                return wa != wb ? wa > wb : a.offset < b.offset
            }.map(\.element)
        }
    }

    func extensions(of mimeType: String) -> [String] {
        extensionsByType[mimeType] ?? []
    }

    /// The best glob for a name: exact case first, then the lowercased name against case-insensitive globs.
    func match(_ name: String) -> Glob? {
        matches(name).first
    }

    /// The best globs for a name, first read first: several only when globs of the same weight and length name
    /// different MIME types (`*.m`: Objective-C and MATLAB), a tie the specification settles by content.
    ///
    /// The exact-case name against every glob, and the lowercased name against the case-insensitive ones, are
    /// weighed together (as xdgmime does): a longer case-insensitive pattern (`*.ps.gz` for `a.PS.gz`) beats a
    /// shorter one the exact case matched (`*.gz`); between equally good ones the exact case wins (`*.C` is C++).
    func matches(_ name: String) -> [Glob] {
        let exact = matches(name, caseInsensitiveOnly: false)
        let lowered = name.lowercased()
        guard lowered != name else { return exact }
        let folded = matches(lowered, caseInsensitiveOnly: true)
        guard let best = exact.first else { return folded }
        guard let other = folded.first else { return exact }
        let isLiteral: (Glob) -> Bool = { !$0.pattern.contains(where: Self.isWildcard) }
        if isLiteral(best) != isLiteral(other) { return isLiteral(best) ? exact : folded }
        if other.weight != best.weight { return other.weight > best.weight ? folded : exact }
        return other.pattern.unicodeScalars.count > best.pattern.unicodeScalars.count ? folded : exact
    }

    /// Every MIME type any glob of any weight gives a name, exact case or lowercased (`*.asc`: plain text at 50, and
    /// PGP keys, signatures and encrypted data at 10).
    func allTypes(_ name: String) -> Set<String> {
        var types = Set(matches(name, caseInsensitiveOnly: false, all: true).map(\.mimeType))
        let lowered = name.lowercased()
        if lowered != name { types.formUnion(matches(lowered, caseInsensitiveOnly: true, all: true).map(\.mimeType)) }
        return types
    }

    private func matches(_ name: String, caseInsensitiveOnly: Bool, all: Bool = false) -> [Glob] {
        let eligible: (Glob) -> Bool = { !caseInsensitiveOnly || !$0.caseSensitive }
        let literal = all ? literals[name]?.filter(eligible) ?? [] : best(literals[name]?.filter(eligible) ?? [])
        if !literal.isEmpty && !all { return literal }

        var found: [Glob] = literal
        // The suffixes that can match, from the shortest: each a slice of the name, looked up as it is.
        let view = name.unicodeScalars
        var start = view.endIndex
        var length = 0
        while start > view.startIndex && length < longestSuffix {
            view.formIndex(before: &start)
            length += 1
            if suffixStarts.contains(view[start]), let globs = suffixes[String(Substring(view[start...]))] {
                found += globs.filter(eligible)
            }
        }
        if !patterns.isEmpty {
            let scalars = Array(view)
            for (glob, pattern) in patterns where eligible(glob) && Self.matches(pattern[...], scalars[...]) {
                found.append(glob)
            }
        }
        return all ? found : best(found)
    }

    /// Highest weight, then longest pattern; the globs tied on both, one per MIME type, in the order read.
    private func best(_ globs: [Glob]) -> [Glob] {
        if globs.count < 2 { return globs }
        let sorted = globs.sorted { a, b in
            if a.weight != b.weight { return a.weight > b.weight }
            let (la, lb) = (a.pattern.unicodeScalars.count, b.pattern.unicodeScalars.count)
            if la != lb { return la > lb }
            return (order[a] ?? 0) < (order[b] ?? 0)
        }
        guard let first = sorted.first else { return [] }
        var seen: Set<String> = []
        return sorted.prefix {
            $0.weight == first.weight && $0.pattern.unicodeScalars.count == first.pattern.unicodeScalars.count
        }.filter { seen.insert($0.mimeType).inserted }
    }

    private static func isWildcard(_ character: Character) -> Bool {
        character == "*" || character == "?" || character == "["
    }

    /// fnmatch(3) without flags: `*`, `?` and bracket expressions with ranges and `!`/`^` negation.
    static func matches(_ pattern: ArraySlice<Unicode.Scalar>, _ name: ArraySlice<Unicode.Scalar>) -> Bool {
        var p = pattern.startIndex, n = name.startIndex
        var star: (p: Int, n: Int)?
        while n < name.endIndex {
            if p < pattern.endIndex {
                switch pattern[p] {
                case "*":
                    star = (p, n)
                    p += 1
                    continue
                case "?":
                    p += 1
                    n += 1
                    continue
                case "[":
                    if let (matched, next) = bracket(pattern, at: p, name[n]) {
                        if matched {
                            p = next
                            n += 1
                            continue
                        }
                    } else if name[n] == "[" {
                        // An unclosed bracket is a literal '['.
                        p += 1
                        n += 1
                        continue
                    }
                default:
                    if pattern[p] == name[n] {
                        p += 1
                        n += 1
                        continue
                    }
                }
            }
            // Mismatch: let the last star swallow one more character, or fail.
            guard let last = star else { return false }
            star = (last.p, last.n + 1)
            p = last.p + 1
            n = last.n + 1
        }
        while p < pattern.endIndex && pattern[p] == "*" { p += 1 }
        return p == pattern.endIndex
    }

    /// Matches one character against the bracket expression at `start`; nil when the bracket is not closed.
    private static func bracket(_ pattern: ArraySlice<Unicode.Scalar>, at start: Int,
                                _ character: Unicode.Scalar) -> (Bool, Int)? {
        var i = start + 1
        var negated = false
        if i < pattern.endIndex && (pattern[i] == "!" || pattern[i] == "^") {
            negated = true
            i += 1
        }
        var matched = false
        var first = true
        while i < pattern.endIndex {
            if pattern[i] == "]" && !first { return (matched != negated, i + 1) }
            first = false
            let low = pattern[i]
            if i + 2 < pattern.endIndex && pattern[i + 1] == "-" && pattern[i + 2] != "]" {
                if low.value <= character.value && character.value <= pattern[i + 2].value { matched = true }
                i += 3
            } else {
                if low == character { matched = true }
                i += 1
            }
        }
        return nil
    }
}
