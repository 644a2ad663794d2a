/// Everything a handler is told about one delivery (DESIGN.md, "What a handler receives").
public struct DeliveryMetadata: Sendable, Hashable {
    /// The largest annotation passed in `INBOX_ANNOTATION` (the kernel limits one environment string to 128 KiB).
    public static let environmentAnnotationLimit = MetadataLimits.environmentAnnotationBytes

    /// A unique identifier for this delivery, stable across attempts.
    public var deliveryID: String
    /// The file's path in the handler's Inbox.
    public var path: String { didSet { url = fileURL(forPath: path) } }
    /// `path` as a file:// URL, kept in step with it (it goes into the environment and the stdin document).
    public private(set) var url: String
    /// The file's name as it arrived.
    public var name: String
    /// The file's UTI.
    public var contentType: String
    /// The UTI's conformance chain, the UTI first.
    public var contentTypes: [String]
    /// The claimed sender (`user.inbox.source-app`).
    public var sourceApp: String?
    /// The uid that owned the dropped file.
    public var sourceUID: UInt32?
    /// Raw JSON text of the annotation, already checked with `JSON.validate`.
    public var annotation: [UInt8]?
    /// 1-based attempt number.
    public var attempt: Int
    /// The handler's Documents directory, where it copies files it keeps.
    public var documents: String
    /// The handler's identifier.
    public var handler: String
    /// Set when a viewer is run by `inboxctl preview`: the file is shown, not delivered.
    public var preview: Preview?

    /// What a viewer is told about a preview (`QLPreviewController` items and their titles).
    public struct Preview: Sendable, Hashable {
        /// The title to show: `--title`, else the file's name.
        public var title: String
        /// 1-based position among the files previewed together, and how many there are.
        public var index: Int
        public var count: Int

        public init(title: String, index: Int, count: Int) {
            self.title = title
            self.index = index
            self.count = count
        }
    }

    /// Creates delivery metadata.
    public init(deliveryID: String, path: String, name: String, contentType: String, contentTypes: [String],
                sourceApp: String? = nil, sourceUID: UInt32? = nil, annotation: [UInt8]? = nil, attempt: Int,
                documents: String, handler: String) {
        self.deliveryID = deliveryID
        self.path = path
        self.url = fileURL(forPath: path)
        self.name = name
        self.contentType = contentType
        self.contentTypes = contentTypes
        self.sourceApp = sourceApp
        self.sourceUID = sourceUID
        self.annotation = annotation
        self.attempt = attempt
        self.documents = documents
        self.handler = handler
    }

    /// The handler environment as "KEY=value" strings. INBOX_SOURCE_APP, INBOX_SOURCE_UID and INBOX_ANNOTATION are
    /// omitted when absent; INBOX_ANNOTATION also when the annotation is over `environmentAnnotationLimit`.
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
            "INBOX_DELIVERY_ID=" + deliveryID,
            "INBOX_ATTEMPT=\(attempt)",
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
        text = ",\"deliveryID\":" + JSON.quote(deliveryID)
        text += ",\"attempt\":\(attempt)"
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
