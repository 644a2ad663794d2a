import Testing
@testable import InboxCore

/// Info.plist diagnostics: at file:line in XML, at a key path (or an offset) in binary.
@Suite("Info.plist diagnostics")
struct InfoPlistDiagnosticsTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        var path = "t.plist"
        let diagnostics: [String]
        var testDescription: String { name }
    }

    /// The valid InboxdHandler and CFBundleDocumentTypes lines of InfoPlistTests.
    static let execLine = InfoPlistTests.execLine
    static let documentTypesLine = InfoPlistTests.documentTypesLine

    static func handler(_ keys: String) -> String {
        "<key>InboxdHandler</key> <dict><key>Exec</key> <string>/bin/true</string>\(keys)</dict>"
    }

    static func documentType(_ keys: String) -> String {
        "<key>CFBundleDocumentTypes</key> <array><dict>\(keys)</dict></array>"
    }

    static func exported(_ keys: String) -> String {
        "<key>UTExportedTypeDeclarations</key> <array><dict>\(keys)</dict></array>"
    }

    static let errorCases: [Case] = [
        Case(name: "not a dict", input: lines("<?xml version=\"1.0\"?>", "<plist>", "<array/>", "</plist>"),
             diagnostics: ["t.plist:3: the top level of an Info.plist must be a dict, not an array"]),
        Case(name: "syntax error", input: infoPlist(execLine, documentTypesLine, "<key>dangling</key>"),
             diagnostics: ["t.plist:6: key 'dangling' has no value"]),
        Case(name: "missing InboxdHandler", input: infoPlist(documentTypesLine),
             diagnostics: ["t.plist:3: no command: missing InboxdHandler → Exec"]),
        Case(name: "InboxdHandler without Exec",
             input: infoPlist("<key>InboxdHandler</key> <dict><key>User</key> <string>u</string></dict>", documentTypesLine),
             diagnostics: ["t.plist:3: no command: missing InboxdHandler → Exec"]),
        Case(name: "InboxdHandler a string", input: infoPlist("<key>InboxdHandler</key> <string>/bin/true</string>",
                                                             documentTypesLine),
             diagnostics: ["t.plist:4: InboxdHandler: must be a dict, not a string"]),
        Case(name: "Exec a dict", input: infoPlist("<key>InboxdHandler</key> <dict><key>Exec</key> <dict/></dict>",
                                                  documentTypesLine),
             diagnostics: ["t.plist:4: InboxdHandler.Exec: must be a string, a number or a boolean, or an array of strings, not a dict"]),
        Case(name: "Exec with an integer word",
             input: infoPlist("<key>InboxdHandler</key> <dict><key>Exec</key>",
                              "<array><string>/bin/echo</string><integer>1</integer></array></dict>", documentTypesLine),
             diagnostics: ["t.plist:5: InboxdHandler.Exec[1]: must hold only strings, not an integer"]),
        Case(name: "Exec with a line break",
             input: infoPlist("<key>InboxdHandler</key> <dict><key>Exec</key>",
                              "<array><string>/bin/echo</string>", "<string>a&#10;b</string></array></dict>",
                              documentTypesLine),
             diagnostics: ["t.plist:6: InboxdHandler.Exec[1]: holds a line break, which a registration value cannot carry"]),
        Case(name: "Exec a relative program",
             input: infoPlist("<key>InboxdHandler</key> <dict><key>Exec</key>",
                              "<array><string>echo</string><string>%f</string></array></dict>", documentTypesLine),
             diagnostics: ["t.plist:5: Exec= program 'echo' is not an absolute path"]),
        Case(name: "User an array", input: infoPlist(handler("<key>User</key> <array/>"), documentTypesLine),
             diagnostics: ["t.plist:4: InboxdHandler.User: must be a string, a number or a boolean, not an array"]),
        Case(name: "bad TimeoutSec", input: infoPlist(handler("<key>TimeoutSec</key> <string>soon</string>"),
                                                      documentTypesLine),
             diagnostics: ["t.plist:4: invalid TimeoutSec=: invalid time span 'soon'"]),
        Case(name: "ReadWritePaths with a space",
             input: infoPlist(handler("<key>ReadWritePaths</key> <array><string>/a b</string></array>"), documentTypesLine),
             diagnostics: ["t.plist:4: InboxdHandler.ReadWritePaths[0]: ReadWritePaths cannot hold an empty path or a space"]),
        Case(name: "ReadWritePaths relative",
             input: infoPlist(handler("<key>ReadWritePaths</key> <array><string>relative</string></array>"),
                              documentTypesLine),
             diagnostics: ["t.plist:4: ReadWritePaths= needs absolute paths, got 'relative'"]),
        Case(name: "bad environment assignment",
             input: infoPlist(handler("<key>Environment</key> <array><string>1A=x</string></array>"), documentTypesLine),
             diagnostics: ["t.plist:4: warning: invalid environment assignment '1A=x', ignored"]),
        Case(name: "unknown InboxdHandler key", input: infoPlist(handler("<key>Colour</key> <string>red</string>"),
                                                                documentTypesLine),
             diagnostics: ["t.plist:4: warning: InboxdHandler.Colour: unknown key 'Colour' in InboxdHandler, ignored"]),
        Case(name: "Identifier in InboxdHandler",
             input: infoPlist(handler("<key>Identifier</key> <string>com.example.x</string>"), documentTypesLine),
             diagnostics: []),
        Case(name: "misspelt InboxdHandler key",
             input: infoPlist(handler("<key>TimeOutSec</key> <integer>3</integer>"), documentTypesLine),
             diagnostics: ["t.plist:4: warning: InboxdHandler.TimeOutSec: unknown key 'TimeOutSec' in InboxdHandler, ignored; "
                           + "did you mean 'TimeoutSec'?"]),
        Case(name: "bad InboxdHandler Identifier",
             input: infoPlist(handler("<key>Identifier</key> <string>a b</string>"), documentTypesLine),
             diagnostics: ["t.plist:4: invalid InboxdHandler.Identifier 'a b': use letters, digits, '.' and '-'"]),
        Case(name: "X- key in InboxdHandler", input: infoPlist(handler("<key>X-Note</key> <string>mine</string>"),
                                                              documentTypesLine),
             diagnostics: []),
        Case(name: "unknown Inboxd key", input: infoPlist(execLine, documentTypesLine, "", "<key>InboxdExtras</key> <true/>"),
             diagnostics: ["t.plist:7: warning: InboxdExtras: unknown key 'InboxdExtras', ignored"]),
        Case(name: "Apple keys are ignored",
             input: infoPlist(execLine, documentTypesLine, "<key>CFBundleVersion</key> <string>2.1</string>",
                              "<key>CFBundlePackageType</key> <string>APPL</string>",
                              "<key>LSMinimumSystemVersion</key> <integer>14</integer>"),
             diagnostics: []),
        Case(name: "no document types", input: infoPlist(execLine),
             diagnostics: ["t.plist:3: warning: no CFBundleDocumentTypes: this handler opens no files"]),
        Case(name: "empty document types", input: infoPlist(execLine, "<key>CFBundleDocumentTypes</key> <array/>"),
             diagnostics: ["t.plist:3: warning: no CFBundleDocumentTypes: this handler opens no files"]),
        Case(name: "document types a dict", input: infoPlist(execLine, "<key>CFBundleDocumentTypes</key> <dict/>"),
             diagnostics: ["t.plist:5: warning: CFBundleDocumentTypes: must be an array of dicts, not a dict: ignored"]),
        Case(name: "document type a string",
             input: infoPlist(execLine, "<key>CFBundleDocumentTypes</key> <array>", "<string>x</string></array>"),
             diagnostics: ["t.plist:5: CFBundleDocumentTypes: no usable document type: each of the 1 entries was skipped",
                           "t.plist:6: warning: CFBundleDocumentTypes[0]: must be a dict, not a string: entry skipped"]),
        Case(name: "document type without types",
             input: infoPlist(execLine, documentType("<key>CFBundleTypeName</key> <string>x</string>")),
             diagnostics: ["t.plist:5: warning: CFBundleDocumentTypes[0]: no LSItemContentTypes, CFBundleTypeExtensions or "
                           + "CFBundleTypeMIMETypes: entry skipped",
                           "t.plist:5: CFBundleDocumentTypes: no usable document type: each of the 1 entries was skipped"]),
        Case(name: "content types a string",
             input: infoPlist(execLine, documentType("<key>LSItemContentTypes</key> <string>public.png</string>")),
             diagnostics: ["t.plist:5: warning: CFBundleDocumentTypes[0].LSItemContentTypes: a string where an array belongs: "
                           + "taken as a one-item array"]),
        Case(name: "content type with a space",
             input: infoPlist(execLine, documentType("<key>LSItemContentTypes</key> <array><string>a b</string></array>")),
             diagnostics: ["t.plist:5: warning: CFBundleDocumentTypes[0].LSItemContentTypes[0]: 'a b' is not a valid type identifier: "
                           + "item skipped",
                           "t.plist:5: warning: CFBundleDocumentTypes[0]: no usable item in LSItemContentTypes: entry skipped",
                           "t.plist:5: CFBundleDocumentTypes: no usable document type: each of the 1 entries was skipped"]),
        Case(name: "bad rank",
             input: infoPlist(execLine, documentType("""
                 <key>LSItemContentTypes</key> <array><string>public.png</string></array>\
                 <key>LSHandlerRank</key> <string>Boss</string>
                 """)),
             diagnostics: ["t.plist:5: warning: CFBundleDocumentTypes[0].LSHandlerRank: invalid rank 'Boss' (expected Owner, Default, "
                           + "Alternate or None): the rank is Default"]),
        Case(name: "bad role",
             input: infoPlist(execLine, documentType("""
                 <key>LSItemContentTypes</key> <array><string>public.png</string></array>\
                 <key>CFBundleTypeRole</key> <string>Printer</string>
                 """)),
             diagnostics: ["t.plist:5: warning: CFBundleDocumentTypes[0].CFBundleTypeRole: invalid role 'Printer' (expected Editor, "
                           + "Viewer, Shell or None): the role is Viewer"]),
        Case(name: "role an integer",
             input: infoPlist(execLine, documentType("""
                 <key>LSItemContentTypes</key> <array><string>public.png</string></array>\
                 <key>CFBundleTypeRole</key> <integer>1</integer>
                 """)),
             diagnostics: ["t.plist:5: warning: CFBundleDocumentTypes[0].CFBundleTypeRole: must be a string, not an integer: "
                           + "the role is Viewer"]),
        Case(name: "bad CFBundleIdentifier",
             input: infoPlist(execLine, documentTypesLine, "<key>CFBundleIdentifier</key> <string>not valid!</string>"),
             diagnostics: ["t.plist:6: warning: CFBundleIdentifier: invalid identifier 'not valid!' (use letters, digits, '.' and "
                           + "'-'): the identifier comes from the file name ('t')"]),
        Case(name: "CFBundleIdentifier an integer",
             input: infoPlist(execLine, documentTypesLine, "<key>CFBundleIdentifier</key> <integer>7</integer>"),
             diagnostics: ["t.plist:6: warning: CFBundleIdentifier: must be a string, not an integer: the identifier comes from the "
                           + "file name ('t')"]),
        Case(name: "stem is no identifier", input: infoPlist(execLine, documentTypesLine), path: "/x/my app.plist",
             diagnostics: ["/x/my app.plist:3: file name 'my app' is not a valid identifier; set CFBundleIdentifier"]),
        Case(name: "type without identifier",
             input: infoPlist(execLine, documentTypesLine, exported("<key>UTTypeDescription</key> <string>x</string>")),
             diagnostics: ["t.plist:6: warning: UTExportedTypeDeclarations[0]: no UTTypeIdentifier: declaration skipped"]),
        Case(name: "tag specification an array",
             input: infoPlist(execLine, documentTypesLine, exported("""
                 <key>UTTypeIdentifier</key> <string>com.example.t</string><key>UTTypeTagSpecification</key> <array/>
                 """)),
             diagnostics: ["t.plist:6: warning: UTExportedTypeDeclarations[0].UTTypeTagSpecification: must be a dict, not an array: "
                           + "ignored"]),
        Case(name: "conformance an integer",
             input: infoPlist(execLine, documentTypesLine, exported("""
                 <key>UTTypeIdentifier</key> <string>com.example.t</string><key>UTTypeConformsTo</key> <integer>1</integer>
                 """)),
             diagnostics: ["t.plist:6: warning: UTExportedTypeDeclarations[0].UTTypeConformsTo: must be an array of strings, not an "
                           + "integer: ignored"]),
        Case(name: "bad extension",
             input: infoPlist(execLine, documentTypesLine, exported("""
                 <key>UTTypeIdentifier</key> <string>com.example.t</string><key>UTTypeTagSpecification</key> \
                 <dict><key>public.filename-extension</key> <string>a/b</string></dict>
                 """)),
             diagnostics: ["t.plist:6: warning: UTExportedTypeDeclarations[0].UTTypeTagSpecification.public.filename-extension: "
                           + "'a/b' is not a valid extension: item skipped"]),
        Case(name: "too large", input: infoPlist(execLine, documentTypesLine) + [UInt8](repeating: 0x20, count: 1 << 20),
             diagnostics: ["t.plist:1: file is 1048876 bytes, larger than the limit of 1048576"]),
    ]

    @Test(arguments: errorCases)
    func diagnostics(_ example: Case) {
        let file = RegistrationParser.parse(example.input, path: example.path)
        #expect(file.diagnostics.map(\.description) == example.diagnostics)
        #expect((file.registration == nil) == file.diagnostics.containsError)
    }

    @Test func binaryDiagnosticsNameKeyPaths() {
        let file = RegistrationParser.parse(PropertyListFixtures.broken, path: "b.plist")
        #expect(file.registration == nil)
        // Apple's keys: warnings, the entry kept or skipped; InboxdHandler's: errors, as in a .handler file.
        #expect(file.diagnostics.map(\.description) == [
            "b.plist: CFBundleDocumentTypes[0].CFBundleTypeRole: warning: must be a string, not an integer: the role is Viewer",
            "b.plist: CFBundleDocumentTypes[0].LSHandlerRank: warning: invalid rank 'Boss' (expected Owner, Default, "
                + "Alternate or None): the rank is Default",
            "b.plist: CFBundleName: warning: 'nul\\u{0}inside' holds a NUL character: the name falls back to "
                + "CFBundleDisplayName, else the identifier",
            "b.plist: InboxdColour: warning: unknown key 'InboxdColour', ignored",
            "b.plist: InboxdHandler.Bogus: warning: unknown key 'Bogus' in InboxdHandler, ignored",
            "b.plist: InboxdHandler.TimeoutSec: must be a string, a number or a boolean, not an array",
            "b.plist: UTExportedTypeDeclarations[0]: warning: no UTTypeIdentifier: declaration skipped",
        ])
        #expect(file.diagnostics.allSatisfy { $0.location.line == 0 && $0.location.position != nil })
    }

    @Test func binarySyntaxErrorsNameTheOffset() {
        let file = RegistrationParser.parse(Array(PropertyListFixtures.profileEditor.dropLast()), path: "b.plist")
        #expect(file.registration == nil)
        #expect(file.diagnostics.count == 1)
        #expect(file.diagnostics.first?.location.position?.hasPrefix("offset ") == true)
        let missing = InfoPlist.read(root([("InboxdHandler", dict([]))], at: .offset(8)), path: "b.plist")
        #expect(missing.diagnostics.map(\.description) == [
            "b.plist: warning: no CFBundleDocumentTypes: this handler opens no files",
            "b.plist: no command: missing InboxdHandler → Exec",
        ])
    }
}
