/// What a handler is told about its delivery, in the two forms of the launch contract: `INBOX_*` environment
/// variables and one JSON object on stdin (a resident handler gets the same object as a message).
extension Delivery {
    /// The largest annotation passed in `INBOX_ANNOTATION` (the kernel limits one environment string to 128 KiB).
    public static let environmentAnnotationLimit = MetadataLimits.environmentAnnotationBytes

    /// The handler environment as "KEY=value" strings. INBOX_SOURCE_APP, INBOX_SOURCE_UID and INBOX_ANNOTATION are
    /// omitted when absent, INBOX_REDELIVERED unless it is 1; INBOX_ANNOTATION also when the annotation is over
    /// `environmentAnnotationLimit`.
    public func environment() -> [String] {
        var environment = [
            "INBOX_FILE=" + path,
            "INBOX_URL=" + url,
            "INBOX_NAME=" + name,
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
        let optional: (String?) -> String = { $0.map(JSON.quote) ?? "null" }
        var text = "{"
        text += "\"file\":" + JSON.quote(path)
        text += ",\"url\":" + JSON.quote(url)
        text += ",\"name\":" + JSON.quote(name)
        text += ",\"contentType\":" + JSON.quote(contentType)
        text += ",\"contentTypes\":[" + contentTypes.map(JSON.quote).joined(separator: ",") + "]"
        text += ",\"sourceApplication\":" + optional(sourceApp)
        text += ",\"sourceUID\":" + (sourceUID.map { "\($0)" } ?? "null")
        text += ",\"annotation\":"
        var document = Array(text.utf8)
        document += validAnnotation ?? Array("null".utf8)
        text = ",\"deliveryID\":" + JSON.quote(id)
        text += ",\"attempt\":\(attempt)"
        text += ",\"redelivered\":\(redelivered)"
        text += ",\"documents\":" + JSON.quote(documents)
        text += ",\"handler\":" + JSON.quote(handler)
        if let preview {
            text += ",\"preview\":{\"title\":" + JSON.quote(preview.title) + ",\"index\":\(preview.index),\"count\":\(preview.count)}"
        }
        text += "}\n"
        document += text.utf8
        return document
    }

    /// The annotation if it is valid JSON; anything else is treated as absent rather than passed on broken.
    private var validAnnotation: [UInt8]? {
        guard let annotation, JSON.validate(annotation) == nil else { return nil }
        return annotation
    }
}
