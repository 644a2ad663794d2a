import Testing
@testable import InboxCore

/// Types that registrations export and import, added to the built-in table, and what is wrong with them.
@Suite("Registration-declared types")
struct DeclaredTypeTests {
    let database = TypeDatabase.builtin

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
