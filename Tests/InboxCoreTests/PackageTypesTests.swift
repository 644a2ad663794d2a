import Testing
@testable import InboxCore

/// Package documents' types: which directory names are packages, how a package is typed (name, marker, attribute),
/// and the registrations that declare package types (exported types, LSTypeIsPackage).
@Suite("Package types")
struct PackageTypesTests {
    static let database = TypeDatabase.builtin

    // MARK: Names

    @Test(arguments: [
        ("Report.rtfd", "com.apple.rtfd"),
        ("REPORT.RTFD", "com.apple.rtfd"),
        ("Report.RtFd", "com.apple.rtfd"),
        ("x.tar.rtfd", "com.apple.rtfd"),
        ("notes.v2.rtfd", "com.apple.rtfd"),
        // A directory with a file form's extension is the package form.
        ("Essay.pages", "com.apple.iwork.pages.pages"),
        ("Budget.numbers", "com.apple.iwork.numbers.numbers"),
        ("Budget.NUMBERS", "com.apple.iwork.numbers.numbers"),
        ("Talk.key", "com.apple.iwork.keynote.key"),
        ("Theme.kth", "com.apple.iwork.keynote.kth"),
        ("Plan.nmbtemplate", "com.apple.iwork.numbers.template"),
        ("Viewer.app", "com.apple.application-bundle"),
        ("Thing.plugin", "com.apple.plugin"),
        ("Thing.mdimporter", "com.apple.metadata-importer"),
        ("Thing.qlgenerator", "com.apple.quicklook-generator"),
        ("Helper.xpc", "com.apple.xpc-service"),
        ("Share.appex", "com.apple.application-and-system-extension"),
        ("Pane.prefpane", "com.apple.systempreference.prefpane"),
        ("Script.scptd", "com.apple.applescript.script-bundle"),
        ("/some/where/Report.rtfd", "com.apple.rtfd"),
    ] as [(String, String)])
    func packageNames(name: String, expected: String) {
        #expect(Self.database.packageIdentifier(forDirectoryNamed: name) == expected)
        #expect(Self.database.isPackage(expected))
    }

    @Test(arguments: [
        "photos",            // no extension
        ".rtfd",             // a hidden name: no extension
        "rtfd",
        "Report.rtfd.zip",   // the last extension is a file's
        "Report.txt",        // a file type
        "Archive.tar.gz",
        "Kit.framework",     // a bundle, but not a package in Apple's list
        "Letter.template",   // a word too common to claim
        "Report.",
        "",
        "Report.rtf",
        "x.\u{FFFD}rtfd",
    ])
    func notPackageNames(name: String) {
        #expect(Self.database.packageIdentifier(forDirectoryNamed: name) == nil)
    }

    /// A package type's extension names directories only: a regular file so named is typed as the file it can be.
    @Test(arguments: [
        ("Essay.pages", "com.apple.iwork.pages.sffpages"),
        ("Budget.numbers", "com.apple.iwork.numbers.sffnumbers"),
        ("Talk.key", "com.apple.iwork.keynote.sffkey"),
        ("Theme.kth", "com.apple.iwork.keynote.sffkth"),
        ("Report.rtfd", nil),
        ("Viewer.app", nil),
        ("Plan.nmbtemplate", nil),
    ] as [(String, String?)])
    func filesAreNeverPackages(name: String, expected: String?) {
        #expect(Self.database.nameType(of: name)?.identifier == expected)
        #expect(!Self.database.nameCandidates(of: name).types.contains { Self.database.isPackage($0.identifier) })
    }

    /// Of several package types for one extension the most specific comes first, whatever the declaration order;
    /// a registration's exported package type comes before a built-in one it does not conform to.
    @Test func mostSpecificPackageType() {
        let location = SourceLocation(file: "t.handler", line: 1)
        let (added, diagnostics) = Self.database.adding([
            TypeDeclaration(identifier: "com.example.journal", description: "Journal", conformsTo: ["com.apple.rtfd"],
                            extensions: ["rtfd"], mimeTypes: [], origin: .imported(location)),
            TypeDeclaration(identifier: "com.example.album", description: "Album", conformsTo: ["com.apple.package"],
                            extensions: ["pages"], mimeTypes: [], origin: .exported(location)),
        ])
        #expect(diagnostics.isEmpty)
        #expect(added.packageIdentifier(forDirectoryNamed: "a.rtfd") == "com.example.journal")
        #expect(added.packageIdentifier(forDirectoryNamed: "a.pages") == "com.example.album")
        // Files keep their types.
        #expect(added.nameType(of: "a.pages")?.identifier == "com.apple.iwork.pages.sffpages")
        #expect(added.nameType(of: "a.rtfd") == nil)
    }

    // MARK: Decisions

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let explicit: String?
        let topLevel: [String]
        let identifier: String
        let source: ResolvedType.Source
        /// claimed, claim source, contentWon; nil when no mismatch.
        let mismatch: (String, ResolvedType.Source)?
        var testDescription: String { "\(name) [\(explicit ?? "-")] \(topLevel)" }

        init(_ name: String, explicit: String? = nil, _ topLevel: [String], _ identifier: String,
             _ source: ResolvedType.Source, mismatch: (String, ResolvedType.Source)? = nil) {
            self.name = name
            self.explicit = explicit
            self.topLevel = topLevel
            self.identifier = identifier
            self.source = source
            self.mismatch = mismatch
        }

        /// "Index/" is a directory, anything else a file.
        var entries: [(name: String, isDirectory: Bool)] {
            topLevel.map { $0.hasSuffix("/") ? (String($0.dropLast()), true) : ($0, false) }
        }
    }

    static let markerCases: [Case] = [
        // An RTFD needs a regular TXT.rtf at its top.
        Case("Report.rtfd", ["TXT.rtf", "image.png"], "com.apple.rtfd", .extension),
        Case("Report.rtfd", ["TXT.rtf"], "com.apple.rtfd", .extension),
        Case("Report.rtfd", ["image.png"], "com.apple.package", .content, mismatch: ("com.apple.rtfd", .extension)),
        Case("Report.rtfd", [], "com.apple.package", .content, mismatch: ("com.apple.rtfd", .extension)),
        Case("Report.rtfd", ["TXT.rtf/"], "com.apple.package", .content, mismatch: ("com.apple.rtfd", .extension)),
        Case("Report.rtfd", ["txt.rtf"], "com.apple.package", .content, mismatch: ("com.apple.rtfd", .extension)),
        Case("Report.rtfd", ["Data/", "TXT.rtf.bak"], "com.apple.package", .content,
             mismatch: ("com.apple.rtfd", .extension)),
        // iWork: Index/ (a directory), Index.zip, index.xml or index.xml.gz.
        Case("Essay.pages", ["Index/", "Metadata/", "preview.jpg"], "com.apple.iwork.pages.pages", .extension),
        Case("Essay.pages", ["Index.zip"], "com.apple.iwork.pages.pages", .extension),
        Case("Essay.pages", ["index.xml"], "com.apple.iwork.pages.pages", .extension),
        Case("Essay.pages", ["index.xml.gz", "QuickLook/"], "com.apple.iwork.pages.pages", .extension),
        Case("Essay.pages", ["Index"], "com.apple.package", .content, mismatch: ("com.apple.iwork.pages.pages", .extension)),
        Case("Essay.pages", ["Index.zip/"], "com.apple.package", .content,
             mismatch: ("com.apple.iwork.pages.pages", .extension)),
        Case("Essay.pages", ["TXT.rtf"], "com.apple.package", .content,
             mismatch: ("com.apple.iwork.pages.pages", .extension)),
        Case("Budget.numbers", ["Index/"], "com.apple.iwork.numbers.numbers", .extension),
        Case("Budget.numbers", ["index.xml.gz"], "com.apple.iwork.numbers.numbers", .extension),
        Case("Budget.numbers", ["Data/"], "com.apple.package", .content,
             mismatch: ("com.apple.iwork.numbers.numbers", .extension)),
        Case("Plan.nmbtemplate", ["Index/"], "com.apple.iwork.numbers.template", .extension),
        Case("Talk.key", ["Index/"], "com.apple.iwork.keynote.key", .extension),
        Case("Talk.key", ["index.apxl.gz"], "com.apple.iwork.keynote.key", .extension),
        // Keynote 1's package has the same extension: its own marker picks it.
        Case("Talk.key", ["presentation.apxl"], "com.apple.keynote.key", .extension),
        Case("Talk.key", ["notes.txt"], "com.apple.package", .content,
             mismatch: ("com.apple.iwork.keynote.key", .extension)),
        Case("Theme.kth", ["index.apxl"], "com.apple.iwork.keynote.kth", .extension),
        // Formats without a marker: the name decides.
        Case("Viewer.app", [], "com.apple.application-bundle", .extension),
        Case("Viewer.app", ["Contents/"], "com.apple.application-bundle", .extension),
        Case("Script.scptd", ["Contents/"], "com.apple.applescript.script-bundle", .extension),
    ]

    static let attributeCases: [Case] = [
        // The attribute names the name's type: it decides.
        Case("Report.rtfd", explicit: "com.apple.rtfd", ["TXT.rtf"], "com.apple.rtfd", .attribute),
        Case("Report.rtfd", explicit: "  com.apple.rtfd\t", ["TXT.rtf"], "com.apple.rtfd", .attribute),
        // An abstract package type is refined by the name's.
        Case("Report.rtfd", explicit: "com.apple.package", ["TXT.rtf"], "com.apple.rtfd", .extension),
        Case("Thing.mdimporter", explicit: "com.apple.plugin", [], "com.apple.metadata-importer", .extension),
        // A more specific package type than the name's: the attribute's.
        Case("Thing.plugin", explicit: "com.apple.quicklook-generator", [], "com.apple.quicklook-generator", .attribute),
        // com.apple.bundle is no package (a framework is a bundle shown as a folder): ignored.
        Case("Viewer.app", explicit: "com.apple.bundle", [], "com.apple.application-bundle", .extension,
             mismatch: ("com.apple.bundle", .attribute)),
        // A name without a package extension: the attribute's package type, with its marker checked.
        Case("Report", explicit: "com.apple.rtfd", ["TXT.rtf"], "com.apple.rtfd", .attribute),
        Case("Report", explicit: "com.apple.rtfd", ["a.png"], "com.apple.package", .content,
             mismatch: ("com.apple.rtfd", .attribute)),
        Case("Essay", explicit: "com.apple.iwork.pages.pages", ["Index/"], "com.apple.iwork.pages.pages", .attribute),
        // Another package type than the name's: the name wins.
        Case("Report.rtfd", explicit: "com.apple.iwork.pages.pages", ["TXT.rtf"], "com.apple.rtfd", .extension,
             mismatch: ("com.apple.iwork.pages.pages", .attribute)),
        // Not a package type: ignored.
        Case("Report.rtfd", explicit: "public.plain-text", ["TXT.rtf"], "com.apple.rtfd", .extension,
             mismatch: ("public.plain-text", .attribute)),
        Case("Report.rtfd", explicit: "text/plain", ["TXT.rtf"], "com.apple.rtfd", .extension,
             mismatch: ("public.plain-text", .attribute)),
        Case("Report", explicit: "public.folder", [], "com.apple.package", .fallback,
             mismatch: ("public.folder", .attribute)),
        // Both: the marker's mismatch is the one reported.
        Case("Report.rtfd", explicit: "public.png", ["a.png"], "com.apple.package", .content,
             mismatch: ("com.apple.rtfd", .extension)),
        // Unknown, empty or oversized attributes: the name decides.
        Case("Report.rtfd", explicit: "com.example.nothing", ["TXT.rtf"], "com.apple.rtfd", .extension),
        Case("Report.rtfd", explicit: "", ["TXT.rtf"], "com.apple.rtfd", .extension),
        Case("Report.rtfd", explicit: "   ", ["TXT.rtf"], "com.apple.rtfd", .extension),
        Case("Report.rtfd", explicit: String(repeating: "a", count: 5000), ["TXT.rtf"], "com.apple.rtfd", .extension),
        // Nothing at all names a package type.
        Case("Report", [], "com.apple.package", .fallback),
    ]

    @Test(arguments: markerCases + attributeCases)
    func decidePackage(_ c: Case) {
        let resolved = TypeResolver.decidePackage(name: c.name, explicit: c.explicit, topLevel: c.entries,
                                                  in: Self.database)
        #expect(resolved.identifier == c.identifier)
        #expect(resolved.source == c.source)
        #expect(resolved.contentIdentifier == nil, "nothing is sniffed")
        #expect(resolved.mimeType == (Self.database.preferredMIMEType(of: c.identifier) ?? "inode/directory"))
        if let (claimed, claimSource) = c.mismatch {
            let mismatch = resolved.mismatch
            #expect(mismatch != nil)
            #expect(mismatch?.claimed == claimed)
            #expect(mismatch?.claimSource == claimSource)
            #expect(mismatch?.contentWon == true)
            #expect(mismatch?.decided == c.identifier)
            #expect(mismatch?.content == (claimSource == .attribute && c.identifier != "com.apple.package"
                                          ? c.identifier : "com.apple.package"))
        } else {
            #expect(resolved.mismatch == nil)
        }
    }

    @Test func missingMarkerIsExplained() {
        let resolved = TypeResolver.decidePackage(name: "Essay.pages", explicit: nil, topLevel: [("notes", false)],
                                                  in: Self.database)
        #expect(resolved.diagnostics == ["com.apple.iwork.pages.pages needs Index/, Index.zip, index.xml or "
            + "index.xml.gz at its top level, which this package lacks: typed com.apple.package"])
        let both = TypeResolver.decidePackage(name: "Report.rtfd", explicit: "public.png", topLevel: [("a.png", false)],
                                              in: Self.database)
        #expect(both.diagnostics == [
            "com.apple.rtfd needs TXT.rtf at its top level, which this package lacks: typed com.apple.package",
            "content-type attribute 'public.png' is not a package type; typed com.apple.package"])
        let unknown = TypeResolver.decidePackage(name: "Report.rtfd", explicit: "com.example.nothing",
                                                 topLevel: [("TXT.rtf", false)], in: Self.database)
        #expect(unknown.diagnostics == ["content-type attribute 'com.example.nothing' is not a known type; "
            + "using the directory's name"])
    }

    /// Every type of the marker table is a built-in package type, and a registration's kind of RTFD needs TXT.rtf.
    @Test func markerTable() {
        for identifier in PackageMarker.table.keys {
            #expect(Self.database.declares(identifier) && Self.database.isPackage(identifier), "\(identifier)")
        }
        let location = SourceLocation(file: "t.handler", line: 3)
        let added = Self.database.adding([TypeDeclaration(identifier: "com.example.journal", description: "Journal",
            conformsTo: ["com.apple.rtfd"], extensions: ["journal"], mimeTypes: [], origin: .exported(location))]).database
        #expect(PackageMarker.marker(for: "com.example.journal", in: added) == PackageMarker.table["com.apple.rtfd"])
        #expect(TypeResolver.decidePackage(name: "a.journal", explicit: nil, topLevel: [("TXT.rtf", false)],
                                           in: added).identifier == "com.example.journal")
        #expect(TypeResolver.decidePackage(name: "a.journal", explicit: nil, topLevel: [("x", false)],
                                           in: added).identifier == "com.apple.package")
        #expect(PackageMarker.marker(for: "com.apple.application-bundle", in: added) == nil)
    }

    /// Every type Apple's reference list declares as conforming to com.apple.package is one here, and only those.
    @Test func builtinPackageTypesAreApples() throws {
        let reference = try BuiltinTypesReferenceTests.reference()
        let byIdentifier = Dictionary(reference.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        func applePackage(_ identifier: String, _ depth: Int = 0) -> Bool {
            identifier == "com.apple.package"
                || depth < 16 && (byIdentifier[identifier]?.conformsTo ?? []).contains { applePackage($0, depth + 1) }
        }
        let apple = Set(reference.map(\.identifier).filter { applePackage($0) })
        let ours = Set(Self.database.allIdentifiers.filter(Self.database.isPackage))
        #expect(apple == ours)
        #expect(ours.isSuperset(of: ["com.apple.package", "com.apple.rtfd", "com.apple.application-bundle",
                                     "com.apple.plugin", "com.apple.iwork.pages.pages", "com.apple.iwork.pages.template",
                                     "com.apple.iwork.numbers.numbers", "com.apple.iwork.numbers.template",
                                     "com.apple.iwork.keynote.key", "com.apple.iwork.keynote.kth",
                                     "com.apple.keynote.key"]))
        #expect(!Self.database.isPackage("com.apple.bundle") && !Self.database.isPackage("com.apple.framework"))
    }
}

/// Registrations that make package types, through the loader's own steps: the parser (INI or Info.plist), the
/// database's `adding`, `ClaimResolver` and the claims' declarations added (as RegistrationLoader does).
@Suite("Package types from registrations")
struct PackageRegistrationTests {
    struct Loaded {
        let database: TypeDatabase
        let registration: HandlerRegistration
        let diagnostics: [String]
    }

    static func load(_ bytes: [UInt8], path: String) throws -> Loaded {
        let file = RegistrationParser.parse(bytes, path: path)
        var registrations = [try #require(file.registration, "\(file.diagnostics)")]
        let (database, typeDiagnostics) = TypeDatabase.builtin.adding(registrations[0].exportedTypes
                                                                      + registrations[0].importedTypes)
        let claims = ClaimResolver.resolve(&registrations, database: database)
        let final = claims.declarations.isEmpty ? database : database.adding(claims.declarations).database
        return Loaded(database: final, registration: registrations[0],
                      diagnostics: (file.diagnostics + typeDiagnostics + claims.diagnostics).map(\.description))
    }

    static let exec = "<key>InboxdHandler</key> <dict><key>Exec</key> <string>/bin/true %f</string></dict>"

    /// One CFBundleDocumentTypes entry (its dict's lines as given), on line 5 on.
    static func plist(documentType: [String], declarations: [String] = []) -> [UInt8] {
        var body = [exec, "<key>CFBundleDocumentTypes</key> <array> <dict>"] + documentType + ["</dict> </array>"]
        if !declarations.isEmpty {
            body += ["<key>UTExportedTypeDeclarations</key> <array>"] + declarations + ["</array>"]
        }
        return Array((["<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<plist version=\"1.0\">", "<dict>"] + body
                      + ["</dict>", "</plist>", ""]).joined(separator: "\n").utf8)
    }

    static let isPackageLine = "<key>LSTypeIsPackage</key> <true/>"

    @Test func exportedAndImportedTypesConformingToPackageAreSo() throws {
        let loaded = try Self.load(lines(
            "[Handler]", "Exec=/bin/true %f",
            "[DocumentType]", "ContentTypes=com.example.album com.example.journal",
            "[ExportedType]", "Identifier=com.example.album", "ConformsTo=com.apple.package public.composite-content",
            "Extensions=album",
            "[ImportedType]", "Identifier=com.example.journal", "ConformsTo=com.apple.rtfd", "Extensions=journal",
            "[ExportedType]", "Identifier=com.example.sheet", "ConformsTo=public.data", "Extensions=sheet"),
            path: "/h/album.handler")
        #expect(loaded.diagnostics == [])
        #expect(loaded.database.isPackage("com.example.album"))
        #expect(loaded.database.isPackage("com.example.journal"))
        #expect(!loaded.database.isPackage("com.example.sheet"))
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "Trip.ALBUM") == "com.example.album")
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "Day.journal") == "com.example.journal")
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "x.sheet") == nil)
        // A kind of RTFD needs TXT.rtf.
        #expect(TypeResolver.decidePackage(name: "Day.journal", explicit: nil, topLevel: [("TXT.rtf", false)],
                                           in: loaded.database).identifier == "com.example.journal")
        #expect(TypeResolver.decidePackage(name: "Day.journal", explicit: nil, topLevel: [],
                                           in: loaded.database).identifier == "com.apple.package")
        // A file with a package type's extension is not typed as the package.
        #expect(loaded.database.nameType(of: "Trip.album") == nil)
        #expect(loaded.database.nameType(of: "x.sheet")?.identifier == "com.example.sheet")
    }

    @Test func plistDeclarationConformingToPackage() throws {
        let loaded = try Self.load(Self.plist(
            documentType: ["<key>LSItemContentTypes</key> <array><string>com.example.scene</string></array>"],
            declarations: ["<dict><key>UTTypeIdentifier</key> <string>com.example.scene</string>",
                           "<key>UTTypeConformsTo</key> <array><string>com.apple.package</string></array>",
                           "<key>UTTypeTagSpecification</key> <dict><key>public.filename-extension</key> "
                           + "<string>scene</string></dict></dict>"]),
            path: "/h/scene.plist")
        #expect(loaded.diagnostics == [])
        #expect(loaded.database.isPackage("com.example.scene"))
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "a.scene") == "com.example.scene")
    }

    /// LSTypeIsPackage and the extensions it claims: a made type conforms to com.apple.package, a built-in package
    /// form is chosen over the file form, a file type stays one (with a warning).
    @Test(arguments: [
        // extension, LSTypeIsPackage, the claimed type, a package?
        ("wcproj", true, "dyn.ext.wcproj", true),
        ("wcproj", false, "dyn.ext.wcproj", false),
        ("pages", true, "com.apple.iwork.pages.pages", true),
        ("pages", false, "com.apple.iwork.pages.sffpages", false),
        ("key", true, "com.apple.iwork.keynote.key", true),
        ("rtfd", true, "com.apple.rtfd", true),
        // Only a package type has the extension: it stands for it with or without the key.
        ("rtfd", false, "com.apple.rtfd", true),
        ("txt", true, "public.plain-text", false),
    ] as [(String, Bool, String, Bool)])
    func packageExtensions(ext: String, isPackage: Bool, claimed: String, package: Bool) throws {
        let loaded = try Self.load(Self.plist(documentType: [
            "<key>CFBundleTypeExtensions</key> <array><string>\(ext)</string></array>",
            isPackage ? Self.isPackageLine : "<key>LSTypeIsPackage</key> <false/>",
        ]), path: "/h/project.plist")
        let type = try #require(loaded.registration.documentTypes.first)
        #expect(type.isPackage == isPackage)
        #expect(type.contentTypes == [claimed])
        #expect(loaded.database.isPackage(claimed) == package)
        if package { #expect(loaded.database.packageIdentifier(forDirectoryNamed: "Mix." + ext) == claimed) }
        let warning = "/h/project.plist:7: warning: LSTypeIsPackage is set but \(claimed) is not a package type; "
            + "its documents are files"
        #expect(loaded.diagnostics == (isPackage && !package ? [warning] : []))
    }

    /// LSTypeIsPackage on LSItemContentTypes: a type this Info.plist declares becomes a package; a built-in file type
    /// stays one, with a warning at the key; an undeclared identifier is declared as a package.
    @Test func packageContentTypes() throws {
        let loaded = try Self.load(Self.plist(documentType: [
            "<key>LSItemContentTypes</key> <array><string>com.example.project</string>",
            "<string>public.plain-text</string> <string>com.example.elsewhere</string></array>",
            Self.isPackageLine,
        ], declarations: [
            "<dict><key>UTTypeIdentifier</key> <string>com.example.project</string>",
            "<key>UTTypeConformsTo</key> <array><string>public.data</string></array>",
            "<key>UTTypeTagSpecification</key> <dict><key>public.filename-extension</key> "
                + "<string>proj</string></dict></dict>",
        ]), path: "/h/project.plist")
        #expect(loaded.diagnostics == [
            "/h/project.plist:5: notice: claims 'com.example.elsewhere', which no type declares: it matches files that "
                + "carry that identifier explicitly (a content-type attribute, inboxctl send --type)",
            "/h/project.plist:8: warning: LSTypeIsPackage is set but public.plain-text is not a package type; its "
                + "documents are files",
        ])
        #expect(loaded.registration.exportedTypes.first?.conformsTo == ["public.data", "com.apple.package"])
        #expect(loaded.database.isPackage("com.example.project"))
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "Song.proj") == "com.example.project")
        #expect(!loaded.database.isPackage("public.plain-text"))
        #expect(loaded.database.isPackage("com.example.elsewhere"))
    }

    /// A binary Info.plist has no lines: the warning names the key's path, as its other messages do.
    @Test func binaryPlistWarningNamesTheKeyPath() throws {
        let at = PropertyListLocation.offset(8)
        let file = InfoPlist.read(root([
            ("InboxdHandler", dict([("Exec", .string("/bin/true %f"))], at: at)),
            ("CFBundleDocumentTypes", .array([PropertyListNode(dict([
                ("LSItemContentTypes", .array([PropertyListNode(.string("public.plain-text"), at: at)])),
                ("LSTypeIsPackage", .bool(true)),
            ], at: at), at: at)])),
        ], at: at), path: "/h/b.plist")
        var registrations = [try #require(file.registration)]
        let claims = ClaimResolver.resolve(&registrations, database: .builtin)
        #expect(claims.diagnostics.map(\.description) == [
            "/h/b.plist: CFBundleDocumentTypes[0].LSTypeIsPackage: warning: LSTypeIsPackage is set but public.plain-text "
                + "is not a package type; its documents are files"])
    }

    /// Without LSTypeIsPackage nothing changes: the declared type stays a file type.
    @Test func withoutTheKeyTypesStayFiles() throws {
        let loaded = try Self.load(Self.plist(documentType: [
            "<key>LSItemContentTypes</key> <array><string>com.example.project</string></array>",
        ], declarations: [
            "<dict><key>UTTypeIdentifier</key> <string>com.example.project</string>",
            "<key>UTTypeConformsTo</key> <array><string>public.data</string></array></dict>",
        ]), path: "/h/project.plist")
        #expect(loaded.diagnostics == [])
        #expect(loaded.registration.exportedTypes.first?.conformsTo == ["public.data"])
        #expect(!loaded.database.isPackage("com.example.project"))
    }
}
