import Testing
@testable import InboxCore

/// The built-in type table itself: well formed, broad, rooted as Apple roots it, with normalized tags.
@Suite("Built-in types")
struct BuiltinTypesTests {
    let database = TypeDatabase.builtin

    @Test func builtinTableIsWellFormed() {
        let identifiers = database.allIdentifiers
        #expect(identifiers == identifiers.sorted())
        #expect(Set(identifiers).count == BuiltinTypes.declarations.count, "no duplicate rows")
        #expect(BuiltinTypes.parse(PackageResources.BuiltinTypes_types, path: BuiltinTypes.path).diagnostics.isEmpty)
        for identifier in identifiers {
            for parent in database.declaration(for: identifier)?.conformsTo ?? [] {
                #expect(database.contains(parent), "\(identifier) conforms to undeclared \(parent)")
            }
            #expect(!database.conformanceChain(of: identifier).dropFirst().contains(identifier), "\(identifier) cycle")
        }
        let required = ["public.item", "public.content", "public.data", "public.composite-content", "public.image",
                        "public.png", "public.jpeg", "public.tiff", "com.compuserve.gif", "public.heic",
                        "public.svg-image", "public.text", "public.plain-text", "public.utf8-plain-text",
                        "public.utf16-plain-text", "public.comma-separated-values-text",
                        "public.tab-separated-values-text", "public.rtf", "public.html", "public.xml", "public.json",
                        "public.source-code", "public.shell-script", "public.python-script", "public.audio",
                        "public.mp3", "public.movie", "public.mpeg-4", "public.archive", "public.zip-archive",
                        "public.executable", "public.folder", "public.directory", "public.vcard",
                        "public.calendar-event", "com.adobe.pdf", "org.openxmlformats.wordprocessingml.document",
                        "org.openxmlformats.spreadsheetml.sheet", "org.openxmlformats.presentationml.presentation",
                        "com.microsoft.word.doc", "com.microsoft.excel.xls", "com.microsoft.powerpoint.ppt",
                        "com.apple.iwork.keynote.sffkey", "com.apple.iwork.pages.sffpages",
                        "com.apple.iwork.numbers.sffnumbers", "net.daringfireball.markdown", "public.yaml",
                        "public.symlink", "public.url", "public.file-url", "public.email-message", "public.log",
                        "public.database", "public.disk-image", "public.unix-executable", "com.adobe.postscript",
                        "org.idpf.epub-container", "com.apple.property-list", "public.font", "public.x509-certificate",
                        "org.oasis-open.opendocument.text", "org.gnu.gnu-zip-tar-archive", "public.midi-audio"]
        for identifier in required { #expect(database.contains(identifier), "\(identifier) missing") }
    }

    @Test func builtinTableIsBroad() {
        #expect(BuiltinTypes.declarations.count >= 150, "\(BuiltinTypes.declarations.count) built-in types")
        #expect(BuiltinTypes.declarations.allSatisfy { $0.origin == .builtin })
    }

    /// Apple's roots are public.item (physical) and public.content (functional), plus abstract kinds that a concrete
    /// type mixes in beside a data type (an archive, a contact, ...); these have no parents and no tags of their own.
    static let parentlessTypes: Set<String> = [
        "public.item", "public.content", "public.archive", "public.message", "public.contact", "public.calendar-event",
        "public.to-do-item", "public.database", "public.playlist", "public.bookmark", "com.apple.resolvable",
    ]

    /// Abstract types that refine a mixin only (Apple: an email message is a message, a disk image an archive).
    static let mixinRefinements: Set<String> = ["public.email-message", "public.disk-image"]

    @Test func rootsAreApplesRoots() {
        let parentless = Set(BuiltinTypes.declarations.filter { $0.conformsTo.isEmpty }.map(\.identifier))
        #expect(parentless == Self.parentlessTypes)
        for declaration in BuiltinTypes.declarations where Self.parentlessTypes.contains(declaration.identifier) {
            #expect(declaration.extensions.isEmpty && declaration.mimeTypes.isEmpty,
                    "root \(declaration.identifier) carries tags")
        }
    }

    @Test func everyTypeHangsOffTheItemOrContentTree() {
        for declaration in BuiltinTypes.declarations {
            let identifier = declaration.identifier
            let chain = database.conformanceChain(of: identifier)
            if Self.parentlessTypes.contains(identifier) { continue }
            if Self.mixinRefinements.contains(identifier) {
                #expect(!chain.contains("public.item") && !chain.contains("public.content"))
                continue
            }
            #expect(chain.contains("public.item") || chain.contains("public.content"), "\(identifier): \(chain)")
        }
    }

    @Test func everyTaggedTypeIsAnItem() {
        for declaration in BuiltinTypes.declarations where !declaration.extensions.isEmpty || !declaration.mimeTypes.isEmpty {
            #expect(database.conforms(declaration.identifier, to: "public.item"), "\(declaration.identifier)")
        }
        // A file type conforms to public.data, or to public.directory for a package.
        for declaration in BuiltinTypes.declarations where !declaration.extensions.isEmpty {
            #expect(database.conforms(declaration.identifier, to: "public.data")
                        || database.conforms(declaration.identifier, to: "public.directory"),
                    "\(declaration.identifier)")
        }
    }

    @Test func tagsAreNormalized() {
        for declaration in BuiltinTypes.declarations {
            for ext in declaration.extensions {
                #expect(!ext.isEmpty && !ext.hasPrefix(".") && !ext.hasSuffix(".") && ext == ext.lowercased()
                        && !ext.contains(where: { $0 == "/" || $0 == " " || $0 == "*" }), "\(declaration.identifier): \(ext)")
            }
            for mime in declaration.mimeTypes {
                let parts = mime.split(separator: ";")[0].split(separator: "/", omittingEmptySubsequences: false)
                #expect(parts.count == 2 && parts.allSatisfy { !$0.isEmpty } && mime == mime.lowercased(),
                        "\(declaration.identifier): \(mime)")
            }
            #expect(!declaration.description.isEmpty, "\(declaration.identifier) has no description")
            #expect(Set(declaration.conformsTo).count == declaration.conformsTo.count)
            #expect(!declaration.conformsTo.contains(declaration.identifier))
        }
    }

    /// The types that lose a tag they declare to an earlier type, and to which: each is deliberate (see the comments in
    /// BuiltinTypes.types). A new entry here means a new shared tag whose winner should be chosen on purpose.
    @Test func sharedTagsGoToTheIntendedType() {
        var lost: Set<String> = []
        for declaration in BuiltinTypes.declarations {
            for ext in declaration.extensions where database.identifier(forExtension: ext) != declaration.identifier {
                lost.insert("\(ext) \(declaration.identifier) -> \(database.identifier(forExtension: ext) ?? "nil")")
            }
            for mime in declaration.mimeTypes where database.identifier(forMIMEType: mime) != declaration.identifier {
                lost.insert("\(mime) \(declaration.identifier) -> \(database.identifier(forMIMEType: mime) ?? "nil")")
            }
        }
        #expect(lost == [
            "plist com.apple.xml-property-list -> com.apple.property-list",
            "plist com.apple.binary-property-list -> com.apple.property-list",
            "m4a public.mpeg-4-audio -> com.apple.m4a-audio",
            "ts com.microsoft.typescript -> public.mpeg-2-transport-stream",
            "application/x-gtar org.gnu.gnu-tar-archive -> public.tar-archive",
            "application/x-font-type1 com.adobe.postscript-pfa-font -> com.adobe.postscript-pfb-font",
            // A preferred MIME type shared with the family's base type: what the files are sent as.
            "application/x-plist com.apple.xml-property-list -> com.apple.property-list",
            "application/x-plist com.apple.binary-property-list -> com.apple.property-list",
            "application/x-shellscript public.bash-script -> public.shell-script",
            "application/x-shellscript public.zsh-script -> public.shell-script",
            "application/x-shellscript public.ksh-script -> public.shell-script",
            "application/x-csh public.tcsh-script -> public.csh-script",
            "audio/basic public.ulaw-audio -> public.au-audio",
            "application/java-archive com.sun.web-application-archive -> com.sun.java-archive",
            "application/vnd.microsoft.portable-executable com.microsoft.windows-dynamic-link-library -> "
                + "com.microsoft.windows-executable",
            "application/x-msdownload com.microsoft.windows-dynamic-link-library -> com.microsoft.windows-executable",
            // Directory types: every directory is inode/directory.
            "inode/directory com.apple.rtfd -> public.directory",
            "inode/directory com.apple.applescript.script-bundle -> public.directory",
            "inode/directory com.apple.application-bundle -> public.directory",
            "inode/directory com.apple.plugin -> public.directory",
            "inode/directory com.apple.metadata-importer -> public.directory",
            "inode/directory com.apple.quicklook-generator -> public.directory",
            "inode/directory com.apple.xpc-service -> public.directory",
            "inode/directory com.apple.framework -> public.directory",
            "inode/directory com.apple.application-and-system-extension -> public.directory",
            "inode/directory com.apple.systempreference.prefpane -> public.directory",
            "inode/directory com.apple.iwork.keynote.key -> public.directory",
            "inode/directory com.apple.iwork.keynote.kth -> public.directory",
            "inode/directory com.apple.keynote.key -> public.directory",
            "inode/directory com.apple.iwork.pages.pages -> public.directory",
            "inode/directory com.apple.iwork.numbers.numbers -> public.directory",
            "inode/directory com.apple.iwork.numbers.template -> public.directory",
            // iWork's package forms: their extensions name directories; a file keeps the single-file form's.
            "key com.apple.iwork.keynote.key -> com.apple.iwork.keynote.sffkey",
            "key com.apple.keynote.key -> com.apple.iwork.keynote.sffkey",
            "kth com.apple.iwork.keynote.kth -> com.apple.iwork.keynote.sffkth",
            "pages com.apple.iwork.pages.pages -> com.apple.iwork.pages.sffpages",
            "numbers com.apple.iwork.numbers.numbers -> com.apple.iwork.numbers.sffnumbers",
        ])
    }

    /// A file typed by its name reports a MIME type: every type with an extension has one.
    @Test func everyTypeWithAnExtensionHasAMIMEType() {
        for declaration in BuiltinTypes.declarations where !declaration.extensions.isEmpty {
            #expect(!declaration.mimeTypes.isEmpty, "\(declaration.identifier) has extensions but no MIME type")
        }
    }
}
