/// What a sender attached to one file: the `user.inbox.*` attributes (or its sidecar), as read and checked
/// (docs/design.md, Metadata that rides with a file).
public struct SenderMetadata: Sendable, Hashable {
    /// `user.inbox.source-app`: the claimed sender.
    public var sourceApp: String?
    /// `user.inbox.annotation`: raw JSON text.
    public var annotation: [UInt8]?
    /// `user.inbox.content-type`: the explicit type, as the sender wrote it.
    public var contentType: String?
    /// `user.inbox.handler`: the handler the sender chose (`inboxctl open --with`).
    public var handler: String?
    /// `user.inbox.handler-override` = `yes`: deliver to `handler` even if it does not claim the type (`--force`).
    public var overridesHandlerCheck = false

    public init(sourceApp: String? = nil, annotation: [UInt8]? = nil, contentType: String? = nil, handler: String? = nil,
                overridesHandlerCheck: Bool = false) {
        self.sourceApp = sourceApp
        self.annotation = annotation
        self.contentType = contentType
        self.handler = handler
        self.overridesHandlerCheck = overridesHandlerCheck
    }

    /// Fills in what this lacks from `other`.
    public func merging(_ other: SenderMetadata) -> SenderMetadata {
        SenderMetadata(sourceApp: sourceApp ?? other.sourceApp, annotation: annotation ?? other.annotation,
                       contentType: contentType ?? other.contentType, handler: handler ?? other.handler,
                       overridesHandlerCheck: handler == nil ? other.overridesHandlerCheck : overridesHandlerCheck)
    }
}
