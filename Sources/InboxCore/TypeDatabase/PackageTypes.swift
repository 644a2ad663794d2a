// CONTRACT (issue 21): the `types` branch builds the bodies.

extension TypeDatabase {
    /// The type every package document conforms to.
    public static let packageType = "com.apple.package"

    /// True when documents of `identifier` are directories: it conforms to `com.apple.package` (built in, a
    /// registration's exported or imported type, or an Info.plist document type with `LSTypeIsPackage`).
    public func isPackage(_ identifier: String) -> Bool {
        identifier == TypeDatabase.packageType || conforms(identifier, to: TypeDatabase.packageType)
    }

    /// The package type a directory called `name` is a document of, by its extension; nil when it is not one
    /// (a plain directory, moved aside).
    public func packageIdentifier(forDirectoryNamed name: String) -> String? {
        fatalError("packageIdentifier(forDirectoryNamed:): the types branch builds it")
    }
}

extension TypeResolver {
    /// The type of a package called `name` whose top-level entries are `topLevel`, with `explicit` from its
    /// content-type attribute: by extension, checked against the format's marker where it has one (`TXT.rtf` in an
    /// RTFD, `Index/` or `index.xml` in an iWork package); a package without its marker is a mismatch and gets
    /// `com.apple.package` alone.
    public static func decidePackage(name: String, explicit: String?, topLevel: [(name: String, isDirectory: Bool)],
                                     in database: TypeDatabase) -> ResolvedType {
        fatalError("decidePackage: the types branch builds it")
    }
}
