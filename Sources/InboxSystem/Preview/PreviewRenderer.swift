import InboxCore

/// A document to preview: held by descriptor (opened with the no-link rules: a regular file, or a package's
/// directory), never opened again by name.
public struct PreviewDocument: Sendable {
    /// `O_RDONLY` of the regular file, or `O_RDONLY|O_DIRECTORY` of a package document; the caller owns it.
    public var descriptor: FileDescriptor
    /// The file's own name (for an extension a generator needs, and the facts).
    public var name: String
    public var contentType: String
    /// The type's MIME types, preferred first (for thumbnailers).
    public var mimeTypes: [String]
    public var size: Int64
    public var package: Bool

    public init(descriptor: FileDescriptor, name: String, contentType: String, mimeTypes: [String], size: Int64,
                package: Bool) {
        self.descriptor = descriptor
        self.name = name
        self.contentType = contentType
        self.mimeTypes = mimeTypes
        self.size = size
        self.package = package
    }
}

/// What a generator made of one document.
public struct RenderedPreview: Sendable {
    public enum Content: Sendable {
        /// PNG pages in the renderer's scratch directory, in order (removed with the renderer).
        case pictures([String])
        /// Decoded text, paged by the presenter.
        case text(DecodedText)
        /// A table, paged by the presenter.
        case table(DelimitedTable)
    }

    public var content: Content
    /// The pages the document has; more than `pictures` when `maximumPages` cut it.
    public var pageCount: Int
    /// Lines for the person: the encoding, pages left out, which generator.
    public var notes: [String]

    public init(content: Content, pageCount: Int, notes: [String]) {
        self.content = content
        self.pageCount = pageCount
        self.notes = notes
    }
}

/// Why a document could not be previewed; `description` is the sentence shown after the file's name.
public enum PreviewError: Error, Sendable, CustomStringConvertible {
    /// No generator here reads it; the text names the Debian package that would (`libreoffice-writer-nogui`, ...).
    case unsupported(String)
    /// Refused before any generator ran: over a bound (pixels, declared zip sizes, pages).
    case refused(String)
    /// The generator ran and failed: its status and its last lines of output.
    case failed(String)
    /// Stopped at the time bound.
    case timedOut(Duration)
    /// The scratch directory or the spawn failed.
    case system(SystemError)

    public var description: String {
        switch self {
        case .unsupported(let why), .refused(let why), .failed(let why): why
        case .timedOut(let limit): "the generator was stopped after \(limit)"
        case .system(let error): "\(error)"
        }
    }
}

/// Runs Quick Look's built-in generators, each sandboxed as a viewer is (PreviewSession): under `identity` (nil: the
/// caller), Landlock reading everywhere and writing only in the renderer's scratch directory, bounded in time
/// (`timeout`), memory (`RLIMIT_AS`), file size (`RLIMIT_FSIZE`) and pages.
public final class PreviewRenderer {
    public struct Options: Sendable {
        /// The longest side of a picture page, in pixels.
        public var size: Int = 1024
        /// Pages rendered at most per document.
        public var maximumPages: Int = 100
        public var timeout: Duration = .seconds(60)
        /// Bytes of address space a generator may use (LibreOffice gets `officeAddressSpace`).
        public var addressSpace: UInt64 = 2 << 30
        public var officeAddressSpace: UInt64 = 8 << 30
        /// Bytes a generator may write to one file.
        public var fileSize: UInt64 = 1 << 30
        /// Pixels a picture may declare (width × height) before any decoder runs.
        public var maximumPixels: Int = 16384 * 16384
        /// Bytes a zip-based document's members may declare in all.
        public var maximumUnpackedSize: UInt64 = 1 << 30
        /// Bytes of a text file read for its preview.
        public var maximumTextBytes: Int = 16 << 20

        public init() {}
    }

    public let options: Options

    public init(identity: Identity?, landlockABI: Int, options: Options,
                thumbnailers: [ThumbnailerEntry]) throws(SystemError) {
        fatalError("PreviewRenderer.init: to be written")
    }

    /// Renders `document` with `generator`.
    public func render(_ document: PreviewDocument, with generator: PreviewGenerator) -> Result<RenderedPreview, PreviewError> {
        fatalError("PreviewRenderer.render: to be written")
    }

    /// Text pages (lines, as `PreviewPages` laid them out) drawn as PNG pictures, one per page, in a monospace font
    /// (pango-view), for `--output` and thumbnails.
    public func pictures(ofTextPages pages: [[String]]) -> Result<[String], PreviewError> {
        fatalError("PreviewRenderer.pictures: to be written")
    }

    /// A PNG page drawn for a terminal of `columns` × `rows` cells with chafa (its symbols, or sixel/kitty graphics
    /// as `format` says or chafa detects from `environment`), as the bytes to write to the terminal.
    public func terminalPicture(_ png: String, columns: Int, rows: Int, format: String?,
                                environment: [String]) -> Result<[UInt8], PreviewError> {
        fatalError("PreviewRenderer.terminalPicture: to be written")
    }
}
