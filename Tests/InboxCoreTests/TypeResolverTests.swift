import Testing
@testable import InboxCore

@Suite("Type resolution")
struct TypeResolverTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let explicit: String?
        let fileName: String
        let expected: ResolvedType
        var testDescription: String { "\(explicit ?? "-") \(fileName)" }
    }

    static let cases: [Case] = [
        Case(explicit: nil, fileName: "photo.png", expected: ResolvedType(identifier: "public.png", source: .extension)),
        Case(explicit: "public.jpeg", fileName: "photo.png",
             expected: ResolvedType(identifier: "public.jpeg", source: .attribute)),
        Case(explicit: "  public.json\n", fileName: "x", expected: ResolvedType(identifier: "public.json", source: .attribute)),
        Case(explicit: "image/png", fileName: "x.bin", expected: ResolvedType(identifier: "public.png", source: .attribute)),
        Case(explicit: "com.nobody.type", fileName: "notes.TXT", expected: ResolvedType(
            identifier: "public.plain-text", source: .extension,
            diagnostics: ["content-type attribute 'com.nobody.type' is not a known type; using the file name"])),
        Case(explicit: "com.nobody.type", fileName: "README", expected: ResolvedType(
            identifier: "public.data", source: .fallback,
            diagnostics: ["content-type attribute 'com.nobody.type' is not a known type; using the file name"])),
        Case(explicit: String(repeating: "a", count: 300), fileName: "a.png", expected: ResolvedType(
            identifier: "public.png", source: .extension,
            diagnostics: ["content-type attribute is longer than 256 bytes; using the file name"])),
        Case(explicit: nil, fileName: "PHOTO.JPG", expected: ResolvedType(identifier: "public.jpeg", source: .extension)),
        Case(explicit: nil, fileName: "a.tar.gz",
             expected: ResolvedType(identifier: "org.gnu.gnu-zip-archive", source: .extension)),
        Case(explicit: nil, fileName: "README", expected: ResolvedType(identifier: "public.data", source: .fallback)),
        Case(explicit: nil, fileName: "trailing.", expected: ResolvedType(identifier: "public.data", source: .fallback)),
        Case(explicit: nil, fileName: ".png", expected: ResolvedType(identifier: "public.data", source: .fallback)),
        Case(explicit: nil, fileName: "dir.png/file", expected: ResolvedType(identifier: "public.data", source: .fallback)),
        Case(explicit: nil, fileName: "/inbox/report.pdf",
             expected: ResolvedType(identifier: "com.adobe.pdf", source: .extension)),
        Case(explicit: nil, fileName: "x.unknownext", expected: ResolvedType(identifier: "public.data", source: .fallback)),
        Case(explicit: "", fileName: "", expected: ResolvedType(identifier: "public.data", source: .fallback)),
        Case(explicit: " ", fileName: "a.gif", expected: ResolvedType(identifier: "com.compuserve.gif", source: .extension)),
        Case(explicit: nil, fileName: "caf\u{E9}.Md",
             expected: ResolvedType(identifier: "net.daringfireball.markdown", source: .extension)),
    ]

    @Test(arguments: cases)
    func resolve(_ testCase: Case) {
        let resolved = TypeResolver.resolve(explicit: testCase.explicit, fileName: testCase.fileName, in: .builtin)
        #expect(resolved == testCase.expected)
    }

    @Test func registrationTypesResolveByExtension() {
        let declaration = TypeDeclaration(identifier: "com.example.customprofile", description: "", conformsTo: ["public.data"],
                                          extensions: ["customprofile"], mimeTypes: ["application/x-customprofile"],
                                          origin: .exported(SourceLocation(file: "p.handler", line: 1)))
        let database = TypeDatabase.builtin.adding([declaration]).database
        #expect(TypeResolver.resolve(explicit: nil, fileName: "me.CustomProfile", in: database).identifier
            == "com.example.customprofile")
        #expect(TypeResolver.resolve(explicit: "application/x-customprofile", fileName: "x", in: database)
            == ResolvedType(identifier: "com.example.customprofile", source: .attribute))
    }
}
