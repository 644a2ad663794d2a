/// One `Key=Value` entry with the line it started on.
struct INIEntry: Sendable, Hashable {
    let key: String
    let value: String
    let line: Int
    /// How messages name the key when it came from another syntax (`LSHandlerRank` for an Info.plist's `Rank=`).
    var label: String?

    /// `Key=`, or the label.
    var spelling: String { label ?? key + "=" }
}

/// One `[Section]` and the entries under it; a repeated header starts a new section.
struct INISection: Sendable, Hashable {
    let name: String
    let line: Int
    var entries: [INIEntry]
}

/// A file split into sections, plus the syntax problems found.
struct INIDocument: Sendable {
    var sections: [INISection] = []
    var diagnostics: [Diagnostic] = []
}

/// The systemd unit-file lexer shared by registrations and configuration files (see systemd.syntax(7)).
enum INILexer {
    static func lex(_ bytes: [UInt8], path: String, maximumSize: Int) -> INIDocument {
        var document = INIDocument()
        guard bytes.count <= maximumSize else {
            document.diagnostics.append(Diagnostic(.error, at: SourceLocation(file: path, line: 1),
                "file is \(bytes.count) bytes, larger than the limit of \(maximumSize)"))
            return document
        }
        var start = 0
        // systemd skips a UTF-8 byte order mark at the start of the file.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }

        var pending: (text: String, line: Int)?
        var lineNumber = 0
        while start < bytes.count {
            lineNumber += 1
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            let raw = bytes[start..<end]
            start = end + 1
            let location = SourceLocation(file: path, line: lineNumber)
            if raw.contains(0) {
                document.diagnostics.append(Diagnostic(.error, at: location, "line contains a NUL byte"))
                continue
            }
            guard let decoded = String(validating: raw, as: UTF8.self) else {
                document.diagnostics.append(Diagnostic(.error, at: location, "line is not valid UTF-8"))
                continue
            }
            let text = decoded.trimmingINIWhitespace()
            if let first = text.first, first == "#" || first == ";" { continue }
            if pending == nil && text.isEmpty { continue }
            if text.endsWithContinuation {
                // systemd replaces the backslash with a space and appends the next line.
                let piece = String(text.dropLast()) + " "
                if let current = pending {
                    pending = (current.text + piece, current.line)
                } else {
                    pending = (piece, lineNumber)
                }
                continue
            }
            let logical = pending.map { ($0.text + text, $0.line) } ?? (text, lineNumber)
            pending = nil
            process(logical.0.trimmingINIWhitespace(), line: logical.1, path: path, into: &document)
        }
        if let pending {
            process(pending.text.trimmingINIWhitespace(), line: pending.line, path: path, into: &document)
        }
        return document
    }

    private static func process(_ text: String, line: Int, path: String, into document: inout INIDocument) {
        let location = SourceLocation(file: path, line: line)
        if text.isEmpty { return }
        if text.hasPrefix("[") {
            let name = text.dropFirst().dropLast()
            guard text.hasSuffix("]"), !name.isEmpty, !name.contains("["), !name.contains("]") else {
                document.diagnostics.append(Diagnostic(.error, at: location,
                    "invalid section header '\(text.abbreviated)'"))
                return
            }
            document.sections.append(INISection(name: String(name), line: line, entries: []))
            return
        }
        guard let equals = text.firstIndex(of: "=") else {
            document.diagnostics.append(Diagnostic(.error, at: location,
                "expected a [Section], a comment or Key=Value, got '\(text.abbreviated)'"))
            return
        }
        let key = String(text[..<equals]).trimmingINIWhitespace()
        let value = String(text[text.index(after: equals)...]).trimmingINIWhitespace()
        guard !key.isEmpty else {
            document.diagnostics.append(Diagnostic(.error, at: location, "missing key before '='"))
            return
        }
        guard !document.sections.isEmpty else {
            document.diagnostics.append(Diagnostic(.error, at: location, "key '\(key)' outside any section"))
            return
        }
        document.sections[document.sections.count - 1].entries.append(INIEntry(key: key, value: value, line: line))
    }
}

extension String {
    /// Drops spaces, tabs, carriage returns and newlines at both ends.
    func trimmingINIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }

    /// True if the text ends with an odd number of backslashes.
    var endsWithContinuation: Bool {
        var count = 0
        for character in reversed() {
            guard character == "\\" else { break }
            count += 1
        }
        return count % 2 == 1
    }

    /// The text cut to 60 characters for messages.
    var abbreviated: String { count > 60 ? String(prefix(57)) + "..." : self }
}
