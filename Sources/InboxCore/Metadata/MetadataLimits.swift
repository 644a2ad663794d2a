/// Bounds on metadata that travels with a file; anything larger is rejected or truncated by the caller.
public enum MetadataLimits {
    /// `user.inbox.annotation` or the sidecar's annotation.
    public static let annotationBytes = 64 * 1024
    /// `user.inbox.source-app`.
    public static let sourceAppBytes = 256
    /// `user.inbox.content-type`.
    public static let contentTypeBytes = 256
    /// The largest annotation passed in `INBOX_ANNOTATION`; larger ones travel only on stdin.
    public static let environmentAnnotationBytes = 16 * 1024
}

/// The claimed sender of a file (`user.inbox.source-app`).
public enum SourceApplication {
    /// Non-empty printable ASCII without spaces (reverse-DNS-ish), at most `MetadataLimits.sourceAppBytes` bytes.
    public static func isValid(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= MetadataLimits.sourceAppBytes && s.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

/// A handler's identifier as a sender names it (`user.inbox.handler`): printable ASCII without spaces, at most
/// `MetadataLimits.sourceAppBytes` bytes, like a source application.
public enum HandlerIdentifier {
    public static func isValid(_ s: String) -> Bool { SourceApplication.isValid(s) }
}
