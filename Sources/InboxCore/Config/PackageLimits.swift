/// How large a package document (a directory that is one document) may be: `MaxPackageDepth=`,
/// `MaxPackageEntries=` and `MaxPackageSize=` of inboxd.conf. Every package is walked within these bounds before
/// anything else sees it; one beyond any of them is refused whole.
public struct PackageLimits: Sendable, Hashable {
    /// Levels of directories below the package's own (the package itself is level 0).
    public var maxDepth: Int
    /// Entries (files and directories, the package's own directory not counted).
    public var maxEntries: Int
    /// Bytes of all its files together; nil is the single-file bound (`MaxInboxBytes=`, else none).
    public var maxBytes: Int64?

    public static let defaultDepth = 32
    public static let defaultEntries = 10_000

    public init(maxDepth: Int = PackageLimits.defaultDepth, maxEntries: Int = PackageLimits.defaultEntries,
                maxBytes: Int64? = nil) {
        self.maxDepth = maxDepth
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }
}
