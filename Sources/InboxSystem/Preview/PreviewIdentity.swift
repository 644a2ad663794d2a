extension PreviewRenderer {
    /// Who the generators run as when inboxctl runs as root: an identity of their own (DynamicIdentity.previewer).
    public static var rootIdentity: Identity { DynamicIdentity.previewer }
}
