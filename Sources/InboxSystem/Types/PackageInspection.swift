import InboxCore

extension TypeInspector {
    /// The type of a checked package called `name`, with `explicit` from its content-type attribute: its name's
    /// package type, checked against the format's marker among the manifest's top-level entries
    /// (`TypeResolver.decidePackage`). Nothing inside a package is read or sniffed, so nothing can fail: the
    /// inspection has no sniffed content. The agent (ArrivalTyping) and `inboxctl info` both ask here.
    public func inspectPackage(name: String, explicit: String?, manifest: PackageManifest,
                               in database: TypeDatabase) -> Inspection {
        Inspection(resolved: TypeResolver.decidePackage(name: name, explicit: explicit, topLevel: manifest.topLevel,
                                                        in: database),
                   sniffedMIMEType: nil, sniffed: nil, sniffFailure: nil)
    }
}
