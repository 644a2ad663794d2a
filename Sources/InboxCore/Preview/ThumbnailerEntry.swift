/// One desktop thumbnailer registration (`/usr/share/thumbnailers/*.thumbnailer`, the freedesktop Thumbnail
/// Managing Standard's `[Thumbnailer Entry]`): the program, what it runs, and the MIME types it declares.
public struct ThumbnailerEntry: Sendable, Hashable {
    /// Where it was read from: the file, for diagnostics.
    public var path: String
    /// `TryExec=`: the program that must exist for the entry to count; nil when absent.
    public var tryExec: String?
    /// `Exec=`, split into words like a registration's Exec= (quotes), field codes kept.
    public var exec: [String]
    /// `MimeType=`, `;`-separated.
    public var mimeTypes: [String]

    public init(path: String, tryExec: String?, exec: [String], mimeTypes: [String]) {
        self.path = path
        self.tryExec = tryExec
        self.exec = exec
        self.mimeTypes = mimeTypes
    }
}

extension ThumbnailerEntry {
    /// The largest `.thumbnailer` file read: the desktop's are a few hundred bytes; a bound keeps a hostile one small.
    public static let maximumSize = 64 * 1024

    /// The section the standard names; every other section is someone else's and is ignored.
    static let sectionName = "Thumbnailer Entry"

    /// Reads a `.thumbnailer` file the forgiving way registrations are read: the `[Thumbnailer Entry]` section's
    /// `TryExec=`, `Exec=` and `MimeType=`; other sections and keys are ignored; a malformed line, a missing `Exec=` or
    /// `MimeType=`, or an `Exec=` without `%o` is a diagnostic at its file:line, and then there is no entry.
    public static func parse(_ bytes: [UInt8], path: String) -> (entry: ThumbnailerEntry?, diagnostics: [Diagnostic]) {
        let document = INILexer.lex(bytes, path: path, maximumSize: maximumSize)
        var diagnostics = document.diagnostics
        func refuse(_ line: Int, _ message: String) {
            diagnostics.append(Diagnostic(.error, at: SourceLocation(file: path, line: line), message))
        }
        let sections = document.sections.filter { $0.name == sectionName }
        guard let header = sections.first else {
            // A file the lexer already refused has its own diagnostics; only a readable one lacks the section.
            if !diagnostics.containsError { refuse(1, "no [\(sectionName)] section") }
            return (nil, diagnostics)
        }
        // GKeyFile merges a repeated group and lets a repeated key's last value win; so do we.
        var values: [String: INIEntry] = [:]
        for entry in sections.flatMap(\.entries) where ["TryExec", "Exec", "MimeType"].contains(entry.key) {
            values[entry.key] = entry
        }

        var exec: [String] = []
        if let entry = values["Exec"] {
            do {
                exec = try WordSplitter.split(entry.value)
                if exec.isEmpty {
                    refuse(entry.line, "Exec= is empty")
                } else if !exec.contains(where: { Self.codes(in: $0).contains("o") }) {
                    // Without %o the program has nowhere to write the thumbnail it makes (`%%o` is a literal `%o`).
                    refuse(entry.line, "Exec= has no %o for the output file")
                }
            } catch {
                refuse(entry.line, "bad quoting in Exec=: \(error.message)")
            }
        } else {
            refuse(header.line, "[\(sectionName)] has no Exec=")
        }

        var mimeTypes: [String] = []
        if let entry = values["MimeType"] {
            mimeTypes = entry.value.split(separator: ";").map { String($0).trimmingINIWhitespace() }
                .filter { !$0.isEmpty }
            if mimeTypes.isEmpty { refuse(entry.line, "MimeType= names no type") }
        } else {
            refuse(header.line, "[\(sectionName)] has no MimeType=")
        }

        let tryExec = values["TryExec"].map(\.value).flatMap { $0.isEmpty ? nil : $0 }
        guard !diagnostics.containsError else { return (nil, diagnostics) }
        return (ThumbnailerEntry(path: path, tryExec: tryExec, exec: exec, mimeTypes: mimeTypes), diagnostics)
    }

    /// `exec` with its field codes filled in: `%i` the input path, `%u` its URI, `%o` the output path, `%s` the size,
    /// `%%` a `%`; an unknown code is dropped, as the desktop's thumbnailers do.
    ///
    /// A word that held nothing but unknown codes is dropped with them, so that no empty argument is passed in their
    /// place; a word that was empty to begin with (`""`) stays.
    public func arguments(input: String, uri: String, output: String, size: Int) -> [String] {
        exec.compactMap { word -> String? in
            guard word.contains("%") else { return word }
            var result = ""
            var characters = word.makeIterator()
            while let character = characters.next() {
                guard character == "%" else {
                    result.append(character)
                    continue
                }
                switch characters.next() {
                case "i": result += input
                case "u": result += uri
                case "o": result += output
                case "s": result += String(size)
                case "%": result += "%"
                default: break
                }
            }
            return result.isEmpty && !word.isEmpty && !Self.fillsEmpty(word) ? nil : result
        }
    }

    /// Whether it declares `mimeType`; MIME types compare without regard to case (RFC 2045), as `image/x-MS-bmp` in
    /// gdk-pixbuf's own list shows they are written.
    public func declares(_ mimeType: String) -> Bool {
        let wanted = mimeType.asciiLowercased()
        return mimeTypes.contains { $0.asciiLowercased() == wanted }
    }

    /// True if `word` holds a known code, so that an empty result is a value (an empty path), not a dropped code.
    private static func fillsEmpty(_ word: String) -> Bool {
        codes(in: word).contains { "iuos".contains($0) }
    }

    /// The field codes in `word` as `arguments` reads them, left to right: the character after each `%`, so that
    /// `%%o` is the code `%` followed by a literal `o`.
    static func codes(in word: String) -> [Character] {
        var codes: [Character] = []
        var characters = word.makeIterator()
        while let character = characters.next() {
            if character == "%", let code = characters.next() { codes.append(code) }
        }
        return codes
    }
}

extension String {
    /// The text with A-Z lowered and everything else as is: MIME types and the like are ASCII-case-insensitive.
    func asciiLowercased() -> String {
        String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
