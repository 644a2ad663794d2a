/// The hidden file `.<name>.inbox-meta` beside a file, carrying its metadata when extended attributes cannot
/// (ext4 keeps about 4 KB of them per file). A JSON object with the attributes' keys: `source-app` and
/// `content-type` strings, and `annotation` the annotation itself, embedded as a JSON value.
public enum Sidecar {
    public static let suffix = ".inbox-meta"
    /// The largest sidecar read: a maximal annotation, the two other values and the object's syntax.
    public static let maximumBytes = MetadataLimits.annotationBytes + 4096

    public static let sourceAppKey = "source-app"
    public static let annotationKey = "annotation"
    public static let contentTypeKey = "content-type"
    public static let handlerKey = "handler"
    public static let handlerOverrideKey = "handler-override"

    /// `.<name>.inbox-meta` for a file's name (raw bytes: a name need not be UTF-8).
    public static func name(for fileName: [UInt8]) -> [UInt8] { [0x2E] + fileName + Array(suffix.utf8) }

    /// The file name a sidecar name belongs to, nil if `name` is not a sidecar's.
    public static func fileName(ofSidecar name: [UInt8]) -> [UInt8]? {
        let tail = suffix.utf8
        guard name.count > tail.count + 1, name.first == 0x2E, name.suffix(tail.count).elementsEqual(tail) else { return nil }
        return Array(name.dropFirst().dropLast(tail.count))
    }

    /// The sidecar's text for `metadata` (its annotation must be valid JSON).
    public static func document(_ metadata: SenderMetadata) -> [UInt8] {
        var members: [[UInt8]] = []
        if let app = metadata.sourceApp { members.append(Array((JSON.quote(sourceAppKey) + ":" + JSON.quote(app)).utf8)) }
        if let annotation = metadata.annotation { members.append(Array((JSON.quote(annotationKey) + ":").utf8) + annotation) }
        if let type = metadata.contentType {
            members.append(Array((JSON.quote(contentTypeKey) + ":" + JSON.quote(type)).utf8))
        }
        if let handler = metadata.handler { members.append(Array((JSON.quote(handlerKey) + ":" + JSON.quote(handler)).utf8)) }
        if metadata.overridesHandlerCheck { members.append(Array((JSON.quote(handlerOverrideKey) + ":\"yes\"").utf8)) }
        return Array("{".utf8) + members.joined(separator: Array(",".utf8)) + Array("}\n".utf8)
    }

    /// Reads a sidecar. Each value is checked like its attribute; a bad one is left out and its problem returned,
    /// the others are kept. A document that is not a JSON object gives no metadata at all.
    public static func parse(_ bytes: [UInt8]) -> (metadata: SenderMetadata, problems: [String]) {
        if bytes.count > maximumBytes { return (SenderMetadata(), ["it is \(bytes.count) bytes, over the limit of \(maximumBytes)"]) }
        let members: [(key: String, raw: [UInt8])]
        switch JSON.members(bytes) {
        case .failure(let error): return (SenderMetadata(), ["it is not valid JSON: \(error.message)"])
        case .success(nil): return (SenderMetadata(), ["it is not a JSON object"])
        case .success(let found?): members = found
        }
        var metadata = SenderMetadata()
        var problems: [String] = []
        for (key, raw) in members {
            switch key {
            case sourceAppKey:
                if let app = string(raw), SourceApplication.isValid(app) { metadata.sourceApp = app } else {
                    problems.append("'\(sourceAppKey)' is not a valid source application")
                }
            case annotationKey:
                if raw.count <= MetadataLimits.annotationBytes { metadata.annotation = raw } else {
                    problems.append("'\(annotationKey)' is \(raw.count) bytes, over the limit of \(MetadataLimits.annotationBytes)")
                }
            case contentTypeKey:
                if let type = string(raw), !type.isEmpty, type.utf8.count <= MetadataLimits.contentTypeBytes {
                    metadata.contentType = type
                } else {
                    problems.append("'\(contentTypeKey)' is not a string of 1 to \(MetadataLimits.contentTypeBytes) bytes")
                }
            case handlerKey:
                if let handler = string(raw), HandlerIdentifier.isValid(handler) { metadata.handler = handler } else {
                    problems.append("'\(handlerKey)' is not a valid handler identifier")
                }
            case handlerOverrideKey:
                if string(raw) == "yes" { metadata.overridesHandlerCheck = true } else {
                    problems.append("'\(handlerOverrideKey)' is not \"yes\"")
                }
            default:
                problems.append("unknown key '\(key.prefix(64))'")
            }
        }
        return (metadata, problems)
    }

    private static func string(_ raw: [UInt8]) -> String? {
        (try? JSONValue.parse(raw).get())?.string
    }
}
