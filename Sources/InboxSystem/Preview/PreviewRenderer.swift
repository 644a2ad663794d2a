import Glibc
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
    /// Who the generators run as; nil is the caller.
    let identity: Identity?
    let landlockABI: Int
    let thumbnailers: [ThumbnailerEntry]
    let scratch: PreviewScratch
    let sandbox: GeneratorSandbox

    /// Who the generators should run as for this process: as root, an identity of their own
    /// (`inboxd-previewer`, uid 0x70010001, no account), which reads only the copies made for it; else the caller.
    public static var defaultIdentity: Identity? { CurrentProcess.isRoot ? DynamicIdentity.previewer : nil }

    public init(identity: Identity?, landlockABI: Int, options: Options,
                thumbnailers: [ThumbnailerEntry]) throws(SystemError) {
        // The caller's own uid needs no identity change, nor copies: its files are readable as they are.
        let identity = identity.flatMap { $0.uid == CurrentProcess.userID ? nil : $0 }
        self.identity = identity
        self.landlockABI = landlockABI
        self.options = options
        self.thumbnailers = thumbnailers
        scratch = try PreviewScratch(identity: identity)
        sandbox = GeneratorSandbox(scratch: scratch, identity: identity, landlockABI: landlockABI,
                                   timeout: options.timeout)
    }

    /// Removes the scratch directory and every picture in it now (deinit does too).
    public func close() { scratch.remove() }

    deinit { scratch.remove() }

    /// Renders `document` with `generator`.
    public func render(_ document: PreviewDocument, with generator: PreviewGenerator) -> Result<RenderedPreview, PreviewError> {
        if document.package, generator != .iWork, generator != .facts {
            return .failure(.unsupported("is a package (a directory); no built-in generator reads "
                                         + "\(document.contentType) packages"))
        }
        let file = document.descriptor
        switch generator {
        case .pdf: return renderPDF(file)
        case .postscript: return renderPostScript(file)
        case .image: return renderImage(file, name: document.name)
        case .text: return readText(document).map { text in
            RenderedPreview(content: .text(text), pageCount: 1, notes: textNotes(text, document))
        }
        case .table(let delimiter): return readText(document).map { text in
            let table = DelimitedTable.parse(text.lines.joined(separator: "\n"), delimiter: delimiter)
            var notes = textNotes(text, document)
            if table.truncated { notes.append("rows or columns past the table's bounds were left out") }
            return RenderedPreview(content: .table(table), pageCount: 1, notes: notes)
        }
        case .office: return renderOffice(document)
        case .iWork: return renderIWork(document)
        case .thumbnailer(let entry): return renderThumbnailer(entry, document)
        case .facts: return .failure(.unsupported("no built-in generator reads \(document.contentType)"))
        }
    }

    /// Text pages (lines, as `PreviewPages` laid them out) drawn as PNG pictures, one per page, in a monospace font
    /// (pango-view), for `--output` and thumbnails.
    public func pictures(ofTextPages pages: [[String]]) -> Result<[String], PreviewError> {
        let pango: String
        switch GeneratorTool.pango.locate() {
        case .success(let path): pango = path
        case .failure(let error): return .failure(error)
        }
        let run: (directory: Directory, index: Int)
        do { run = try scratch.makeRunDirectory() } catch { return .failure(.system(error)) }
        var pictures: [String] = []
        for (number, lines) in pages.enumerated() {
            let text: String
            do { text = try scratch.writeInput("text-\(run.index)-\(number + 1).txt",
                                                bytes: Array(lines.joined(separator: "\n").utf8) + [0x0A]) } catch {
                return .failure(.system(error))
            }
            // Drawn at 96 dpi; a page larger than `size` is drawn again at a lower resolution until it fits.
            var dpi = 96
            var attempt = 0
            while true {
                attempt += 1
                let output = "page-\(number + 1)-\(attempt).png"
                let margin = max(1, 16 * dpi / 96)
                var process = GeneratorProcess("pango-view", executable: pango, arguments: [
                    "--no-display", "--font=DejaVu Sans Mono 11", "--dpi=\(dpi)", "--margin=\(margin)",
                    "--background=white", "--foreground=black", "--output=" + run.directory.child(output), text,
                ], addressSpace: options.addressSpace, fileSize: options.fileSize)
                process.writable = [run.directory.path]
                if case .failure(let error) = sandbox.run(process) { return .failure(error) }
                guard let picture = scratch.collect(Array(output.utf8), from: run.directory,
                                                    as: "\(run.index)-text-\(number + 1)-\(attempt).png") else {
                    return .failure(.failed("pango-view drew no picture of page \(number + 1)"))
                }
                let longest = Self.longestSide(of: picture)
                // Glyphs are hinted to whole pixels, so a page does not shrink in proportion: try again, smaller.
                if attempt < 6, dpi > 1, let longest, longest > options.size {
                    dpi = max(1, min(dpi - 1, dpi * options.size / longest))
                    continue
                }
                pictures.append(picture)
                break
            }
        }
        return .success(pictures)
    }

    /// The longer side of a PNG we collected, from its header.
    static func longestSide(of png: String) -> Int? {
        guard let file = try? FileDescriptor.open(png, .readOnly, options: [.noFollow]) else { return nil }
        defer { file.close() }
        var header = [UInt8](repeating: 0, count: 64)
        guard let count = try? header.withUnsafeMutableBytes({ bytes throws(Errno) in try file.read(fully: bytes, at: 0) }),
              let size = PNGFile.dimensions(Array(header.prefix(count))) else { return nil }
        return max(size.width, size.height)
    }

    /// The maximum bytes of terminal output a picture may make.
    static let maximumTerminalPicture: UInt64 = 16 << 20

    /// A PNG page drawn for a terminal of `columns` × `rows` cells with chafa (its symbols, or sixel/kitty graphics
    /// as `format` says or chafa detects from `environment`), as the bytes to write to the terminal.
    public func terminalPicture(_ png: String, columns: Int, rows: Int, format: String?,
                                environment: [String]) -> Result<[UInt8], PreviewError> {
        let chafa: String
        switch GeneratorTool.chafa.locate() {
        case .success(let path): chafa = path
        case .failure(let error): return .failure(error)
        }
        let file: FileDescriptor
        do { file = try .open(png, .readOnly, options: [.noFollow, .nonBlocking, .noControllingTerminal]) } catch {
            return .failure(.system(SystemError("open", path: png, errno: error)))
        }
        defer { file.close() }
        guard let st = try? file.status(), (st.st_mode & S_IFMT) == S_IFREG else {
            return .failure(.system(SystemError("open (not a regular file)", path: png, errno: .invalidArgument)))
        }
        let input: GeneratorInput
        switch provide(file, name: "picture.png", needsName: false) {
        case .success(let provided): input = provided
        case .failure(let error): return .failure(error)
        }
        let output: FileDescriptor
        do { output = try scratch.makeLog("chafa-output") } catch { return .failure(.system(error)) }
        defer { output.close() }
        let bound = min(options.fileSize, Self.maximumTerminalPicture)
        var arguments = ["--size=\(max(1, columns))x\(max(1, rows))"]
        if let format { arguments.append("--format=" + format) }
        arguments += ["--animate=off", "--polite=on", input.path]
        var process = GeneratorProcess("chafa", executable: chafa, arguments: arguments,
                                       addressSpace: options.addressSpace, fileSize: bound)
        process.input = input.standardInput
        process.output = output
        // What chafa reads to detect the terminal's graphics; nothing else of the caller's environment.
        let terminal: Set<Substring> = ["TERM", "COLORTERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "VTE_VERSION",
                                        "KITTY_WINDOW_ID", "WT_SESSION", "KONSOLE_VERSION", "TMUX", "MLTERM"]
        process.environment = environment.filter { entry in
            entry.split(separator: "=", maxSplits: 1).first.map { terminal.contains($0) } ?? false
        }
        if case .failure(let error) = sandbox.run(process) { return .failure(error) }
        let size = Int((try? output.status().st_size) ?? 0)
        switch PreviewInput.read(output, count: min(size, Int(bound))) {
        case .success(let bytes): return .success(bytes)
        case .failure(let error): return .failure(.system(SystemError("pread", errno: error)))
        }
    }
}
