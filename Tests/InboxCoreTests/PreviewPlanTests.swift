import Testing
@testable import InboxCore

/// Which built-in generator previews which type, on the built-in type table's own conformance chains.
@Suite("Preview: the plan")
struct PreviewPlanTests {
    static func thumbnailer(_ name: String, _ program: String, _ mimeTypes: [String]) -> ThumbnailerEntry {
        ThumbnailerEntry(path: "/usr/share/thumbnailers/\(name).thumbnailer", tryExec: program,
                         exec: [program, "-s", "%s", "%u", "%o"], mimeTypes: mimeTypes)
    }

    static let gdkPixbuf = thumbnailer("gdk-pixbuf-thumbnailer", "/usr/bin/gdk-pixbuf-thumbnailer", ["image/png", "image/jpeg"])
    static let librsvg = thumbnailer("librsvg", "/usr/bin/gdk-pixbuf-thumbnailer", ["image/svg+xml"])
    static let svgTool = thumbnailer("svgtool", "/opt/svg/bin/svg-thumb", ["image/svg+xml"])
    static let totem = thumbnailer("totem", "totem-video-thumbnailer", ["video/mp4", "video/webm"])
    static let m4v = thumbnailer("m4v", "/usr/bin/m4v-thumbnailer", ["video/x-m4v"])
    static let textTool = thumbnailer("text", "/usr/bin/text-thumbnailer", ["text/plain", "application/json"])
    static let desktop = [gdkPixbuf, librsvg, totem, textTool]

    struct Case: Sendable, CustomTestStringConvertible {
        let type: String
        let mimeTypes: [String]
        let package: Bool
        let thumbnailers: [ThumbnailerEntry]
        let expected: PreviewGenerator
        var testDescription: String { "\(type)\(package ? " (package)" : "") → \(expected)" }
        init(_ type: String, mime mimeTypes: [String] = [], package: Bool = false,
             with thumbnailers: [ThumbnailerEntry] = PreviewPlanTests.desktop, _ expected: PreviewGenerator) {
            self.type = type
            self.mimeTypes = mimeTypes
            self.package = package
            self.thumbnailers = thumbnailers
            self.expected = expected
        }
    }

    static let cases: [Case] = [
        Case("com.apple.iwork.pages.sffpages", mime: ["application/vnd.apple.pages"], .iWork),
        Case("com.apple.iwork.numbers.sffnumbers", .iWork),
        Case("com.apple.iwork.keynote.sffkey", .iWork),
        Case("com.apple.iwork.keynote.sffkth", .iWork),
        Case("com.apple.iwork.pages.pages", mime: ["inode/directory"], package: true, .iWork),
        Case("com.apple.iwork.numbers.template", package: true, .iWork),
        Case("com.apple.iwork.keynote.key", package: true, .iWork),
        Case("com.apple.rtfd", mime: ["inode/directory"], package: true, .facts),
        Case("public.comma-separated-values-text", mime: ["text/csv"], .table(.comma)),
        Case("public.tab-separated-values-text", mime: ["text/tab-separated-values"], .table(.tab)),
        Case("public.utf8-tab-separated-values-text", .table(.tab)),
        Case("com.adobe.pdf", mime: ["application/pdf"], .pdf),
        Case("com.adobe.postscript", mime: ["application/postscript"], .postscript),
        Case("com.adobe.encapsulated-postscript", mime: ["image/x-eps"], .postscript),
        Case("public.rtf", mime: ["text/rtf"], .office),
        Case("com.microsoft.word.doc", .office),
        Case("com.microsoft.excel.xls", .office),
        Case("com.microsoft.powerpoint.ppt", .office),
        Case("org.openxmlformats.wordprocessingml.document", .office),
        Case("org.openxmlformats.spreadsheetml.sheet", .office),
        Case("org.openxmlformats.presentationml.presentation", .office),
        Case("org.oasis-open.opendocument.text", .office),
        Case("org.oasis-open.opendocument.spreadsheet", .office),
        Case("org.oasis-open.opendocument.graphics", .office),
        Case("public.png", mime: ["image/png"], .image),
        Case("public.jpeg", mime: ["image/jpeg"], with: [], .image),
        Case("public.svg-image", mime: ["image/svg+xml"], .image),
        Case("public.svg-image", mime: ["image/svg+xml"], with: desktop + [svgTool], .thumbnailer(svgTool)),
        Case("public.xbitmap-image", mime: ["image/x-xbitmap"], .image),
        Case("public.python-script", mime: ["text/x-python"], .text),
        Case("public.json", mime: ["application/json"], .text),
        Case("com.apple.xml-property-list", mime: ["application/x-plist"], .text),
        Case("public.plain-text", mime: ["text/plain"], .text),
        Case("com.apple.binary-property-list", mime: ["application/x-bplist"], .facts),
        Case("public.mpeg-4", mime: ["video/mp4"], .thumbnailer(totem)),
        Case("public.mpeg-4", mime: ["video/MP4"], .thumbnailer(totem)),
        Case("public.mpeg-4", mime: ["video/mp4"], with: [], .facts),
        Case("public.mpeg-4", mime: ["video/x-m4v", "video/mp4"], with: [totem, m4v], .thumbnailer(m4v)),
        Case("public.mpeg-4", mime: ["video/mp4", "video/x-m4v"], with: [m4v, totem], .thumbnailer(totem)),
        Case("public.zip-archive", mime: ["application/zip"], .facts),
        Case("public.folder", mime: ["inode/directory"], package: true, .facts),
    ]

    @Test(arguments: cases)
    func generator(_ testCase: Case) {
        let database = TypeDatabase.builtin
        #expect(database.declares(testCase.type), "\(testCase.type) is not in BuiltinTypes.types")
        let chain = database.conformanceChain(of: testCase.type)
        #expect(PreviewPlan.generator(chain: chain, mimeTypes: testCase.mimeTypes, package: testCase.package,
                                      thumbnailers: testCase.thumbnailers) == testCase.expected)
    }

    /// Every identifier the rules name is one the type table declares: a typo would make a rule never match.
    @Test func theRulesNameDeclaredTypes() {
        let named = PreviewPlan.officeTypes + ["public.comma-separated-values-text", "public.tab-separated-values-text",
                                               "com.adobe.pdf", "com.adobe.postscript", "public.image", "public.text"]
        for identifier in named { #expect(TypeDatabase.builtin.declares(identifier), "\(identifier)") }
        for family in PreviewPlan.iWorkFamilies {
            #expect(BuiltinTypes.declarations.contains { $0.identifier.hasPrefix(family) }, "\(family)")
        }
    }

    @Test func anUnknownTypeWithNoChainIsFacts() {
        #expect(PreviewPlan.generator(chain: [], mimeTypes: [], package: false, thumbnailers: Self.desktop) == .facts)
        #expect(PreviewPlan.generator(chain: ["dyn.x"], mimeTypes: ["video/webm"], package: false,
                                      thumbnailers: Self.desktop) == .thumbnailer(Self.totem))
    }
}
