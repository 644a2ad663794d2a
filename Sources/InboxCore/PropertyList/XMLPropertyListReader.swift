/// Reads an XML property list (Apple's plist DTD, as CoreFoundation and Python's plistlib write it).
///
/// UTF-8, or UTF-16 with a byte-order mark (which `init(transcoding:)` turns into UTF-8 first). Every error carries
/// the line it was found on; nesting is bounded by `PropertyList.maximumDepth`.
struct XMLPropertyListReader {
    private var scanner: XMLScanner
    /// The encoding the bytes came in, when they were transcoded: the declaration may name it.
    private var transcodedFrom: String?
    /// Repeated dict keys, each kept as its last value.
    private(set) var warnings: [PropertyListError] = []

    init(_ bytes: [UInt8]) {
        scanner = XMLScanner(bytes)
    }

    /// Reads UTF-16 with a byte-order mark (as some editors and old tools save plists) as the UTF-8 it
    /// stands for; other bytes as they are. Lines are the same in both.
    init(transcoding bytes: [UInt8]) throws(PropertyListError) {
        let bigEndian = bytes.starts(with: [0xFE, 0xFF])
        guard bigEndian || bytes.starts(with: [0xFF, 0xFE]) else {
            self.init(bytes)
            return
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = 2
        while index + 1 < bytes.count {
            let (high, low) = bigEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
            units.append(UInt16(high) << 8 | UInt16(low))
            index += 2
        }
        guard bytes.count % 2 == 0, let text = String(validating: units, as: UTF16.self) else {
            throw PropertyListError("not valid UTF-16 (the file starts with a UTF-16 byte-order mark)", at: .line(1))
        }
        self.init(Array(text.utf8))
        transcodedFrom = "UTF-16"
    }

    mutating func read() throws(PropertyListError) -> PropertyListNode {
        try checkEncoding()
        if scanner.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        try readDeclaration()
        try scanner.skipMisc()
        if scanner.looks(at: Markup.doctypeOpen) {
            try scanner.skipDoctype()
            try scanner.skipMisc()
        }
        guard !scanner.atEnd else { throw scanner.error("no <plist> element", at: scanner.index) }
        guard scanner.bytes[scanner.index] == UInt8(ascii: "<"), !scanner.looks(at: Markup.endOpen) else {
            throw scanner.error("expected <plist>", at: scanner.index)
        }
        let plist = try scanner.readStartTag()
        guard plist.name == "plist" else {
            throw scanner.error("expected <plist>, found <\(plist.name.abbreviated)>", at: plist.offset)
        }
        guard !plist.isEmpty else { throw scanner.error("<plist> holds no value", at: plist.offset) }
        try scanner.skipMisc(inside: plist)
        guard !scanner.atEnd, !scanner.looks(at: Markup.endOpen) else {
            if scanner.atEnd { throw scanner.error("<plist> is never closed", at: plist.offset) }
            throw scanner.error("<plist> holds no value", at: plist.offset)
        }
        let root = try readValue(depth: 1, inside: plist)
        try scanner.skipMisc(inside: plist)
        guard !scanner.atEnd else { throw scanner.error("<plist> is never closed", at: plist.offset) }
        guard scanner.looks(at: Markup.endOpen) else {
            throw scanner.error("<plist> holds more than one value", at: scanner.index)
        }
        try scanner.readEndTag(closing: plist)
        try scanner.skipMisc()
        guard scanner.atEnd else { throw scanner.error("unexpected content after </plist>", at: scanner.index) }
        return root
    }

    /// The file must be UTF-8 without NUL bytes; the error names the first bad line.
    private func checkEncoding() throws(PropertyListError) {
        let bytes = scanner.bytes
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            let line = bytes[start..<end]
            if String(validating: line, as: UTF8.self) == nil { throw scanner.error("not valid UTF-8", at: start) }
            if line.contains(0) { throw scanner.error("NUL byte", at: start) }
            start = end + 1
        }
    }

    /// `<?xml version="1.0" encoding="UTF-8"?>`, which may only come first; any encoding but UTF-8 is refused.
    private mutating func readDeclaration() throws(PropertyListError) {
        guard scanner.looks(at: Markup.declarationOpen), scanner.index + 5 < scanner.bytes.count,
              XMLScanner.isSpace(scanner.bytes[scanner.index + 5]) else { return }
        let start = scanner.index
        guard scanner.skip(past: Markup.processingClose) else {
            throw scanner.error("XML declaration is never closed", at: start)
        }
        let declaration = String(decoding: scanner.bytes[start..<scanner.index], as: UTF8.self)
        guard let range = declaration.firstRange(of: "encoding") else { return }
        let rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else {
            throw scanner.error("malformed XML declaration", at: start)
        }
        let encoding = rest.dropFirst().prefix { $0 != quote }
        let transcoded = transcodedFrom.map { [$0.lowercased(), $0.lowercased() + "le", $0.lowercased() + "be"] } ?? []
        guard (["utf-8", "utf8", "us-ascii", "ascii"] + transcoded).contains(encoding.lowercased()) else {
            throw scanner.error("encoding '\(String(encoding).abbreviated)' is not supported: use UTF-8", at: start)
        }
    }

    /// Reads one value element at `<`; `container` is the element it sits in, for messages.
    private mutating func readValue(depth: Int, inside container: XMLTag) throws(PropertyListError) -> PropertyListNode {
        let offset = scanner.index
        if scanner.looks(at: Markup.cdataOpen) {
            throw scanner.error("unexpected CDATA section in <\(container.name)>", at: offset)
        }
        let tag = try scanner.readStartTag()
        let location = PropertyListLocation.line(scanner.line(at: offset))
        switch tag.name {
        case "dict":
            return PropertyListNode(.dict(try readDict(tag, depth: depth)), at: location)
        case "array":
            return PropertyListNode(.array(try readArray(tag, depth: depth)), at: location)
        case "string":
            return PropertyListNode(.string(try scanner.readText(of: tag)), at: location)
        case "integer":
            let text = try scanner.readText(of: tag).trimmingINIWhitespace()
            guard let value = PropertyListText.integer(text) else {
                throw scanner.error("invalid integer '\(text.abbreviated)'", at: offset)
            }
            return PropertyListNode(.integer(value), at: location)
        case "real":
            let text = try scanner.readText(of: tag).trimmingINIWhitespace()
            guard let value = PropertyListText.real(text) else {
                throw scanner.error("invalid real '\(text.abbreviated)'", at: offset)
            }
            return PropertyListNode(.real(value), at: location)
        case "true", "false":
            let text = try scanner.readText(of: tag)
            guard text.trimmingINIWhitespace().isEmpty else {
                throw scanner.error("<\(tag.name)> must be empty", at: offset)
            }
            return PropertyListNode(.bool(tag.name == "true"), at: location)
        case "date":
            let text = try scanner.readText(of: tag).trimmingINIWhitespace()
            guard let value = PropertyListText.date(text) else {
                throw scanner.error("invalid date '\(text.abbreviated)': expected YYYY-MM-DDTHH:MM:SSZ", at: offset)
            }
            return PropertyListNode(.date(value), at: location)
        case "data":
            guard let value = PropertyListText.base64(try scanner.readText(of: tag)) else {
                throw scanner.error("invalid base64 in <data>", at: offset)
            }
            return PropertyListNode(.data(value), at: location)
        case "key":
            throw scanner.error("<key> outside a <dict>", at: offset)
        default:
            throw scanner.error("unknown element <\(tag.name.abbreviated)>", at: offset)
        }
    }

    private mutating func checkDepth(_ depth: Int, _ tag: XMLTag) throws(PropertyListError) {
        guard depth <= PropertyList.maximumDepth else {
            throw scanner.error("nested deeper than \(PropertyList.maximumDepth) levels", at: tag.offset)
        }
    }

    private mutating func readArray(_ tag: XMLTag, depth: Int) throws(PropertyListError) -> [PropertyListNode] {
        try checkDepth(depth, tag)
        guard !tag.isEmpty else { return [] }
        var elements: [PropertyListNode] = []
        while true {
            try scanner.skipMisc(inside: tag)
            guard !scanner.atEnd else { throw scanner.error("<array> is never closed", at: tag.offset) }
            if scanner.looks(at: Markup.endOpen) {
                try scanner.readEndTag(closing: tag)
                return elements
            }
            elements.append(try readValue(depth: depth + 1, inside: tag))
        }
    }

    private mutating func readDict(_ tag: XMLTag, depth: Int) throws(PropertyListError) -> [PropertyListEntry] {
        try checkDepth(depth, tag)
        guard !tag.isEmpty else { return [] }
        var entries: [PropertyListEntry] = []
        var seen: [String: Int] = [:]
        while true {
            try scanner.skipMisc(inside: tag)
            guard !scanner.atEnd else { throw scanner.error("<dict> is never closed", at: tag.offset) }
            if scanner.looks(at: Markup.endOpen) {
                try scanner.readEndTag(closing: tag)
                return entries
            }
            let keyOffset = scanner.index
            let keyLine = scanner.line(at: keyOffset)
            guard scanner.nameAhead() == "key" else {
                let name = scanner.nameAhead().abbreviated
                throw scanner.error("<\(name)> in <dict> without a <key> before it", at: keyOffset)
            }
            let key = try scanner.readText(of: try scanner.readStartTag())
            try scanner.skipMisc(inside: tag)
            guard !scanner.atEnd else { throw scanner.error("<dict> is never closed", at: tag.offset) }
            if scanner.looks(at: Markup.endOpen) || scanner.nameAhead() == "key" {
                throw scanner.error("key '\(key.abbreviated)' has no value", at: keyOffset)
            }
            let value = try readValue(depth: depth + 1, inside: tag)
            // CoreFoundation and plistlib keep the last of repeated keys; so do we, and say so.
            if let first = seen[key], let earlier = entries.firstIndex(where: { $0.key == key }) {
                warnings.append(scanner.error("duplicate key '\(key.visible)' (first on line \(first)): the last one is used",
                                              at: keyOffset))
                entries.remove(at: earlier)
            }
            seen[key] = keyLine
            entries.append(PropertyListEntry(key: key, at: .line(keyLine), value: value))
        }
    }
}
