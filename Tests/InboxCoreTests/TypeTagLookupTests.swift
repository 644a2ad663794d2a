import Testing
@testable import InboxCore

/// Extension and MIME type lookups in the built-in type table, and each type's preferred tags.
@Suite("Type tag lookup")
struct TypeTagLookupTests {
    let database = TypeDatabase.builtin

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
}

/// Which dotted suffix of a name the table's extension lookup takes: the longest it knows, in any case; a dot that
/// starts the name begins no extension, and a path's directories say nothing.
@Suite("Extension of a name")
struct NameExtensionTests {
    let database = TypeDatabase.builtin

    @Test(arguments: [
        ("a.tar.gz", "tar.gz"), ("A.TAR.GZ", "tar.gz"), ("x.y.tar.gz", "tar.gz"), ("notes.txt", "txt"),
        ("a..txt", "txt"), ("photo.JPEG", "jpeg"), (".tar.gz", "gz"), ("archive.gz", "gz"),
        ("dir.tar/file.gz", "gz"), ("dir.txt/plain", nil), ("x.", nil), (".txt", nil), ("..txt", "txt"),
        ("noextension", nil), ("weird.", nil), ("ünï.txt", "txt"),
    ] as [(String, String?)])
    func theLongestKnownSuffix(name: String, suffix: String?) {
        let found = database.nameCandidates(of: name).types.first
        #expect(found?.match == suffix.map { "*." + $0 }, "\(name)")
    }
}
