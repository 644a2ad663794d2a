import Testing
@testable import InboxCore

@Suite("Type database")
struct TypeDatabaseTests {
    let database = TypeDatabase.builtin

    @Test(arguments: [
        ("public.png", "public.image", true), ("public.png", "public.data", true), ("public.png", "public.item", true),
        ("public.png", "public.content", true), ("public.png", "public.png", true), ("public.png", "public.text", false),
        ("public.utf8-plain-text", "public.text", true), ("public.svg-image", "public.xml", true),
        ("public.svg-image", "public.image", true), ("com.adobe.pdf", "public.composite-content", true),
        ("org.openxmlformats.wordprocessingml.document", "public.zip-archive", true),
        ("org.openxmlformats.wordprocessingml.document", "public.archive", true),
        ("org.openxmlformats.spreadsheetml.sheet", "public.spreadsheet", true),
        ("org.openxmlformats.spreadsheetml.sheet", "public.composite-content", false),
        ("org.openxmlformats.presentationml.presentation", "public.composite-content", true),
        ("org.oasis-open.opendocument.text", "public.composite-content", true),
        ("org.oasis-open.opendocument.text", "public.zip-archive", false),
        ("com.apple.iwork.pages.sffpages", "public.zip-archive", true),
        ("public.zip-archive", "com.pkware.zip-archive", true), ("com.pkware.zip-archive", "public.zip-archive", false),
        ("public.zip-archive", "public.archive", true), ("public.zip-archive", "public.data", true),
        ("com.sun.java-archive", "public.zip-archive", true), ("com.sun.java-archive", "public.executable", true),
        ("org.gnu.gnu-zip-tar-archive", "org.gnu.gnu-zip-archive", true),
        ("org.gnu.gnu-zip-tar-archive", "public.tar-archive", false),
        ("public.tar-archive", "org.gnu.gnu-tar-archive", true), ("public.tar-bzip2-archive", "public.archive", true),
        ("org.tukaani.tar-xz-archive", "org.tukaani.xz-archive", true),
        ("com.apple.disk-image-udif", "public.disk-image", true), ("com.apple.disk-image-udif", "public.archive", true),
        ("public.iso-image", "public.disk-image", true),
        // Scripts: Apple has Python, Perl, Ruby and PHP conform to public.shell-script.
        ("public.python-script", "public.shell-script", true), ("public.python-script", "public.script", true),
        ("public.python-script", "public.source-code", true), ("public.python-script", "public.plain-text", true),
        ("public.python-script", "public.text", true), ("public.python-script", "public.data", true),
        ("public.bash-script", "public.shell-script", true), ("public.perl-script", "public.script", true),
        ("public.make-source", "public.script", true), ("com.netscape.javascript-source", "public.script", true),
        ("com.netscape.javascript-source", "public.executable", true), ("public.json", "public.text", true),
        ("public.json", "com.netscape.javascript-source", false), ("public.c-header", "public.c-source", false),
        ("public.c-plus-plus-source", "public.source-code", true), ("public.swift-source", "public.script", false),
        ("net.daringfireball.markdown", "public.plain-text", true),
        ("public.comma-separated-values-text", "public.delimited-values-text", true),
        ("public.comma-separated-values-text", "public.plain-text", true),
        ("com.apple.xml-property-list", "public.xml", true), ("com.apple.xml-property-list", "com.apple.property-list", true),
        ("com.apple.binary-property-list", "public.text", false), ("public.xhtml", "public.xml", true),
        // Media.
        ("public.heic", "public.heif-standard", true), ("public.heic", "public.heif", false),
        ("public.avif", "public.heif-standard", true), ("com.adobe.raw-image", "public.camera-raw-image", true),
        ("com.adobe.raw-image", "public.image", true), ("public.aiff-audio", "public.aifc-audio", true),
        ("com.microsoft.waveform-audio", "public.audio", true), ("public.mp3", "public.audiovisual-content", true),
        ("public.mp3", "public.movie", false), ("com.apple.m4a-audio", "public.mpeg-4-audio", true),
        ("com.apple.m4v-video", "public.mpeg-4", true), ("org.xiph.opus", "org.xiph.ogg", true),
        ("org.xiph.opus", "public.audio", true), ("org.xiph.ogg-video", "public.movie", true),
        ("org.matroska.mkv", "public.movie", true), ("public.mpeg-2-video", "public.video", true),
        ("public.m3u-playlist", "public.playlist", true),
        // Executables, fonts, certificates, messages, contacts.
        ("public.unix-executable", "public.executable", true), ("public.unix-executable", "public.data", true),
        ("com.microsoft.windows-executable", "public.executable", true), ("public.object-code", "public.executable", true),
        ("public.truetype-ttf-font", "public.font", true), ("org.w3c.woff2", "public.data", true),
        ("public.x509-certificate", "public.data", true), ("com.apple.mail.email", "public.email-message", true),
        ("com.apple.mail.email", "public.message", true), ("public.vcard", "public.contact", true),
        ("com.apple.ical.ics", "public.calendar-event", true), ("public.symlink", "com.apple.resolvable", true),
        ("public.symlink", "public.data", false), ("public.volume", "public.directory", true),
        ("com.apple.package", "public.directory", true), ("public.folder", "public.data", false),
        ("public.image", "public.png", false), ("com.unknown.type", "public.data", false),
        ("com.unknown.type", "com.unknown.type", true),
    ])
    func conformance(_ type: String, _ ancestor: String, _ expected: Bool) {
        #expect(database.conforms(type, to: ancestor) == expected)
    }

    @Test(arguments: [
        ("public.png", ["public.png", "public.image", "public.data", "public.content", "public.item"]),
        ("public.utf8-plain-text", ["public.utf8-plain-text", "public.plain-text", "public.text", "public.data",
                                    "public.content", "public.item"]),
        ("public.svg-image", ["public.svg-image", "public.image", "public.xml", "public.data", "public.content",
                              "public.text", "public.item"]),
        ("public.item", ["public.item"]),
        ("com.unknown.type", ["com.unknown.type"]),
    ])
    func chainIsBreadthFirst(_ type: String, _ chain: [String]) {
        #expect(database.conformanceChain(of: type) == chain)
    }

    @Test(arguments: [
        ("public.png", "public.png", 0), ("public.png", "public.image", 1), ("public.png", "public.data", 2),
        ("public.png", "public.item", 3), ("public.svg-image", "public.text", 2), ("public.png", "public.text", nil),
    ] as [(String, String, Int?)])
    func distance(_ type: String, _ ancestor: String, _ expected: Int?) {
        #expect(database.distance(from: type, to: ancestor) == expected)
    }

    /// Extension -> identifier, including the cases where the order of the table decides (first claim wins).
    @Test(arguments: [
        ("png", "public.png"), ("PNG", "public.png"), (".jpg", "public.jpeg"), ("JPEG", "public.jpeg"),
        ("jpe", "public.jpeg"), ("gif", "com.compuserve.gif"), ("tif", "public.tiff"), ("bmp", "com.microsoft.bmp"),
        ("webp", "org.webmproject.webp"), ("heic", "public.heic"), ("heif", "public.heif"), ("avif", "public.avif"),
        ("svg", "public.svg-image"), ("ico", "com.microsoft.ico"), ("icns", "com.apple.icns"),
        ("psd", "com.adobe.photoshop-image"), ("tga", "com.truevision.tga-image"), ("exr", "com.ilm.openexr-image"),
        ("pgm", "public.pbm"), ("xbm", "public.xbitmap-image"), ("jp2", "public.jpeg-2000"), ("dng", "com.adobe.raw-image"),
        ("txt", "public.plain-text"), ("csv", "public.comma-separated-values-text"),
        ("tsv", "public.tab-separated-values-text"), ("rtf", "public.rtf"), ("html", "public.html"), ("htm", "public.html"),
        ("xhtml", "public.xhtml"), ("xml", "public.xml"), ("json", "public.json"), ("yml", "public.yaml"),
        ("md", "net.daringfireball.markdown"), ("css", "public.css"), ("log", "com.apple.log"), ("vcf", "public.vcard"),
        ("ics", "com.apple.ical.ics"), ("eml", "com.apple.mail.email"), ("plist", "com.apple.property-list"),
        ("c", "public.c-source"), ("h", "public.c-header"), ("cpp", "public.c-plus-plus-source"),
        ("hpp", "public.c-plus-plus-header"), ("m", "public.objective-c-source"), ("mm", "public.objective-c-plus-plus-source"),
        ("swift", "public.swift-source"), ("java", "com.sun.java-source"), ("js", "com.netscape.javascript-source"),
        ("tsx", "com.microsoft.typescript"), ("py", "public.python-script"), ("sh", "public.shell-script"),
        ("bash", "public.bash-script"), ("zsh", "public.zsh-script"), ("pl", "public.perl-script"),
        ("rb", "public.ruby-script"), ("php", "public.php-script"), ("s", "public.assembly-source"),
        ("mk", "public.make-source"), ("patch", "public.patch-file"),
        ("mp3", "public.mp3"), ("wav", "com.microsoft.waveform-audio"), ("aiff", "public.aiff-audio"),
        ("aifc", "public.aifc-audio"), ("mid", "public.midi-audio"), ("au", "public.au-audio"), ("flac", "org.xiph.flac"),
        ("ogg", "org.xiph.ogg-audio"), ("opus", "org.xiph.opus"), ("ogv", "org.xiph.ogg-video"),
        ("m4a", "com.apple.m4a-audio"), ("mp4", "public.mpeg-4"), ("m4v", "com.apple.m4v-video"),
        ("mov", "com.apple.quicktime-movie"), ("mpg", "public.mpeg"), ("avi", "public.avi"), ("3gp", "public.3gpp"),
        ("ts", "public.mpeg-2-transport-stream"), ("mkv", "org.matroska.mkv"), ("webm", "org.webmproject.webm"),
        ("m3u8", "public.m3u-playlist"),
        ("zip", "public.zip-archive"), ("gz", "org.gnu.gnu-zip-archive"), ("tgz", "org.gnu.gnu-zip-tar-archive"),
        ("tar.gz", "org.gnu.gnu-zip-tar-archive"), (".TAR.GZ", "org.gnu.gnu-zip-tar-archive"),
        ("tar", "public.tar-archive"), ("bz2", "public.bzip2-archive"), ("tar.bz2", "public.tar-bzip2-archive"),
        ("xz", "org.tukaani.xz-archive"), ("tar.xz", "org.tukaani.tar-xz-archive"), ("7z", "org.7-zip.7-zip-archive"),
        ("rar", "com.rarlab.rar-archive"), ("cpio", "public.cpio-archive"), ("jar", "com.sun.java-archive"),
        ("aar", "com.apple.archive"), ("rpm", "com.redhat.rpm-archive"),
        ("iso", "public.iso-image"), ("dmg", "com.apple.disk-image-udif"),
        ("exe", "com.microsoft.windows-executable"), ("dll", "com.microsoft.windows-dynamic-link-library"),
        ("o", "public.object-code"), ("class", "com.sun.java-class"),
        ("pdf", "com.adobe.pdf"), ("ps", "com.adobe.postscript"), ("eps", "com.adobe.encapsulated-postscript"),
        ("doc", "com.microsoft.word.doc"), ("xls", "com.microsoft.excel.xls"), ("ppt", "com.microsoft.powerpoint.ppt"),
        ("docx", "org.openxmlformats.wordprocessingml.document"), ("xlsx", "org.openxmlformats.spreadsheetml.sheet"),
        ("pptx", "org.openxmlformats.presentationml.presentation"), ("odt", "org.oasis-open.opendocument.text"),
        ("ods", "org.oasis-open.opendocument.spreadsheet"), ("odp", "org.oasis-open.opendocument.presentation"),
        ("odg", "org.oasis-open.opendocument.graphics"), ("pages", "com.apple.iwork.pages.sffpages"),
        ("numbers", "com.apple.iwork.numbers.sffnumbers"), ("key", "com.apple.iwork.keynote.sffkey"),
        ("epub", "org.idpf.epub-container"), ("webarchive", "com.apple.webarchive"),
        ("ttf", "public.truetype-ttf-font"), ("otf", "public.opentype-font"), ("ttc", "public.truetype-collection-font"),
        ("pfb", "com.adobe.postscript-pfb-font"), ("woff", "org.w3c.woff"), ("woff2", "org.w3c.woff2"),
        ("pem", "public.x509-certificate"), ("cer", "public.x509-certificate"), ("p12", "com.rsa.pkcs-12"),
        ("webloc", "com.apple.web-internet-location"), ("url", "com.microsoft.internet-shortcut"),
        ("stl", "public.standard-tesselated-geometry-format"), ("usdz", "com.pixar.universal-scene-description-mobile"),
        ("nope", nil), ("", nil), ("gz.tar", nil),
    ] as [(String, String?)])
    func extensionLookup(_ ext: String, _ expected: String?) {
        #expect(database.identifier(forExtension: ext) == expected)
    }

    /// MIME type -> identifier: shared-mime-info's canonical names and aliases, Apple's names, and what libmagic
    /// (`file --mime-type`) prints for real files, where those differ.
    @Test(arguments: [
        ("image/png", "public.png"), ("IMAGE/PNG", "public.png"), ("text/plain", "public.plain-text"),
        ("text/plain;charset=utf-8", "public.utf8-plain-text"), ("text/plain; charset=UTF-16", "public.utf16-plain-text"),
        ("text/plain; charset=us-ascii", "public.plain-text"),
        ("text/html; charset=iso-8859-1", "public.html"), ("application/pdf", "com.adobe.pdf"),
        ("application/octet-stream", "public.data"), ("inode/directory", "public.directory"),
        ("inode/symlink", "public.symlink"),
        // shared-mime-info canonical names and aliases
        ("text/x-python", "public.python-script"), ("text/x-python3", "public.python-script"),
        ("application/x-shellscript", "public.shell-script"), ("text/x-sh", "public.shell-script"),
        ("application/x-perl", "public.perl-script"), ("application/x-ruby", "public.ruby-script"),
        ("application/x-php", "public.php-script"), ("text/x-csrc", "public.c-source"), ("text/x-chdr", "public.c-header"),
        ("text/x-c++src", "public.c-plus-plus-source"), ("text/x-objcsrc", "public.objective-c-source"),
        ("application/javascript", "com.netscape.javascript-source"),
        ("text/javascript", "com.netscape.javascript-source"), ("application/x-yaml", "public.yaml"),
        ("application/yaml", "public.yaml"), ("text/markdown", "net.daringfireball.markdown"),
        ("application/rtf", "public.rtf"), ("text/rtf", "public.rtf"), ("text/xml", "public.xml"),
        ("application/xhtml+xml", "public.xhtml"), ("text/x-makefile", "public.make-source"),
        ("text/calendar", "com.apple.ical.ics"), ("text/vcard", "public.vcard"), ("text/x-vcard", "public.vcard"),
        ("message/rfc822", "com.apple.mail.email"), ("image/heif", "public.heif"),
        ("image/vnd.microsoft.icon", "com.microsoft.ico"), ("image/x-portable-graymap", "public.pbm"),
        ("image/x-eps", "com.adobe.encapsulated-postscript"), ("audio/x-wav", "com.microsoft.waveform-audio"),
        ("audio/vnd.wave", "com.microsoft.waveform-audio"), ("audio/wav", "com.microsoft.waveform-audio"),
        ("audio/mp4", "public.mpeg-4-audio"), ("audio/flac", "org.xiph.flac"), ("audio/x-flac", "org.xiph.flac"),
        ("audio/ogg", "org.xiph.ogg-audio"), ("audio/x-opus+ogg", "org.xiph.opus"), ("video/ogg", "org.xiph.ogg-video"),
        ("application/ogg", "org.xiph.ogg"), ("video/mp2t", "public.mpeg-2-transport-stream"),
        ("application/gzip", "org.gnu.gnu-zip-archive"), ("application/x-gzip", "org.gnu.gnu-zip-archive"),
        ("application/x-compressed-tar", "org.gnu.gnu-zip-tar-archive"), ("application/x-bzip", "public.bzip2-archive"),
        ("application/x-bzip-compressed-tar", "public.tar-bzip2-archive"),
        ("application/x-xz-compressed-tar", "org.tukaani.tar-xz-archive"), ("application/vnd.rar", "com.rarlab.rar-archive"),
        ("application/x-cd-image", "public.iso-image"), ("application/x-java-archive", "com.sun.java-archive"),
        ("application/x-ms-dos-executable", "com.microsoft.windows-executable"), ("font/ttf", "public.truetype-ttf-font"),
        ("font/otf", "public.opentype-font"), ("font/woff2", "org.w3c.woff2"), ("application/pkcs12", "com.rsa.pkcs-12"),
        ("application/x-x509-ca-cert", "public.x509-certificate"), ("application/pkix-cert", "public.x509-certificate"),
        ("application/vnd.apple.keynote", "com.apple.iwork.keynote.sffkey"),
        ("application/vnd.oasis.opendocument.text", "org.oasis-open.opendocument.text"),
        ("application/epub+zip", "org.idpf.epub-container"),
        // first claim wins: x-gtar is an alias of x-tar to shared-mime-info
        ("application/x-gtar", "public.tar-archive"), ("application/x-font-type1", "com.adobe.postscript-pfb-font"),
        // what libmagic prints
        ("text/x-script.python", "public.python-script"), ("text/x-shellscript", "public.shell-script"),
        ("text/x-perl", "public.perl-script"), ("text/x-ruby", "public.ruby-script"), ("text/x-php", "public.php-script"),
        ("text/x-c", "public.c-source"), ("text/x-c++", "public.c-plus-plus-source"),
        ("text/x-objective-c", "public.objective-c-source"), ("text/x-java", "com.sun.java-source"),
        ("text/x-asm", "public.assembly-source"), ("text/x-diff", "public.patch-file"),
        ("application/x-executable", "public.unix-executable"),
        ("application/x-pie-executable", "public.unix-executable"), ("application/x-sharedlib", "public.unix-executable"),
        ("application/x-object", "public.object-code"),
        ("application/vnd.microsoft.portable-executable", "com.microsoft.windows-executable"),
        ("application/x-dosexec", "com.microsoft.windows-executable"), ("application/x-java-applet", "com.sun.java-class"),
        ("application/java-archive", "com.sun.java-archive"), ("application/x-bzip2", "public.bzip2-archive"),
        ("application/x-rar", "com.rarlab.rar-archive"), ("application/x-iso9660-image", "public.iso-image"),
        ("application/x-7z-compressed", "org.7-zip.7-zip-archive"),
        ("image/heic", "public.heic"), ("image/x-portable-greymap", "public.pbm"), ("image/x-icns", "com.apple.icns"),
        ("audio/x-m4a", "com.apple.m4a-audio"), ("video/x-m4v", "com.apple.m4v-video"), ("audio/x-aiff", "public.aiff-audio"),
        ("audio/x-hx-aac-adts", "public.aac-audio"), ("audio/vnd.dolby.dd-raw", "public.ac3-audio"),
        ("video/x-matroska", "org.matroska.mkv"), ("video/x-msvideo", "public.avi"), ("video/quicktime", "com.apple.quicktime-movie"),
        ("font/sfnt", "public.truetype-ttf-font"), ("application/vnd.ms-opentype", "public.opentype-font"),
        ("application/x-nothing", nil),
    ] as [(String, String?)])
    func mimeLookup(_ mime: String, _ expected: String?) {
        #expect(database.identifier(forMIMEType: mime) == expected)
    }

    @Test func preferredTags() {
        #expect(database.preferredExtension(of: "public.jpeg") == "jpeg")
        #expect(database.preferredMIMEType(of: "public.png") == "image/png")
        #expect(database.preferredExtension(of: "public.data") == nil)
        #expect(database.preferredExtension(of: "com.unknown") == nil)
        // shared-mime-info's canonical name comes first.
        #expect(database.preferredMIMEType(of: "public.rtf") == "application/rtf")
        #expect(database.preferredMIMEType(of: "public.python-script") == "text/x-python")
        #expect(database.preferredMIMEType(of: "public.bzip2-archive") == "application/x-bzip")
        #expect(database.preferredMIMEType(of: "com.microsoft.waveform-audio") == "audio/x-wav")
        #expect(database.preferredMIMEType(of: "public.unix-executable") == "application/x-executable")
        #expect(database.preferredExtension(of: "org.gnu.gnu-zip-tar-archive") == "tgz")
        #expect(database.preferredExtension(of: "com.microsoft.typescript") == "ts")
        #expect(database.preferredExtension(of: "public.unix-executable") == nil)
    }

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
            "mp4 public.mpeg-4-audio -> public.mpeg-4",
            "mpg4 public.mpeg-4-audio -> public.mpeg-4",
            "ts com.microsoft.typescript -> public.mpeg-2-transport-stream",
            "application/x-gtar org.gnu.gnu-tar-archive -> public.tar-archive",
            "application/x-font-type1 com.adobe.postscript-pfa-font -> com.adobe.postscript-pfb-font",
        ])
    }

    // MARK: Registration-declared types

    static func exported(_ id: String, _ parents: [String], ext: [String] = [], file: String = "a.handler",
                         line: Int) -> TypeDeclaration {
        TypeDeclaration(identifier: id, description: id, conformsTo: parents, extensions: ext, mimeTypes: [],
                        origin: .exported(SourceLocation(file: file, line: line)))
    }

    static func imported(_ id: String, _ parents: [String], ext: [String] = [], file: String = "b.handler",
                         line: Int) -> TypeDeclaration {
        TypeDeclaration(identifier: id, description: id, conformsTo: parents, extensions: ext, mimeTypes: [],
                        origin: .imported(SourceLocation(file: file, line: line)))
    }

    @Test func exportedBeatsImported() {
        let (added, diagnostics) = database.adding([
            Self.imported("com.example.profile", ["public.text"], ext: ["prof"], line: 3),
            Self.exported("com.example.profile", ["public.data", "public.content"], ext: ["profile"], line: 9),
        ])
        #expect(diagnostics == [])
        #expect(added.declaration(for: "com.example.profile")?.origin
            == .exported(SourceLocation(file: "a.handler", line: 9)))
        #expect(added.conforms("com.example.profile", to: "public.data"))
        #expect(!added.conforms("com.example.profile", to: "public.text"))
        #expect(added.identifier(forExtension: "profile") == "com.example.profile")
        #expect(added.identifier(forExtension: "prof") == nil)
    }

    @Test func importIsUsedWhenNobodyExports() {
        let (added, diagnostics) = database.adding([Self.imported("com.other.thing", ["public.data"], ext: ["thing"],
                                                                  line: 4)])
        #expect(diagnostics == [])
        #expect(added.identifier(forExtension: "THING") == "com.other.thing")
        #expect(added.conformanceChain(of: "com.other.thing") == ["com.other.thing", "public.data", "public.item"])
    }

    @Test func registrationExtensionsBeatBuiltin() {
        let (added, _) = database.adding([Self.exported("com.example.png", ["public.image"], ext: ["png"], line: 2)])
        #expect(added.identifier(forExtension: "png") == "com.example.png")
        #expect(database.identifier(forExtension: "png") == "public.png")
    }

    struct DiagnosticCase: Sendable, CustomTestStringConvertible {
        let name: String
        let declarations: [TypeDeclaration]
        let diagnostics: [String]
        let kept: [String]
        let dropped: [String]
        var testDescription: String { name }
    }

    static let diagnosticCases: [DiagnosticCase] = [
        DiagnosticCase(
            name: "duplicate exporter: first by file and line wins",
            declarations: [exported("com.example.x", ["public.data"], file: "b.handler", line: 2),
                           exported("com.example.x", ["public.text"], file: "a.handler", line: 7)],
            diagnostics: ["b.handler:2: warning: type 'com.example.x' is already exported by a.handler:7, ignored"],
            kept: ["com.example.x"], dropped: []),
        DiagnosticCase(
            name: "export of a builtin",
            declarations: [exported("public.png", ["public.text"], line: 5)],
            diagnostics: ["a.handler:5: warning: type 'public.png' is built in and cannot be exported, ignored"],
            kept: [], dropped: []),
        DiagnosticCase(
            name: "unknown ConformsTo target",
            declarations: [exported("com.example.y", ["com.nobody.base"], line: 11)],
            diagnostics: ["a.handler:11: warning: type 'com.example.y' conforms to unknown type 'com.nobody.base'"],
            kept: ["com.example.y"], dropped: []),
        DiagnosticCase(
            name: "two-type cycle",
            declarations: [exported("com.example.a", ["com.example.b"], line: 3),
                           imported("com.example.b", ["com.example.a"], line: 8)],
            diagnostics: ["a.handler:3: type 'com.example.a' conforms to itself through ConformsTo=, ignored",
                          "b.handler:8: type 'com.example.b' conforms to itself through ConformsTo=, ignored"],
            kept: [], dropped: ["com.example.a", "com.example.b"]),
        DiagnosticCase(
            name: "self cycle, and a type leading into it loses its parent",
            declarations: [exported("com.example.self", ["com.example.self"], line: 20),
                           exported("com.example.child", ["com.example.self"], line: 30)],
            diagnostics: ["a.handler:20: type 'com.example.self' conforms to itself through ConformsTo=, ignored",
                          "a.handler:30: warning: type 'com.example.child' conforms to unknown type 'com.example.self'"],
            kept: ["com.example.child"], dropped: ["com.example.self"]),
    ]

    @Test(arguments: diagnosticCases)
    func declarationProblems(_ testCase: DiagnosticCase) {
        let (added, diagnostics) = database.adding(testCase.declarations)
        #expect(diagnostics.map(\.description) == testCase.diagnostics)
        for identifier in testCase.kept { #expect(added.contains(identifier)) }
        for identifier in testCase.dropped { #expect(!added.contains(identifier)) }
    }

    @Test func duplicateExporterKeepsTheFirstDeclaration() {
        let (added, _) = database.adding(Self.diagnosticCases[0].declarations)
        #expect(added.conforms("com.example.x", to: "public.text"))
    }

    @Test func builtinCannotBeRedefinedByImport() {
        let (added, diagnostics) = database.adding([Self.imported("public.png", ["public.text"], line: 1)])
        #expect(diagnostics == [])
        #expect(!added.conforms("public.png", to: "public.text"))
    }
}
