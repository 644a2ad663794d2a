import InboxCore
import InboxSystem

/// `inboxctl thumbnail FILE...`: freedesktop-standard thumbnails made by the built-in previews, so that file managers
/// (GNOME Files, Thunar, ...) show what inboxd shows.
enum ThumbnailCommand: InboxctlCommand {
    static let name = "thumbnail"
    static let summary = "Write freedesktop thumbnails of files"
    static let usage = "inboxctl thumbnail [--size SIZE]... [--json] FILE..."

    static let help = """
        OVERVIEW: Write freedesktop thumbnails of files.

        Each FILE's first page, as the built-in previews of inboxctl preview make it, is written
        as the Thumbnail Managing Standard says: $XDG_CACHE_HOME/thumbnails/SIZE/ (default
        ~/.cache/thumbnails), named by the MD5 of the file's URI, a PNG whose longest side is the
        size's (normal 128, large 256, x-large 512, xx-large 1024 pixels) carrying Thumb::URI,
        Thumb::MTime, Thumb::Size and Thumb::Mime. A file that cannot be thumbnailed gets the
        standard's failure mark in thumbnails/fail/inboxd-VERSION/, so that file managers do not
        try again until it changes, and makes the exit status 1 (after the others are written).
        The generators run sandboxed and bounded as for inboxctl preview.

        USAGE: \(usage)

        ARGUMENTS:
          <FILE>                  A file (or package document) to thumbnail

        OPTIONS:
          --size SIZE             normal, large, x-large or xx-large (repeatable; default: normal and large)
          --json                  Say what was written, as JSON
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([.value("--size"), .flag("--json")], agentOptions: true, positionals: .any)

    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if parsed.positionals.isEmpty { throw UsageError(message: "missing FILE") }
        for size in parsed.values("--size") where FreedesktopThumbnail.Size(rawValue: size) == nil {
            throw UsageError(message: "--size '\(size)' is none of "
                             + FreedesktopThumbnail.Size.allCases.map(\.rawValue).joined(separator: ", "))
        }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        guard let settings = parsed.agent.settings(), let inspection = Inspection(settings) else { return 1 }
        guard let cache = cacheDirectory() else {
            Inboxctl.write("inboxctl: neither XDG_CACHE_HOME nor HOME is an absolute path: nowhere to write thumbnails\n",
                           to: 2)
            return 1
        }
        var sizes = parsed.values("--size").compactMap(FreedesktopThumbnail.Size.init(rawValue:))
        if sizes.isEmpty { sizes = [.normal, .large] }
        if LandlockRuleset.abi() == 0 {
            Inboxctl.write("inboxctl: this kernel has no Landlock: the generators are not confined\n", to: 2)
        }
        Interruption.catchSignals()
        let (thumbnailers, problems) = ThumbnailerDirectories.load()
        for problem in problems { Inboxctl.write("inboxctl: \(problem)\n", to: 2) }
        var status: CInt = 0
        var json: [String] = []
        for size in sizes {
            var options = PreviewRenderer.Options()
            options.size = size.pixels
            options.maximumPages = 1
            options.timeout = PreviewRenderer.Options.timeout(agent: settings.defaultTimeout)
            let renderer: PreviewRenderer
            do {
                renderer = try PreviewRenderer(identity: PreviewRenderer.defaultIdentity,
                                               landlockABI: LandlockRuleset.abi(), options: options,
                                               thumbnailers: thumbnailers)
            } catch {
                Inboxctl.write("inboxctl: cannot prepare the thumbnails: \(error)\n", to: 2)
                return 1
            }
            let previews = BuiltinPreviews(inspection: inspection, renderer: renderer, thumbnailers: thumbnailers)
            for file in parsed.positionals where Interruption.signal == 0 {
                let item = previews.make(file, title: lastPathComponent(file))
                let result = write(item, size: size, renderer: renderer, cache: cache)
                var pairs: [(String, String)] = [("file", JSON.quote(item.path)), ("size", JSON.quote(size.rawValue))]
                switch result {
                case .success(let written):
                    pairs += [("uri", JSON.quote(written.uri)), ("path", JSON.quote(written.path)),
                              ("width", String(written.width)), ("height", String(written.height)), ("error", "null")]
                case .failure(let error):
                    Inboxctl.write("inboxctl: cannot thumbnail \(file): \(error)\n", to: 2)
                    status = 1
                    pairs += [("error", JSON.quote(error.description))]
                }
                json.append(JSONText.object(pairs))
            }
        }
        if parsed.flag("--json") { Inboxctl.write("{\"thumbnails\":[" + json.joined(separator: ",") + "]}\n", to: 1) }
        let signal = Interruption.signal
        return signal != 0 ? 128 + signal : status
    }

    /// `$XDG_CACHE_HOME/thumbnails`, else `~/.cache/thumbnails`.
    static func cacheDirectory() -> String? {
        if let cache = CurrentProcess.environment("XDG_CACHE_HOME"), cache.hasPrefix("/") { return cache + "/thumbnails" }
        if let home = CurrentProcess.environment("HOME"), home.hasPrefix("/") { return home + "/.cache/thumbnails" }
        return nil
    }

    struct Written {
        let uri: String
        let path: String
        let width: Int
        let height: Int
    }

    /// Writes one thumbnail of `item` (or its failure mark).
    private static func write(_ item: BuiltinItem, size: FreedesktopThumbnail.Size, renderer: PreviewRenderer,
                              cache: String) -> Result<Written, PreviewError> {
        guard let canonical = item.canonicalPath, let modified = item.modified else {
            if case .failure(let error) = item.content { return .failure(error) }
            return .failure(.failed("cannot name the file it previewed"))
        }
        let uri = fileURL(forPath: canonical)
        let name = FreedesktopThumbnail.fileName(forURI: uri)
        let picture: Result<String, PreviewError> = firstPage(of: item, size: size, renderer: renderer)
        switch picture {
        case .success(let png):
            let bytes: [UInt8]
            switch readBounded(png, limit: Int(clamping: renderer.options.fileSize)) {
            case .success(let read): bytes = read
            case .failure(let error): return .failure(.failed("cannot read the page it made: \(error)"))
            }
            guard let dimensions = PNGFile.dimensions(bytes),
                  let annotated = FreedesktopThumbnail.annotate(bytes, uri: uri, modified: modified,
                                                                size: item.fileSize, mimeType: item.mimeType) else {
                return .failure(.failed("the page it made is not a PNG"))
            }
            do {
                let directory = try makeDirectories(cache, size.directory)
                try directory.writeFile(name, bytes: annotated, mode: 0o600)
                return .success(Written(uri: uri, path: directory.child(name), width: dimensions.width,
                                        height: dimensions.height))
            } catch {
                return .failure(.system(error))
            }
        case .failure(let error):
            // The standard's failure mark: a PNG with the URI and time, so a file manager does not retry until it changes.
            if let mark = FreedesktopThumbnail.annotate(onePixelPNG, uri: uri, modified: modified, size: nil,
                                                        mimeType: nil),
               let directory = try? makeDirectories(cache, "fail", "inboxd-\(inboxdVersion)") {
                try? directory.writeFile(name, bytes: mark, mode: 0o600)
            }
            return .failure(error)
        }
    }

    /// The first page of an item as a PNG no larger than `size`: a picture page as made (the generators were asked
    /// for that size), a text page drawn and then scaled by the image generator.
    private static func firstPage(of item: BuiltinItem, size: FreedesktopThumbnail.Size,
                                  renderer: PreviewRenderer) -> Result<String, PreviewError> {
        let textPage: [String]
        switch item.content {
        case .failure(let error): return .failure(error)
        case .success(.pictures(let pages)):
            guard let first = pages.first else { return .failure(.failed("it made no page")) }
            return .success(first)
        case .success(.text(let lines)):
            textPage = PreviewPages.text(lines, width: 40, height: 40).first ?? []
        case .success(.table(let table)):
            textPage = PreviewPages.table(table, width: 60, height: 40).first ?? []
        }
        let drawn: String
        switch renderer.pictures(ofTextPages: [textPage]) {
        case .success(let pages):
            guard let first = pages.first else { return .failure(.failed("it made no page")) }
            drawn = first
        case .failure(let error): return .failure(error)
        }
        let file: FileDescriptor
        do { file = try .open(drawn, .readOnly, options: [.noFollow]) } catch {
            return .failure(.system(SystemError("open", path: drawn, errno: error)))
        }
        defer { file.close() }
        let size = (try? file.status()).map { Int64($0.st_size) } ?? 0
        let document = PreviewDocument(descriptor: file, name: "page.png", contentType: "public.png",
                                       mimeTypes: ["image/png"], size: size, package: false)
        switch renderer.render(document, with: .image) {
        case .success(let rendered):
            guard case .pictures(let pages) = rendered.content, let first = pages.first else {
                return .failure(.failed("it made no page"))
            }
            return .success(first)
        case .failure(let error):
            return .failure(error)
        }
    }

    /// `base/components...`, each made 0700 where missing (the standard's mode for the thumbnail directories).
    private static func makeDirectories(_ base: String, _ components: String...) throws(SystemError) -> Directory {
        var path = ""
        for part in base.split(separator: "/") {
            path += "/" + part
            if !(try Directory.exists(path)) { _ = try Directory.create(path: path, mode: 0o700) }
        }
        var directory = try Directory(path: path)
        for component in components { directory = try directory.subdirectory(component, mode: 0o700) }
        return directory
    }

    /// A 1 × 1 transparent PNG, the body of a failure mark.
    static let onePixelPNG: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
        0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]
}
