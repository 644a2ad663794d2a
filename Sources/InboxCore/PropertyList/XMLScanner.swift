/// A start tag: `<name attributes>` or the empty-element form `<name/>`.
struct XMLTag {
    let name: String
    /// True for `<name/>`, which has no content and no end tag.
    let isEmpty: Bool
    /// Where its `<` is.
    let offset: Int
}

/// The lexical layer of the XML property-list reader: offsets and lines, markup that carries no value
/// (comments, processing instructions, DOCTYPE), tags, and character data with entities and CDATA sections.
struct XMLScanner {
    let bytes: [UInt8]
    var index = 0
    /// The offsets at which lines 2, 3, ... start.
    private let lineStarts: [Int]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var starts: [Int] = []
        for (offset, byte) in bytes.enumerated() where byte == 0x0A { starts.append(offset + 1) }
        lineStarts = starts
    }

    var atEnd: Bool { index >= bytes.count }

    /// The 1-based line of a byte offset.
    func line(at offset: Int) -> Int {
        var low = 0
        var high = lineStarts.count
        while low < high {
            let middle = (low + high) / 2
            if lineStarts[middle] <= offset { low = middle + 1 } else { high = middle }
        }
        return low + 1
    }

    func error(_ message: String, at offset: Int) -> PropertyListError {
        PropertyListError(message, at: .line(line(at: offset)))
    }

    func looks(at literal: [UInt8]) -> Bool {
        guard bytes.count - index >= literal.count else { return false }
        for position in 0..<literal.count where bytes[index + position] != literal[position] { return false }
        return true
    }

    /// Moves just past the next `terminator`; false (at the end) if there is none.
    mutating func skip(past terminator: [UInt8]) -> Bool {
        while index < bytes.count {
            if looks(at: terminator) {
                index += terminator.count
                return true
            }
            index += 1
        }
        return false
    }

    mutating func skipWhitespace() {
        while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
    }

    /// Skips whitespace, comments and processing instructions.
    mutating func skipMisc() throws(PropertyListError) {
        while true {
            skipWhitespace()
            if looks(at: Markup.commentOpen) {
                try skipComment()
            } else if looks(at: Markup.processingOpen) {
                try skipProcessingInstruction()
            } else {
                return
            }
        }
    }

    /// Skips what a container may hold between its elements; any other text is an error.
    mutating func skipMisc(inside container: XMLTag) throws(PropertyListError) {
        try skipMisc()
        guard index < bytes.count, bytes[index] != UInt8(ascii: "<") else { return }
        let end = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
        let text = String(decoding: bytes[index..<end], as: UTF8.self).trimmingINIWhitespace()
        if let directive = Self.preprocessorLine(text) {
            throw error("C preprocessor line '\(directive.visible)': this is a source Info.plist that the build "
                        + "preprocesses (INFOPLIST_PREPROCESS); register the Info.plist the build writes", at: index)
        }
        throw error("unexpected text '\(text.visible)' in <\(container.name)>", at: index)
    }

    mutating func skipComment() throws(PropertyListError) {
        let start = index
        index += Markup.commentOpen.count
        guard skip(past: Markup.commentClose) else { throw error("comment is never closed", at: start) }
    }

    mutating func skipProcessingInstruction() throws(PropertyListError) {
        let start = index
        index += Markup.processingOpen.count
        if looks(at: Array("xml".utf8)) && index + 3 < bytes.count && (Self.isSpace(bytes[index + 3])
            || bytes[index + 3] == UInt8(ascii: "?")) {
            throw error("the XML declaration must come first", at: start)
        }
        guard skip(past: Markup.processingClose) else { throw error("processing instruction is never closed", at: start) }
    }

    /// Skips `<!DOCTYPE ...>`, with quoted strings and an internal subset in brackets.
    mutating func skipDoctype() throws(PropertyListError) {
        let start = index
        index += Markup.doctypeOpen.count
        var quote: UInt8?
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "]") {
                depth -= 1
            } else if byte == UInt8(ascii: ">") && depth <= 0 {
                return
            }
        }
        throw error("<!DOCTYPE is never closed", at: start)
    }

    /// Reads a start tag at `<`; attributes are checked for syntax and ignored.
    mutating func readStartTag() throws(PropertyListError) -> XMLTag {
        let start = index
        index += 1
        let name = readName()
        guard !name.isEmpty else { throw error("malformed tag", at: start) }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error("tag <\(name.abbreviated) is never closed", at: start) }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return XMLTag(name: name, isEmpty: false, offset: start)
            }
            if looks(at: Markup.emptyClose) {
                index += 2
                return XMLTag(name: name, isEmpty: true, offset: start)
            }
            let attribute = readName()
            skipWhitespace()
            guard !attribute.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw error("malformed attribute in <\(name.abbreviated)>", at: start)
            }
            index += 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw error("attribute '\(attribute.abbreviated)' of <\(name.abbreviated)> needs a quoted value",
                            at: start)
            }
            let quote = bytes[index]
            index += 1
            while index < bytes.count, bytes[index] != quote {
                guard bytes[index] != UInt8(ascii: "<") else { throw error("'<' in an attribute value", at: index) }
                index += 1
            }
            guard index < bytes.count else { throw error("tag <\(name.abbreviated) is never closed", at: start) }
            index += 1
        }
    }

    /// Reads `</name>` at `</` and checks that it closes `open`.
    mutating func readEndTag(closing open: XMLTag) throws(PropertyListError) {
        let start = index
        index += 2
        let name = readName()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
            throw error("malformed end tag </\(name.abbreviated)", at: start)
        }
        index += 1
        guard name == open.name else {
            let opened = line(at: open.offset)
            throw error("mismatched tag: <\(open.name)> from line \(opened) closed by </\(name.abbreviated)>", at: start)
        }
    }

    /// The element name at `<` or `</` without moving, for messages.
    func nameAhead() -> String {
        var scanner = self
        scanner.index += scanner.looks(at: Markup.endOpen) ? 2 : 1
        return scanner.readName()
    }

    /// Reads the character data of `open` and its end tag: entities replaced, CDATA taken as it is, comments
    /// skipped; an element inside is an error.
    mutating func readText(of open: XMLTag) throws(PropertyListError) -> String {
        guard !open.isEmpty else { return "" }
        var text: [UInt8] = []
        while true {
            guard index < bytes.count else {
                throw error("<\(open.name)> is never closed", at: open.offset)
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "&") {
                text += try readReference()
            } else if byte != UInt8(ascii: "<") {
                let end = bytes[index...].firstIndex { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") } ?? bytes.count
                text += bytes[index..<end]
                index = end
            } else if looks(at: Markup.endOpen) {
                try readEndTag(closing: open)
                return String(decoding: text, as: UTF8.self)
            } else if looks(at: Markup.commentOpen) {
                try skipComment()
            } else if looks(at: Markup.cdataOpen) {
                let start = index
                index += Markup.cdataOpen.count
                let contentStart = index
                guard skip(past: Markup.cdataClose) else { throw error("CDATA section is never closed", at: start) }
                text += bytes[contentStart..<index - Markup.cdataClose.count]
            } else if looks(at: Markup.processingOpen) {
                try skipProcessingInstruction()
            } else {
                throw error("unexpected <\(nameAhead().abbreviated)> inside <\(open.name)>", at: index)
            }
        }
    }

    /// Reads `&name;`, `&#NN;` or `&#xHH;` at `&` and returns its UTF-8.
    private mutating func readReference() throws(PropertyListError) -> [UInt8] {
        let start = index
        index += 1
        let nameStart = index
        while index < bytes.count, index - nameStart < 10, bytes[index] != UInt8(ascii: ";") { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: ";") else {
            throw error("'&' starts no entity: write &amp; for a literal '&'", at: start)
        }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        index += 1
        switch name {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default: break
        }
        guard name.hasPrefix("#") else { throw error("unknown entity '&\(name);'", at: start) }
        let hex = name.hasPrefix("#x")
        let digits = name.dropFirst(hex ? 2 : 1)
        let valid = !digits.isEmpty && digits.unicodeScalars.allSatisfy {
            hex ? $0.properties.isASCIIHexDigit : ($0.value >= 0x30 && $0.value <= 0x39)
        }
        guard valid, let value = UInt32(digits, radix: hex ? 16 : 10), value != 0,
              let scalar = Unicode.Scalar(value) else {
            throw error("invalid character reference '&\(name);'", at: start)
        }
        return Array(String(Character(scalar)).utf8)
    }

    private mutating func readName() -> String {
        let start = index
        while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// The first line of `text` when it is a C preprocessor directive (`#ifdef DEBUG`, `#include "x.h"`).
    static func preprocessorLine(_ text: String) -> String? {
        guard text.hasPrefix("#") else { return nil }
        let line = String(text.prefix { $0 != "\n" && $0 != "\r" }).trimmingINIWhitespace()
        let word = line.dropFirst().drop { $0 == " " || $0 == "\t" }.prefix { $0.isLetter }
        let directives: Set<Substring> = ["if", "ifdef", "ifndef", "elif", "else", "endif", "include", "import",
                                          "define", "undef", "pragma", "error", "warning", "line"]
        return directives.contains(word) ? line : nil
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
            || byte == UInt8(ascii: ".") || byte >= 0x80
    }
}

/// The markup strings the scanner looks for.
enum Markup {
    static let commentOpen = Array("<!--".utf8)
    static let commentClose = Array("-->".utf8)
    static let processingOpen = Array("<?".utf8)
    static let processingClose = Array("?>".utf8)
    static let doctypeOpen = Array("<!DOCTYPE".utf8)
    static let cdataOpen = Array("<![CDATA[".utf8)
    static let cdataClose = Array("]]>".utf8)
    static let endOpen = Array("</".utf8)
    static let emptyClose = Array("/>".utf8)
    static let declarationOpen = Array("<?xml".utf8)
}
