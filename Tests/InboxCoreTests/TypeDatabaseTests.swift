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
        ("org.openxmlformats.spreadsheetml.sheet", "public.composite-content", false),
        ("public.zip-archive", "com.pkware.zip-archive", true), ("com.pkware.zip-archive", "public.zip-archive", false),
        ("public.python-script", "public.source-code", true), ("public.folder", "public.data", false),
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

    @Test(arguments: [
        ("png", "public.png"), ("PNG", "public.png"), (".jpg", "public.jpeg"), ("JPEG", "public.jpeg"),
        ("zip", "public.zip-archive"), ("docx", "org.openxmlformats.wordprocessingml.document"),
        ("md", "net.daringfireball.markdown"), ("yml", "public.yaml"), ("gz", "org.gnu.gnu-zip-archive"),
        ("nope", nil), ("", nil),
    ] as [(String, String?)])
    func extensionLookup(_ ext: String, _ expected: String?) {
        #expect(database.identifier(forExtension: ext) == expected)
    }

    @Test(arguments: [
        ("image/png", "public.png"), ("IMAGE/PNG", "public.png"), ("text/plain", "public.plain-text"),
        ("text/plain;charset=utf-8", "public.utf8-plain-text"), ("text/plain; charset=UTF-16", "public.utf16-plain-text"),
        ("text/html; charset=iso-8859-1", "public.html"), ("application/pdf", "com.adobe.pdf"),
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
                        "com.apple.keynote.key", "com.apple.pages.pages", "com.apple.numbers.numbers",
                        "net.daringfireball.markdown", "public.yaml"]
        for identifier in required { #expect(database.contains(identifier), "\(identifier) missing") }
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
