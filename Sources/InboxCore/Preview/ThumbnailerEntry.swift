/// One desktop thumbnailer registration (`/usr/share/thumbnailers/*.thumbnailer`, the freedesktop Thumbnail
/// Managing Standard's `[Thumbnailer Entry]`): the program, what it runs, and the MIME types it declares.
public struct ThumbnailerEntry: Sendable, Hashable {
    /// Where it was read from: the file, for diagnostics.
    public var path: String
    /// `TryExec=`: the program that must exist for the entry to count; nil when absent.
    public var tryExec: String?
    /// `Exec=`, split into words like a registration's Exec= (quotes), field codes kept.
    public var exec: [String]
    /// `MimeType=`, `;`-separated.
    public var mimeTypes: [String]

    public init(path: String, tryExec: String?, exec: [String], mimeTypes: [String]) {
        self.path = path
        self.tryExec = tryExec
        self.exec = exec
        self.mimeTypes = mimeTypes
    }
}

extension ThumbnailerEntry {
    /// Reads a `.thumbnailer` file the forgiving way registrations are read: the `[Thumbnailer Entry]` section's
    /// `TryExec=`, `Exec=` and `MimeType=`; other sections and keys are ignored; a malformed line, a missing `Exec=` or
    /// `MimeType=`, or an `Exec=` without `%o` is a diagnostic at its file:line, and then there is no entry.
    public static func parse(_ bytes: [UInt8], path: String) -> (entry: ThumbnailerEntry?, diagnostics: [Diagnostic]) {
        fatalError("ThumbnailerEntry.parse: to be written")
    }

    /// `exec` with its field codes filled in: `%i` the input path, `%u` its URI, `%o` the output path, `%s` the size,
    /// `%%` a `%`; an unknown code is dropped, as the desktop's thumbnailers do.
    public func arguments(input: String, uri: String, output: String, size: Int) -> [String] {
        fatalError("ThumbnailerEntry.arguments: to be written")
    }

    /// Whether it declares `mimeType`.
    public func declares(_ mimeType: String) -> Bool { mimeTypes.contains(mimeType) }
}
