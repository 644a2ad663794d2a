/// The host's MIME database: shared-mime-info's generated `globs2`, `subclasses` and `aliases` files.
///
/// Names map to MIME types the way the Shared MIME-info Database specification says: a literal name beats any
/// pattern; otherwise the highest weight wins, then the longest pattern; exact-case matches are tried first and
/// only when none matches is the lowercased name tried against the case-insensitive patterns.
public struct MIMEDatabase: Sendable {
    /// One directory's files, most important directory first (as in `$XDG_DATA_HOME:$XDG_DATA_DIRS`).
    public struct Source: Sendable {
        public var directory: String
        public var globs2: [UInt8]
        public var subclasses: [UInt8]
        public var aliases: [UInt8]

        /// Creates a source from the bytes of its three files (empty when a file is missing).
        public init(directory: String, globs2: [UInt8], subclasses: [UInt8], aliases: [UInt8]) {
            self.directory = directory
            self.globs2 = globs2
            self.subclasses = subclasses
            self.aliases = aliases
        }
    }

    /// An empty database: no names, no hierarchy.
    public static let empty = MIMEDatabase(sources: [])

    private let globs: GlobTable
    private let parentsOf: [String: [String]]
    private let canonicalOf: [String: String]
    private let aliasesOf: [String: [String]]
    /// Every MIME type named by a glob, a subclass line or an alias target, canonical, sorted.
    public let knownTypes: [String]
    private let known: Set<String>
    /// Problems with lines of the files, as `file:line: message`; the lines are skipped.
    public let diagnostics: [Diagnostic]

    /// Merges the sources; a `__NOGLOBS__` line drops the type's globs from the less important sources.
    public init(sources: [Source]) {
        var globs = GlobTable()
        var parents: [String: [String]] = [:]
        var canonical: [String: String] = [:]
        var diagnostics: [Diagnostic] = []
        var noGlobs: Set<String> = []
        for source in sources {
            var dropped: Set<String> = []
            for line in Self.lines(source.globs2, path: source.directory + "/globs2", into: &diagnostics) {
                let fields = line.text.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
                guard fields.count >= 3, let weight = Int(fields[0]), (0...100).contains(weight),
                      Self.isMIMEType(fields[1]), !fields[2].isEmpty else {
                    diagnostics.append(Diagnostic(.warning, at: line.location, "malformed globs2 line, ignored"))
                    continue
                }
                let mime = String(fields[1])
                if fields[2] == "__NOGLOBS__" {
                    dropped.insert(mime)
                    continue
                }
                guard !noGlobs.contains(mime) else { continue }
                let flags = fields.count > 3 ? fields[3].split(separator: ",") : []
                globs.add(Glob(pattern: String(fields[2]), mimeType: mime, weight: weight,
                               caseSensitive: flags.contains("cs")))
            }
            noGlobs.formUnion(dropped)
            for line in Self.lines(source.aliases, path: source.directory + "/aliases", into: &diagnostics) {
                guard let (alias, target) = Self.pair(line.text) else {
                    diagnostics.append(Diagnostic(.warning, at: line.location, "malformed aliases line, ignored"))
                    continue
                }
                if canonical[alias] == nil { canonical[alias] = target }
            }
            for line in Self.lines(source.subclasses, path: source.directory + "/subclasses", into: &diagnostics) {
                guard let (child, parent) = Self.pair(line.text) else {
                    diagnostics.append(Diagnostic(.warning, at: line.location, "malformed subclasses line, ignored"))
                    continue
                }
                if !parents[child, default: []].contains(parent) { parents[child, default: []].append(parent) }
            }
        }
        globs.finish()
        self.globs = globs
        self.canonicalOf = canonical
        self.aliasesOf = Dictionary(grouping: canonical.keys.sorted(), by: { canonical[$0]! })
        // Keyed and valued by canonical names, so a lookup through an alias finds the hierarchy.
        var canonicalParents: [String: [String]] = [:]
        for (child, list) in parents {
            let key = canonical[child] ?? child
            for parent in list.map({ canonical[$0] ?? $0 }) where parent != key
                && !canonicalParents[key, default: []].contains(parent) {
                canonicalParents[key, default: []].append(parent)
            }
        }
        self.parentsOf = canonicalParents
        var known = Set(globs.mimeTypes)
        known.formUnion(canonicalParents.keys)
        known.formUnion(canonicalParents.values.joined())
        known.formUnion(canonical.values)
        self.known = known
        self.knownTypes = known.sorted()
        self.diagnostics = diagnostics
    }

    /// The MIME type shared-mime-info gives a file name, and the pattern that decided; nil when no glob matches.
    public func match(fileName: String) -> (mimeType: String, pattern: String)? {
        matches(fileName: fileName).first
    }

    /// Every MIME type the best globs give a file name: more than one when globs of equal weight and length name
    /// different types (the specification leaves such a tie to the content), first read first.
    public func matches(fileName: String) -> [(mimeType: String, pattern: String)] {
        let found = globs.matches(fileName).map { (mimeType: canonical($0.mimeType), pattern: $0.pattern) }
        guard found.count > 1 else { return found }
        var seen: Set<String> = []
        return found.filter { seen.insert($0.mimeType).inserted }
    }

    /// Every MIME type a glob of any weight gives a file name, canonical.
    public func allTypes(fileName: String) -> Set<String> {
        Set(globs.allTypes(fileName).map(canonical))
    }

    /// True when `mimeType` is `ancestor` or descends from it through `subclasses` (and the implicit parents).
    public func descends(_ mimeType: String, from ancestor: String) -> Bool {
        let target = canonical(ancestor)
        var stack = [canonical(mimeType)]
        var seen: Set<String> = []
        while let next = stack.popLast() {
            if next == target { return true }
            if seen.insert(next).inserted { stack.append(contentsOf: parents(of: next)) }
        }
        return false
    }

    /// The canonical name of a MIME type: an alias resolved, parameters and case dropped.
    public func canonical(_ mimeType: String) -> String {
        let plain = Self.normalized(mimeType)
        return canonicalOf[plain] ?? plain
    }

    /// The aliases of a canonical MIME type.
    public func aliases(of mimeType: String) -> [String] {
        aliasesOf[mimeType] ?? []
    }

    /// Direct parents from `subclasses`, plus the specification's implicit ones: `text/*` is a `text/plain`,
    /// and every other type but `inode/*` is an `application/octet-stream`.
    public func parents(of mimeType: String) -> [String] {
        let type = canonical(mimeType)
        if let explicit = parentsOf[type] { return explicit }
        if type == "text/plain" { return ["application/octet-stream"] }
        if type.hasPrefix("text/") { return ["text/plain"] }
        if type == "application/octet-stream" || type.hasPrefix("inode/") { return [] }
        return ["application/octet-stream"]
    }

    /// True if the database names the type (after alias resolution).
    public func knows(_ mimeType: String) -> Bool {
        known.contains(canonical(mimeType))
    }

    /// The simple `*.ext` patterns of a MIME type, highest weight first: its file name extensions.
    public func extensions(of mimeType: String) -> [String] {
        globs.extensions(of: canonical(mimeType))
    }

    /// `type/subtype` in lowercase without parameters or spaces.
    static func normalized(_ mimeType: String) -> String {
        // Most names asked about are the database's own, already plain: returned as they are, without a copy.
        if mimeType.utf8.allSatisfy({ byte in
            byte != UInt8(ascii: ";") && byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t")
                && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) && byte < 0x80
        }) {
            return mimeType
        }
        var text = Substring(mimeType)
        if let semicolon = text.firstIndex(of: ";") { text = text[..<semicolon] }
        return text.filter { $0 != " " && $0 != "\t" }.lowercased()
    }

    /// `type/subtype` with RFC 6838 name characters.
    static func isMIMEType<S: StringProtocol>(_ text: S) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, text.utf8.count <= 255 else { return false }
        return parts.allSatisfy { part in
            guard let first = part.utf8.first, first != UInt8(ascii: ".") && first != UInt8(ascii: "+") else { return false }
            return part.utf8.allSatisfy(isNameByte)
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$&-^_.+".utf8.contains(byte)
        }
    }

    private static func pair(_ text: Substring) -> (String, String)? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 2, isMIMEType(words[0]), isMIMEType(words[1]) else { return nil }
        return (words[0].lowercased(), words[1].lowercased())
    }

    /// The non-comment, non-empty lines of a file with their locations; a non-UTF-8 line is a diagnostic.
    private static func lines(_ bytes: [UInt8], path: String,
                              into diagnostics: inout [Diagnostic]) -> [(text: Substring, location: SourceLocation)] {
        var result: [(Substring, SourceLocation)] = []
        var number = 0
        for raw in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            guard let text = String(validating: raw, as: UTF8.self) else {
                diagnostics.append(Diagnostic(.warning, at: SourceLocation(file: path, line: number),
                                              "line is not UTF-8, ignored"))
                continue
            }
            guard !text.isEmpty, !text.hasPrefix("#") else { continue }
            result.append((Substring(text), SourceLocation(file: path, line: number)))
        }
        return result
    }
}
