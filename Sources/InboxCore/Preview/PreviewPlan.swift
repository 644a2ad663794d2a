/// Which built-in generator previews a document (docs/design.md, Quick Look).
public enum PreviewPlan {
    /// The generator for a document whose type's conformance chain (most specific first, as
    /// `HandlerCatalog.conformanceChain` gives it) is `chain` and whose MIME types (preferred first) are `mimeTypes`;
    /// `package` when it is a directory (a package document). `thumbnailers` are the desktop's registrations, in
    /// search-path order, consulted for what no built-in generator reads.
    public static func generator(chain: [String], mimeTypes: [String], package: Bool,
                                 thumbnailers: [ThumbnailerEntry]) -> PreviewGenerator {
        fatalError("PreviewPlan.generator: to be written")
    }
}
