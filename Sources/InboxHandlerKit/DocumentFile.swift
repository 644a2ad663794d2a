
/// A file in the handler's Documents directory (or anywhere it may write), opened for appending: where a handler
/// keeps what it took from its deliveries.
public final class DocumentFile {
    private let descriptor: Int32

    /// Opens (creating, mode 0600) `name` in `directory` (the deliveries' `documents`, or `INBOX_DOCUMENTS`) for
    /// appending.
    public init(appendingTo name: String, in directory: String? = nil) throws {
        let base = directory ?? sys_getenv("INBOX_DOCUMENTS") ?? "."
        let path = base.hasSuffix("/") ? base + name : base + "/" + name
        descriptor = kitOpenAppend(path)
        guard descriptor >= 0 else { throw InboxError(description: "open \(path): \(sys_strerror(sys_errno()))") }
    }

    deinit { sys_close(descriptor) }

    /// Appends `text` in one write (O_APPEND: lines of concurrent writers do not interleave).
    public func append(_ text: String) throws {
        var text = text
        let written = text.withUTF8 { kitWrite(descriptor, UnsafeRawBufferPointer($0)) }
        guard written == text.utf8.count else { throw InboxError(description: "write: \(sys_strerror(sys_errno()))") }
    }
}
