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
             expected: ResolvedType(identifier: "org.gnu.gnu-zip-tar-archive", source: .extension)),
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
        #expect(resolved.identifier == testCase.expected.identifier)
        #expect(resolved.source == testCase.expected.source)
        #expect(resolved.diagnostics == testCase.expected.diagnostics)
        #expect(resolved.mismatch == nil)
    }

    @Test func registrationTypesResolveByExtension() {
        let declaration = TypeDeclaration(identifier: "com.example.customprofile", description: "", conformsTo: ["public.data"],
                                          extensions: ["customprofile"], mimeTypes: ["application/x-customprofile"],
                                          origin: .exported(SourceLocation(file: "p.handler", line: 1)))
        let database = TypeDatabase.builtin.adding([declaration]).database
        #expect(TypeResolver.resolve(explicit: nil, fileName: "me.CustomProfile", in: database).identifier
            == "com.example.customprofile")
        let byAttribute = TypeResolver.resolve(explicit: "application/x-customprofile", fileName: "x", in: database)
        #expect(byAttribute.identifier == "com.example.customprofile")
        #expect(byAttribute.source == .attribute)
        #expect(byAttribute.mimeType == "application/x-customprofile")
    }
}

/// The decision rule with content: each case is (attribute, name, libmagic's MIME type) → (type, source, mismatch).
@Suite("Type decision rule")
struct TypeDecisionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let explicit: String?
        let fileName: String
        let content: String?
        let identifier: String
        let source: ResolvedType.Source
        /// nil: no mismatch; true/false: a mismatch where the content won / the claim was kept.
        let contentWon: Bool?
        var testDescription: String { "\(explicit ?? "-") \(fileName) [\(content ?? "not sniffed")]" }
        /// Expect whatever UTI the table gives the content's MIME type.
        static let contentsOwn = "(the content's)"
    }

    static let database: TypeDatabase = {
        let profile = TypeDeclaration(identifier: "com.example.customprofile", description: "",
                                      conformsTo: ["public.data", "public.content"], extensions: ["customprofile"],
                                      mimeTypes: [], origin: .exported(SourceLocation(file: "p.handler", line: 1)))
        let jsonProfile = TypeDeclaration(identifier: "com.example.jsonprofile", description: "",
                                          conformsTo: ["public.json"], extensions: ["jsonprofile"],
                                          mimeTypes: [], origin: .exported(SourceLocation(file: "p.handler", line: 9)))
        return TypeDatabase.builtin.adding([profile, jsonProfile]).database
    }()

    static let cases: [Case] = [
        // Rule 3: one piece of evidence decides.
        Case(explicit: nil, fileName: "photo", content: "image/png", identifier: "public.png", source: .content, contentWon: nil),
        Case(explicit: nil, fileName: "photo.png", content: nil, identifier: "public.png", source: .extension, contentWon: nil),
        Case(explicit: nil, fileName: "blob", content: "application/octet-stream", identifier: "public.data",
             source: .fallback, contentWon: nil),
        Case(explicit: nil, fileName: "empty", content: "inode/x-empty", identifier: "public.data", source: .fallback,
             contentWon: nil),
        Case(explicit: nil, fileName: "notes", content: "text/plain", identifier: "public.plain-text", source: .content,
             contentWon: nil),
        Case(explicit: nil, fileName: "photo.png", content: "application/octet-stream", identifier: "public.png",
             source: .extension, contentWon: nil),
        // Rule 4: agreement; the claim decides, an abstract claim is refined.
        Case(explicit: nil, fileName: "photo.png", content: "image/png", identifier: "public.png", source: .extension,
             contentWon: nil),
        Case(explicit: nil, fileName: "table.csv", content: "text/plain", identifier: "public.comma-separated-values-text",
             source: .extension, contentWon: nil),
        Case(explicit: nil, fileName: "letter.docx", content: "application/zip",
             identifier: "org.openxmlformats.wordprocessingml.document", source: .extension, contentWon: nil),
        Case(explicit: nil, fileName: "notes.txt", content: "text/x-shellscript", identifier: "public.plain-text",
             source: .extension, contentWon: nil),
        Case(explicit: "public.image", fileName: "x", content: "image/png", identifier: "public.png", source: .content,
             contentWon: nil),
        Case(explicit: "public.data", fileName: "x", content: "application/pdf", identifier: "com.adobe.pdf",
             source: .content, contentWon: nil),
        Case(explicit: "com.example.jsonprofile", fileName: "p", content: "application/json",
             identifier: "com.example.jsonprofile", source: .attribute, contentWon: nil),
        // Rule 5: disagreement; the content decides unless it is a carrier.
        Case(explicit: nil, fileName: "photo.png", content: "application/x-pie-executable",
             identifier: Case.contentsOwn, source: .content, contentWon: true),
        Case(explicit: nil, fileName: "photo.png", content: "application/pdf", identifier: "com.adobe.pdf",
             source: .content, contentWon: true),
        Case(explicit: "public.png", fileName: "photo.png", content: "application/x-executable",
             identifier: Case.contentsOwn, source: .content, contentWon: true),
        Case(explicit: nil, fileName: "photo.jpg", content: "image/png", identifier: "public.png", source: .content,
             contentWon: true),
        Case(explicit: nil, fileName: "p.customprofile", content: "application/json",
             identifier: "com.example.customprofile", source: .extension, contentWon: false),
        // Text content overturns a claim whose type cannot be text; it keeps one that can be (above).
        Case(explicit: nil, fileName: "photo.png", content: "text/plain", identifier: "public.plain-text", source: .content,
             contentWon: true),
        Case(explicit: nil, fileName: "p.customprofile", content: "text/plain", identifier: "com.example.customprofile",
             source: .extension, contentWon: false),
        Case(explicit: nil, fileName: "report.pdf", content: "application/zip", identifier: "com.adobe.pdf",
             source: .extension, contentWon: false),
    ]

    @Test(arguments: cases)
    func decide(_ testCase: Case) {
        let resolved = TypeResolver.resolve(explicit: testCase.explicit, fileName: testCase.fileName,
                                            content: testCase.content, in: Self.database)
        let expected = testCase.identifier == Case.contentsOwn
            ? Self.database.typeIdentifier(forMIMEType: testCase.content ?? "") : testCase.identifier
        #expect(resolved.identifier == expected)
        #expect(resolved.source == testCase.source)
        #expect(resolved.mismatch?.contentWon == testCase.contentWon)
        if let mismatch = resolved.mismatch {
            #expect(mismatch.claimed != mismatch.content)
            #expect(mismatch.contentWon == (resolved.identifier != mismatch.claimed))
        }
    }

    @Test func anExecutableNeverBecomesAnImageByItsName() {
        for name in ["photo.png", "photo.jpg", "photo.gif", "PHOTO.PNG", "a.svg", "x.tiff"] {
            for mime in ["application/x-executable", "application/x-pie-executable", "application/x-sharedlib"] {
                let resolved = TypeResolver.resolve(explicit: nil, fileName: name, content: mime, in: Self.database)
                let image = Self.database.conforms(resolved.identifier, to: "public.image")
                let executable = Self.database.conforms(resolved.identifier, to: "public.executable")
                #expect(!image, "\(name) \(mime): \(resolved.identifier)")
                #expect(executable, "\(name) \(mime): \(resolved.identifier)")
                #expect(resolved.source == .content)
            }
        }
    }
}
