/// What a handler is told about its delivery, in the two forms of the launch contract: `INBOX_*` environment
/// variables and one JSON object on stdin (a resident handler gets the same object as a message).
extension Delivery {
    /// The largest annotation passed in `INBOX_ANNOTATION` (the kernel limits one environment string to 128 KiB).
    public static let environmentAnnotationLimit = MetadataLimits.environmentAnnotationBytes

    /// The handler environment as "KEY=value" strings. INBOX_SOURCE_APP, INBOX_SOURCE_UID, INBOX_SOURCE_HOST and
    /// INBOX_ANNOTATION are
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
        if let sourceHost { environment.append("INBOX_SOURCE_HOST=" + sourceHost) }
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
        var out = JSONBytes(capacity: 512 + path.utf8.count * 3 + (annotation?.count ?? 0))
        out.raw("{\"file\":"); out.string(path)
        out.raw(",\"url\":"); out.string(url)
        out.raw(",\"name\":"); out.string(name)
        out.raw(",\"package\":"); out.boolean(isPackage)
        out.raw(",\"contentType\":"); out.string(contentType)
        out.raw(",\"contentTypes\":"); out.strings(contentTypes)
        out.raw(",\"sourceApplication\":"); out.string(sourceApp)
        out.raw(",\"sourceUID\":"); out.integer(sourceUID)
        out.raw(",\"sourceHost\":"); out.string(sourceHost)
        out.raw(",\"annotation\":"); out.raw(validAnnotation ?? Array("null".utf8))
        out.raw(",\"deliveryID\":"); out.string(id)
        out.raw(",\"attempt\":"); out.integer(attempt)
        out.raw(",\"redelivered\":"); out.boolean(redelivered)
        out.raw(",\"documents\":"); out.string(documents)
        out.raw(",\"handler\":"); out.string(handler)
        if let preview {
            out.raw(",\"preview\":{\"title\":"); out.string(preview.title)
            out.raw(",\"index\":"); out.integer(preview.index)
            out.raw(",\"count\":"); out.integer(preview.count)
            out.raw("}")
        }
        out.raw("}\n")
        return out.bytes
    }

    /// The annotation if it is valid JSON; anything else is treated as absent rather than passed on broken.
    private var validAnnotation: [UInt8]? {
        guard let annotation, JSON.validate(annotation) == nil else { return nil }
        return annotation
    }
}
