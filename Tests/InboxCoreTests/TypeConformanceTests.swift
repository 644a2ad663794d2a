import Testing
@testable import InboxCore

/// Conformance in the built-in type table: which types conform to which, the breadth-first chain, and the distance.
@Suite("Type conformance")
struct TypeConformanceTests {
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
}
