/// What document types claim, settled once every registration's types are in the database:
///
/// - an extension claimed without a type (CFBundleTypeExtensions) stands for the type a file of that name gets
///   (`TypeDatabase.nameType`); when nothing gives one, for a dynamic type `dyn.ext.<extension>` made for it, as
///   LaunchServices makes `dyn.` types, conforming to public.data and tagged with the extension;
/// - a claim on an identifier nobody declares is legal (on Apple's platforms too): it matches files that carry
///   that identifier explicitly. It is said in a notice, and the identifier is declared as conforming to
///   public.data, so that `inboxctl send --type` and `handlers --type` know it;
/// - a document type with LSTypeIsPackage claims directories: an extension stands for the package type a directory
///   of that name is (`.pages`: `com.apple.iwork.pages.pages`, not the single file), a type made for an extension
///   or an undeclared identifier conforms to com.apple.package instead of public.data, and a claimed type that is
///   no package (built in, or declared by another registration) stays as it is, with a warning at the key.
///   Without LSTypeIsPackage an extension that only a package type has (`rtfd`) still stands for it.
public enum ClaimResolver {
    /// The prefix of the types made for extensions.
    public static let extensionPrefix = "dyn.ext."

    /// Adds the extensions' types to each document type's content types, and returns the notices and the
    /// declarations to add to the database. Claims in `alreadyReported` (a `.handler` file's `ContentTypes=` words,
    /// warned about as likely typos at their line, `TypeReferences.unknownClaims`) are declared without a notice.
    public static func resolve(_ registrations: inout [HandlerRegistration], database: TypeDatabase,
                               alreadyReported: Set<String> = []) -> (diagnostics: [Diagnostic], declarations: [TypeDeclaration]) {
        var diagnostics: [Diagnostic] = []
        var declarations: [String: TypeDeclaration] = [:]
        var order: [String] = []
        for index in registrations.indices {
            for typeIndex in registrations[index].documentTypes.indices {
                var type = registrations[index].documentTypes[typeIndex]
                let parent = type.isPackage ? TypeDatabase.packageType : "public.data"
                for ext in type.extensions {
                    let package = database.packageIdentifier(forDirectoryNamed: "file." + ext)
                    let file = database.nameType(of: "file." + ext)?.identifier
                    if let named = type.isPackage ? package ?? file : file ?? package {
                        if !type.contentTypes.contains(named) { type.contentTypes.append(named) }
                        continue
                    }
                    let identifier = extensionPrefix + ext
                    guard TypeIdentifierSyntax.isValid(identifier) else {
                        diagnostics.append(Diagnostic(.warning, at: type.location,
                            "extension '\(ext.visible)' cannot be named by a type identifier: skipped"))
                        continue
                    }
                    if declarations[identifier] == nil {
                        declarations[identifier] = TypeDeclaration(identifier: identifier,
                            description: type.isPackage ? "*.\(ext) package" : "*.\(ext) file",
                            conformsTo: [parent], extensions: [ext], mimeTypes: [], origin: .imported(type.location))
                        order.append(identifier)
                    }
                    if !type.contentTypes.contains(identifier) { type.contentTypes.append(identifier) }
                }
                for claim in type.contentTypes where !database.contains(claim) && declarations[claim] == nil
                    && !claim.contains("/") {
                    if !alreadyReported.contains(claim) { diagnostics.append(Diagnostic(.notice, at: type.location,
                        "claims '\(claim.visible)', which no type declares: it matches files that carry that identifier "
                        + "explicitly (a content-type attribute, inboxctl send --type)")) }
                    declarations[claim] = TypeDeclaration(identifier: claim, description: type.name, conformsTo: [parent],
                                                          extensions: [], mimeTypes: [], origin: .imported(type.location))
                    order.append(claim)
                }
                if type.isPackage {
                    for claim in type.contentTypes where !database.isPackage(claim)
                        && declarations[claim]?.conformsTo.contains(TypeDatabase.packageType) != true {
                        diagnostics.append(Diagnostic(.warning, at: type.packageLocation ?? type.location,
                            "LSTypeIsPackage is set but \(claim.visible) is not a package type; its documents are files"))
                    }
                }
                registrations[index].documentTypes[typeIndex] = type
            }
        }
        return (diagnostics, order.compactMap { declarations[$0] })
    }
}
