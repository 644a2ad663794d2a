/// What a handler is told about its delivery, in the two forms of the launch contract: `INBOX_*` environment
/// variables and one JSON object on stdin (a resident handler gets the same object as a message).
extension Delivery {
    /// The largest annotation passed in `INBOX_ANNOTATION` (the kernel limits one environment string to 128 KiB).
    public static let environmentAnnotationLimit = MetadataLimits.environmentAnnotationBytes

    /// The handler environment as "KEY=value" strings. INBOX_SOURCE_APP, INBOX_SOURCE_UID and INBOX_ANNOTATION are
    /// omitted when absent, INBOX_REDELIVERED and INBOX_PACKAGE unless they are 1; INBOX_ANNOTATION also when the
    /// annotation is over `environmentAnnotationLimit`.
    public func environment() -> [String] {
        var environment = [
            "INBOX_FILE=" + path,
            "INBOX_URL=" + url,
            "INBOX_NAME=" + name,
        ]
        // A package is a directory: INBOX_FILE and INBOX_URL name it, without a trailing slash.
        if isPackage { environment.append("INBOX_PACKAGE=1") }
        environment += [
            "INBOX_CONTENT_TYPE=" + contentType,
            "INBOX_CONTENT_TYPES=" + contentTypes.joined(separator: " "),
        ]
        if let sourceApp { environment.append("INBOX_SOURCE_APP=" + sourceApp) }
        if let sourceUID { environment.append("INBOX_SOURCE_UID=\(sourceUID)") }
        if let annotation = validAnnotation, annotation.count <= Self.environmentAnnotationLimit {
            environment.append("INBOX_ANNOTATION=" + String(decoding: annotation, as: UTF8.self))
        }
        environment += [
            "INBOX_DELIVERY_ID=" + id,
            "INBOX_ATTEMPT=\(attempt)",
        ]
        if redelivered { environment.append("INBOX_REDELIVERED=1") }
        environment += [
            "INBOX_DOCUMENTS=" + documents,
            "INBOX_HANDLER=" + handler,
        ]
        if let preview {
            environment += ["INBOX_PREVIEW=1", "INBOX_TITLE=" + preview.title, "INBOX_PREVIEW_INDEX=\(preview.index)",
                            "INBOX_PREVIEW_COUNT=\(preview.count)"]
        }
        return environment
    }

    /// The same as one JSON object followed by a newline; the annotation is embedded whole, absent values are null.
    public func stdinDocument() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512 + path.utf8.count * 3 + (annotation?.count ?? 0))
        func key(_ name: StaticString) {
            name.withUTF8Buffer { out += $0 }
        }
        func string(_ value: String?) {
            if let value { JSON.appendQuoted(value, to: &out) } else { key("null") }
        }
        key("{\"file\":"); string(path)
        key(",\"url\":"); string(url)
        key(",\"name\":"); string(name)
        key(",\"package\":"); out += String(isPackage).utf8
        key(",\"contentType\":"); string(contentType)
        key(",\"contentTypes\":[")
        for (index, type) in contentTypes.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            string(type)
        }
        key("],\"sourceApplication\":"); string(sourceApp)
        key(",\"sourceUID\":"); out += sourceUID.map { Array(String($0).utf8) } ?? Array("null".utf8)
        key(",\"annotation\":"); out += validAnnotation ?? Array("null".utf8)
        key(",\"deliveryID\":"); string(id)
        key(",\"attempt\":"); out += String(attempt).utf8
        key(",\"redelivered\":"); out += String(redelivered).utf8
        key(",\"documents\":"); string(documents)
        key(",\"handler\":"); string(handler)
        if let preview {
            key(",\"preview\":{\"title\":"); string(preview.title)
            key(",\"index\":"); out += String(preview.index).utf8
            key(",\"count\":"); out += String(preview.count).utf8
            out.append(UInt8(ascii: "}"))
        }
        key("}\n")
        return out
    }

    /// The annotation if it is valid JSON; anything else is treated as absent rather than passed on broken.
    private var validAnnotation: [UInt8]? {
        guard let annotation, JSON.validate(annotation) == nil else { return nil }
        return annotation
    }
}
