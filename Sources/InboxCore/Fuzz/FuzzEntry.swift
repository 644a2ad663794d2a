/// What the fuzz targets in Tests/Fuzz and the corpus replay in InboxCoreTests feed each input to.
///
/// Each function runs parsers on untrusted bytes and returns the invariants the input broke, empty when
/// none; a trap inside is a bug in the parser. The fuzz targets trap on a non-empty result, the tests assert it.
public enum FuzzEntry {
    /// The fuzz targets whose entry lives here, by the name `scripts/fuzz` knows them by.
    public static let targets: [String: @Sendable ([UInt8]) -> [String]] = [
        "registration": { registration($0) },
        "plist-xml": { xmlPropertyList($0) },
        "plist-binary": { binaryPropertyList($0) },
        "json": { json($0) },
        "sidecar": { sidecar($0) },
        "magic": { magic($0) },
        "zip": { zip($0) },
        "image-header": { imageHeader($0) },
        "png": { png($0) },
        "thumbnailer": { thumbnailer($0) },
        "text-preview": { textPreview($0) },
        "table": { table($0) },
        "pager": { pager($0) },
        "cluster-delivery": { clusterDelivery($0) },
    ]

    /// shared-mime-info's magic parser and matcher: the input as a magic file (with its header, so that the parser
    /// gets past it), matched against itself and against nothing; every bound must hold.
    public static func magic(_ bytes: [UInt8]) -> [String] {
        let source = bytes.starts(with: MagicRules.header) ? bytes : MagicRules.header + bytes
        let rules = MagicRules(sources: [source, bytes])
        var broken: [String] = []
        if rules.extent > MagicRules.maximumExtent { broken.append("extent \(rules.extent) over the bound") }
        for line in rules.sections.lazy.flatMap(\.matchlets) {
            if line.offset > MagicRules.maximumOffset || line.rangeLength > MagicRules.maximumOffset
                || line.value.count > MagicRules.maximumValueLength || (line.mask.map { $0.count != line.value.count } ?? false) {
                broken.append("a line out of bounds: offset \(line.offset), range \(line.rangeLength), \(line.value.count) bytes")
            }
        }
        _ = rules.match(bytes)
        _ = rules.match([UInt8]())
        return broken
    }

    /// The INI lexer and the registration parser: a `.handler` file, and the same bytes as agent configuration.
    public static func registration(_ bytes: [UInt8]) -> [String] {
        let document = INILexer.lex(bytes, path: "fuzz.handler", maximumSize: RegistrationParser.maximumSize)
        var broken: [String] = []
        let lines = bytes.count { $0 == 0x0A } + 1
        for section in document.sections {
            for entry in section.entries where entry.line < section.line || entry.line > lines {
                broken.append("entry \(entry.key) has line \(entry.line), outside \(section.line)...\(lines)")
            }
        }
        let file = RegistrationParser.parse(bytes, path: "fuzz.handler")
        if file.registration != nil && bytes.count > RegistrationParser.maximumSize {
            broken.append("a file over maximumSize gave a registration")
        }
        _ = ConfigurationParser.parseAgent(bytes, path: "fuzz.conf")
        _ = ConfigurationParser.parseDefaults(bytes, path: "defaults.conf")
        return broken
    }

    /// The XML property list reader, then the Info.plist mapping of what it read.
    public static func xmlPropertyList(_ bytes: [UInt8]) -> [String] {
        var reader = XMLPropertyListReader(bytes)
        guard let root = try? reader.read() else { return [] }
        _ = InfoPlist.read(root, path: "fuzz.plist")
        return []
    }

    /// The binary property list reader (any input, with or without the `bplist` magic), then the Info.plist
    /// mapping of what it read.
    public static func binaryPropertyList(_ bytes: [UInt8]) -> [String] {
        guard var reader = try? BinaryPropertyListReader(bytes), let root = try? reader.read() else { return [] }
        _ = InfoPlist.read(root, path: "fuzz.plist")
        return []
    }

    /// The JSON validator, and the readers built on it.
    public static func json(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let problem = JSON.validate(bytes)
        if problem == nil {
            if String(validating: bytes, as: UTF8.self) == nil { broken.append("validate accepted invalid UTF-8") }
            if case .failure(let error) = JSONValue.parse(bytes) { broken.append("parse refused valid JSON: \(error)") }
            if case .failure(let error) = JSON.members(bytes) { broken.append("members refused valid JSON: \(error)") }
        } else if case .success = JSON.members(bytes) {
            broken.append("members accepted what validate refused")
        }
        // Whatever the bytes say as text, quoting it gives a literal that reads back as the same string.
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        let literal = Array(JSON.quote(text).utf8)
        if let reason = JSON.validate(literal) {
            broken.append("quote wrote invalid JSON: \(reason)")
        } else if (try? JSONValue.parse(literal).get())?.string != text {
            broken.append("quote did not read back as the same string")
        }
        return broken
    }

    /// The sidecar parser, and its round trip: the document written for what was read reads back the same.
    public static func sidecar(_ bytes: [UInt8]) -> [String] {
        let (metadata, _) = Sidecar.parse(bytes)
        let document = Sidecar.document(metadata)
        let (again, problems) = Sidecar.parse(document)
        var broken: [String] = []
        if again != metadata { broken.append("the written document read back differently") }
        if !problems.isEmpty { broken.append("the written document has problems: \(problems)") }
        if let annotation = metadata.annotation, JSON.validate(annotation) != nil {
            broken.append("an annotation that is not valid JSON was kept")
        }
        return broken
    }

    /// The cluster's delivery message as a worker host reads it, and its round trip: a message read is within its
    /// bounds (a clean name, valid JSON for an annotation), and the message written for it is no larger than one
    /// read and reads back the same. A refusal is a sentence naming the member at fault.
    public static func clusterDelivery(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let delivery: ClusterDelivery
        switch ClusterDelivery.parse(bytes) {
        case .failure(let error):
            if error.message.isEmpty { broken.append("a refusal without a sentence") }
            if let member = error.member, !error.message.hasPrefix("\"\(member)\" ") {
                broken.append("a refusal that does not start with its member: \(error.message)")
            }
            return broken
        case .success(let read):
            delivery = read
        }
        if bytes.count > ClusterDelivery.maximumBytes { broken.append("a message over maximumBytes was read") }
        if FileNames.sanitized(Array(delivery.name.utf8)) != delivery.name {
            broken.append("a name that is not clean was kept")
        }
        if delivery.name.isEmpty || delivery.name.contains("/") || FileNames.isHidden(Array(delivery.name.utf8)) {
            broken.append("a name that is empty, a path or hidden was kept")
        }
        if let annotation = delivery.annotation, JSON.validate(annotation) != nil {
            broken.append("an annotation that is not valid JSON was kept")
        }
        if !Delivery.isValidID(delivery.id) { broken.append("an invalid delivery id was kept") }
        if delivery.size < 0 || delivery.arrivedAtUSec < 0 { broken.append("a negative number was kept") }
        let written = delivery.encode()
        if written.count > ClusterDelivery.maximumBytes {
            broken.append("the message written is \(written.count) bytes, over maximumBytes")
        }
        switch ClusterDelivery.parse(written) {
        case .success(let again):
            if again != delivery { broken.append("the written message read back differently") }
        case .failure(let error):
            broken.append("the written message was refused: \(error)")
        }
        return broken
    }
}
