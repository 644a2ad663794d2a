import Testing
@testable import InboxCore

/// Info.plist registrations: the key mapping, diagnostics at file:line (XML) or at a key path (binary), and
/// equivalence with the same registration written as a `.handler` file.
@Suite("Info.plist registrations")
struct InfoPlistTests {
    /// The Info.plist of a profile editor; PropertyListFixtures.profileEditor is the same value, binary.
    static let xmlInfoPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>CFBundleIdentifier</key> <string>com.example.profile-editor</string>
            <key>CFBundleName</key> <string>Profile Editor</string>
            <key>CFBundleDisplayName</key> <string>Profiles</string>
            <key>CFBundleVersion</key> <string>1.0</string>
            <key>InboxdHandler</key>
            <dict>
                <key>Exec</key>
                <array>
                    <string>/usr/libexec/profile editor</string> <string>--open</string> <string>%f</string>
                    <string>it's</string>
                </array>
                <key>User</key> <string>profile-editor</string>
                <key>Group</key> <string>profile-editor</string>
                <key>TimeoutSec</key> <integer>30</integer>
                <key>MaxConcurrent</key> <integer>4</integer>
                <key>Environment</key> <array><string>MODE=strict</string><string>GREETING=hello world</string></array>
                <key>ReadWritePaths</key> <array><string>/var/lib/profiles</string><string>/srv/profiles</string></array>
                <key>RequireLandlock</key> <true/>
                <key>LimitNOFILE</key> <integer>1024</integer>
                <key>LimitAS</key> <string>1G</string>
            </dict>
            <key>CFBundleDocumentTypes</key>
            <array>
                <dict>
                    <key>CFBundleTypeName</key> <string>Custom Profile</string>
                    <key>CFBundleTypeIconFiles</key> <array><string>profile-44.png</string><string>profile-560.png</string></array>
                    <key>LSItemContentTypes</key> <array><string>com.example.customprofile</string></array>
                    <key>LSHandlerRank</key> <string>Owner</string>
                    <key>CFBundleTypeRole</key> <string>Editor</string>
                    <key>NSDocumentClass</key> <string>ProfileDocument</string>
                </dict>
                <dict>
                    <key>CFBundleTypeName</key> <string>Text</string>
                    <key>LSItemContentTypes</key> <array><string>public.plain-text</string><string>public.rtf</string></array>
                    <key>LSHandlerRank</key> <string>Alternate</string>
                    <key>CFBundleTypeRole</key> <string>Viewer</string>
                </dict>
            </array>
            <key>UTExportedTypeDeclarations</key>
            <array>
                <dict>
                    <key>UTTypeIdentifier</key> <string>com.example.customprofile</string>
                    <key>UTTypeDescription</key> <string>Custom Profile</string>
                    <key>UTTypeConformsTo</key> <array><string>public.data</string><string>public.content</string></array>
                    <key>UTTypeTagSpecification</key>
                    <dict>
                        <key>public.filename-extension</key> <array><string>customprofile</string></array>
                        <key>public.mime-type</key> <string>application/x-customprofile</string>
                    </dict>
                    <key>UTTypeIconFiles</key> <array><string>p.png</string></array>
                </dict>
            </array>
            <key>UTImportedTypeDeclarations</key>
            <array>
                <dict>
                    <key>UTTypeIdentifier</key> <string>org.example.legacy</string>
                    <key>UTTypeConformsTo</key> <string>public.data</string>
                    <key>UTTypeTagSpecification</key> <dict><key>public.filename-extension</key> <string>legacy</string></dict>
                </dict>
            </array>
        </dict>
        </plist>

        """

    /// The same registration in unit syntax.
    static let equivalentHandler = """
        [Handler]
        Identifier=com.example.profile-editor
        Name=Profile Editor
        Exec="/usr/libexec/profile editor" --open %f "it's"
        User=profile-editor
        Group=profile-editor
        TimeoutSec=30
        MaxConcurrent=4
        Environment=MODE=strict "GREETING=hello world"
        ReadWritePaths=/var/lib/profiles /srv/profiles
        RequireLandlock=yes
        LimitNOFILE=1024
        LimitAS=1G

        [DocumentType]
        Name=Custom Profile
        IconFiles=profile-44.png profile-560.png
        ContentTypes=com.example.customprofile
        Rank=Owner
        Role=Editor

        [DocumentType]
        Name=Text
        ContentTypes=public.plain-text public.rtf
        Rank=Alternate
        Role=Viewer

        [ExportedType]
        Identifier=com.example.customprofile
        Description=Custom Profile
        ConformsTo=public.data public.content
        Extensions=customprofile
        MIMETypes=application/x-customprofile

        [ImportedType]
        Identifier=org.example.legacy
        ConformsTo=public.data
        Extensions=legacy
        """

    static let directory = "/etc/inboxd/handlers.d/"

    static func handlerRegistration() throws -> HandlerRegistration {
        let file = RegistrationParser.parse(bytes(equivalentHandler), path: directory + "com.example.profile-editor.handler")
        #expect(file.diagnostics == [])
        return try #require(file.registration)
    }

    // MARK: Equivalence

    @Test func xmlInfoPlistEqualsTheHandlerFile() throws {
        let path = Self.directory + "com.example.profile-editor.plist"
        let file = RegistrationParser.parse(bytes(Self.xmlInfoPlist), path: path)
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(normalized(registration) == normalized(try Self.handlerRegistration()))
        #expect(registration.path == path)
        #expect(registration.exec.arguments == ["/usr/libexec/profile editor", "--open", "%f", "it's"])
        #expect(registration.environment == ["MODE": "strict", "GREETING": "hello world"])
        #expect(registration.limits.count == 2)
        // Sections are located at their dicts.
        #expect(registration.documentTypes.map(\.location) == [SourceLocation(file: path, line: 28),
                                                               SourceLocation(file: path, line: 36)])
        #expect(registration.exportedTypes.map(\.origin) == [.exported(SourceLocation(file: path, line: 45))])
        #expect(registration.importedTypes.map(\.origin) == [.imported(SourceLocation(file: path, line: 59))])
    }

    @Test func binaryInfoPlistEqualsTheHandlerFile() throws {
        let path = Self.directory + "com.example.profile-editor.plist"
        let file = RegistrationParser.parse(PropertyListFixtures.profileEditor, path: path)
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(normalized(registration) == normalized(try Self.handlerRegistration()))
        // No lines in a binary file: sections are located by key path.
        #expect(registration.documentTypes.map(\.location) == [
            SourceLocation(file: path, position: "CFBundleDocumentTypes[0]"),
            SourceLocation(file: path, position: "CFBundleDocumentTypes[1]"),
        ])
        #expect(registration.exportedTypes.map(\.origin)
                == [.exported(SourceLocation(file: path, position: "UTExportedTypeDeclarations[0]"))])
        #expect(registration.exportedTypes.first?.origin.location?.description
                == path + ": UTExportedTypeDeclarations[0]")
    }

    @Test func aBinaryPlistIsReadAsOneWhateverItsName() throws {
        let file = RegistrationParser.parse(PropertyListFixtures.profileEditor, path: "/x/odd-name.handler")
        #expect(file.registration?.identifier == "com.example.profile-editor")
    }

    @Test func theIdentifierDefaultsToTheStem() throws {
        let file = RegistrationParser.parse(infoPlist(Self.execLine, Self.documentTypesLine),
                                            path: "/x/com.example.stem.plist")
        #expect(file.diagnostics == [])
        #expect(file.registration?.identifier == "com.example.stem")
        #expect(file.registration?.name == "com.example.stem")
    }

    @Test func theDisplayNameIsTheFallbackName() throws {
        let both = RegistrationParser.parse(infoPlist(Self.execLine, Self.documentTypesLine,
                                                      "<key>CFBundleDisplayName</key> <string>Shown</string>",
                                                      "<key>CFBundleName</key> <string>Short</string>"), path: "a.plist")
        #expect(both.registration?.name == "Short")
        let display = RegistrationParser.parse(infoPlist(Self.execLine, Self.documentTypesLine,
                                                         "<key>CFBundleDisplayName</key> <string>Shown</string>"),
                                               path: "a.plist")
        #expect(display.registration?.name == "Shown")
    }

    // MARK: Values

    @Test func scalarsArePrintedAsUnitValues() throws {
        let file = InfoPlist.read(root([
            ("CFBundleIdentifier", .string("com.example.scalars")),
            ("InboxdHandler", dict([("Exec", .string("/bin/true %f")), ("TimeoutSec", .real(1.5)),
                                    ("MaxConcurrent", .integer(3)), ("RequireLandlock", .bool(false)),
                                    ("LimitNOFILE", .integer(4096))])),
            ("CFBundleDocumentTypes", .array([node(dict([("LSItemContentTypes", .array([node(.string("public.png"))]))]))])),
        ]), path: "s.plist")
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(registration.exec.arguments == ["/bin/true", "%f"])
        #expect(registration.timeout == .milliseconds(1500))
        #expect(registration.maxConcurrent == 3)
        #expect(registration.requiresLandlock == false)
        #expect(registration.limits == [HandlerLimit(key: .openFiles, soft: 4096, hard: 4096)])
    }

    static let awkwardWords = ["/usr/bin/edit", "it's", "say \"hi\"", "back\\slash", "", "tab\there", "%f", "100%%",
                               "$HOME", "semi;colon", "  ", "\u{2603}"]

    @Test func execAndEnvironmentArraysKeepEveryWord() throws {
        let environment = ["A=it's", "B=two words", "C=back\\slash", "D=", "E=\"quoted\""]
        let file = InfoPlist.read(root([
            ("InboxdHandler", dict([("Exec", .array(Self.awkwardWords.map { node(.string($0)) })),
                                    ("Environment", .array(environment.map { node(.string($0)) }))])),
            ("CFBundleDocumentTypes", .array([node(dict([("LSItemContentTypes", .array([node(.string("public.png"))]))]))])),
        ]), path: "/x/com.example.words.plist")
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(registration.exec.arguments == Self.awkwardWords)
        #expect(registration.environment == ["A": "it's", "B": "two words", "C": "back\\slash", "D": "", "E": "\"quoted\""])
    }

    @Test func mimeTypesJoinTheContentTypes() throws {
        var mapper = InfoPlistMapper(path: "m.plist")
        let sections = mapper.sections([
            entry("CFBundleDocumentTypes", .array([node(dict([
                ("LSItemContentTypes", .array([node(.string("public.png"))])),
                ("CFBundleTypeMIMETypes", .array([node(.string("image/x-icon")), node(.string("text/x-profile"))])),
                ("LSItemContentTypes", .array([])),
            ]))])),
        ], root: .line(1))
        #expect(mapper.sink.diagnostics == [])
        let documentType = try #require(sections.first { $0.name == "DocumentType" })
        #expect(documentType.entries.map(\.key) == ["ContentTypes", "ContentTypes"])
        #expect(documentType.entries.map(\.value) == ["public.png", "image/x-icon text/x-profile"])
        #expect(documentType.entries.map(\.label) == ["LSItemContentTypes", "CFBundleTypeMIMETypes"])
    }

    // MARK: Errors

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        var path = "t.plist"
        let diagnostics: [String]
        var testDescription: String { name }
    }

    /// A valid InboxdHandler and CFBundleDocumentTypes, for cases about other keys (lines 4 and 5 in `infoPlist`).
    static let execLine = "<key>InboxdHandler</key> <dict><key>Exec</key> <string>/bin/true</string></dict>"
    static let documentTypesLine = """
        <key>CFBundleDocumentTypes</key> <array><dict><key>LSItemContentTypes</key> \
        <array><string>public.png</string></array></dict></array>
        """

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
             diagnostics: ["t.plist:3: missing InboxdHandler → Exec"]),
        Case(name: "InboxdHandler without Exec",
             input: infoPlist("<key>InboxdHandler</key> <dict><key>User</key> <string>u</string></dict>", documentTypesLine),
             diagnostics: ["t.plist:3: missing InboxdHandler → Exec"]),
        Case(name: "InboxdHandler a string", input: infoPlist("<key>InboxdHandler</key> <string>/bin/true</string>",
                                                             documentTypesLine),
             diagnostics: ["t.plist:4: InboxdHandler must be a dict, not a string"]),
        Case(name: "Exec a dict", input: infoPlist("<key>InboxdHandler</key> <dict><key>Exec</key> <dict/></dict>",
                                                  documentTypesLine),
             diagnostics: ["t.plist:4: Exec must be a string, a number or a boolean, or an array of strings, not a dict"]),
        Case(name: "Exec with an integer word",
             input: infoPlist("<key>InboxdHandler</key> <dict><key>Exec</key>",
                              "<array><string>/bin/echo</string><integer>1</integer></array></dict>", documentTypesLine),
             diagnostics: ["t.plist:5: Exec must hold only strings, not an integer"]),
        Case(name: "Exec with a line break",
             input: infoPlist("<key>InboxdHandler</key> <dict><key>Exec</key>",
                              "<array><string>/bin/echo</string>", "<string>a&#10;b</string></array></dict>",
                              documentTypesLine),
             diagnostics: ["t.plist:6: Exec holds a line break, which a registration value cannot carry"]),
        Case(name: "Exec a relative program",
             input: infoPlist("<key>InboxdHandler</key> <dict><key>Exec</key>",
                              "<array><string>echo</string><string>%f</string></array></dict>", documentTypesLine),
             diagnostics: ["t.plist:5: Exec= program 'echo' is not an absolute path"]),
        Case(name: "User an array", input: infoPlist(handler("<key>User</key> <array/>"), documentTypesLine),
             diagnostics: ["t.plist:4: User must be a string, a number or a boolean, not an array"]),
        Case(name: "bad TimeoutSec", input: infoPlist(handler("<key>TimeoutSec</key> <string>soon</string>"),
                                                      documentTypesLine),
             diagnostics: ["t.plist:4: invalid TimeoutSec=: invalid time span 'soon'"]),
        Case(name: "ReadWritePaths with a space",
             input: infoPlist(handler("<key>ReadWritePaths</key> <array><string>/a b</string></array>"), documentTypesLine),
             diagnostics: ["t.plist:4: ReadWritePaths cannot hold an empty path or a space"]),
        Case(name: "ReadWritePaths relative",
             input: infoPlist(handler("<key>ReadWritePaths</key> <array><string>relative</string></array>"),
                              documentTypesLine),
             diagnostics: ["t.plist:4: ReadWritePaths= needs absolute paths, got 'relative'"]),
        Case(name: "bad environment assignment",
             input: infoPlist(handler("<key>Environment</key> <array><string>1A=x</string></array>"), documentTypesLine),
             diagnostics: ["t.plist:4: warning: invalid environment assignment '1A=x', ignored"]),
        Case(name: "unknown InboxdHandler key", input: infoPlist(handler("<key>Colour</key> <string>red</string>"),
                                                                documentTypesLine),
             diagnostics: ["t.plist:4: warning: unknown key 'Colour' in InboxdHandler, ignored"]),
        Case(name: "Identifier in InboxdHandler",
             input: infoPlist(handler("<key>Identifier</key> <string>com.example.x</string>"), documentTypesLine),
             diagnostics: ["t.plist:4: warning: unknown key 'Identifier' in InboxdHandler, ignored: use CFBundleIdentifier"]),
        Case(name: "X- key in InboxdHandler", input: infoPlist(handler("<key>X-Note</key> <string>mine</string>"),
                                                              documentTypesLine),
             diagnostics: []),
        Case(name: "unknown Inboxd key", input: infoPlist(execLine, documentTypesLine, "", "<key>InboxdExtras</key> <true/>"),
             diagnostics: ["t.plist:7: warning: unknown key 'InboxdExtras', ignored"]),
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
             diagnostics: ["t.plist:5: CFBundleDocumentTypes must be an array of dicts, not a dict"]),
        Case(name: "document type a string",
             input: infoPlist(execLine, "<key>CFBundleDocumentTypes</key> <array>", "<string>x</string></array>"),
             diagnostics: ["t.plist:6: CFBundleDocumentTypes[0] must be a dict, not a string"]),
        Case(name: "document type without types",
             input: infoPlist(execLine, documentType("<key>CFBundleTypeName</key> <string>x</string>")),
             diagnostics: ["t.plist:5: document type without LSItemContentTypes or CFBundleTypeMIMETypes"]),
        Case(name: "content types a string",
             input: infoPlist(execLine, documentType("<key>LSItemContentTypes</key> <string>public.png</string>")),
             diagnostics: ["t.plist:5: LSItemContentTypes must be an array of strings, not a string"]),
        Case(name: "content type with a space",
             input: infoPlist(execLine, documentType("<key>LSItemContentTypes</key> <array><string>a b</string></array>")),
             diagnostics: ["t.plist:5: LSItemContentTypes holds 'a b': a list item cannot be empty or hold blanks"]),
        Case(name: "bad rank",
             input: infoPlist(execLine, documentType("""
                 <key>LSItemContentTypes</key> <array><string>public.png</string></array>\
                 <key>LSHandlerRank</key> <string>Boss</string>
                 """)),
             diagnostics: ["t.plist:5: invalid LSHandlerRank 'Boss': expected Owner, Default, Alternate or None"]),
        Case(name: "bad role",
             input: infoPlist(execLine, documentType("""
                 <key>LSItemContentTypes</key> <array><string>public.png</string></array>\
                 <key>CFBundleTypeRole</key> <string>Printer</string>
                 """)),
             diagnostics: ["t.plist:5: invalid CFBundleTypeRole 'Printer': expected Editor, Viewer, Shell or None"]),
        Case(name: "role an integer",
             input: infoPlist(execLine, documentType("""
                 <key>LSItemContentTypes</key> <array><string>public.png</string></array>\
                 <key>CFBundleTypeRole</key> <integer>1</integer>
                 """)),
             diagnostics: ["t.plist:5: CFBundleTypeRole must be a string, not an integer"]),
        Case(name: "bad CFBundleIdentifier",
             input: infoPlist(execLine, documentTypesLine, "<key>CFBundleIdentifier</key> <string>not valid!</string>"),
             diagnostics: ["t.plist:6: invalid CFBundleIdentifier 'not valid!': use letters, digits, '.' and '-'"]),
        Case(name: "CFBundleIdentifier an integer",
             input: infoPlist(execLine, documentTypesLine, "<key>CFBundleIdentifier</key> <integer>7</integer>"),
             diagnostics: ["t.plist:6: CFBundleIdentifier must be a string, not an integer"]),
        Case(name: "stem is no identifier", input: infoPlist(execLine, documentTypesLine), path: "/x/my app.plist",
             diagnostics: ["/x/my app.plist:3: file name 'my app' is not a valid identifier; set CFBundleIdentifier"]),
        Case(name: "type without identifier",
             input: infoPlist(execLine, documentTypesLine, exported("<key>UTTypeDescription</key> <string>x</string>")),
             diagnostics: ["t.plist:6: type declaration without UTTypeIdentifier"]),
        Case(name: "tag specification an array",
             input: infoPlist(execLine, documentTypesLine, exported("""
                 <key>UTTypeIdentifier</key> <string>com.example.t</string><key>UTTypeTagSpecification</key> <array/>
                 """)),
             diagnostics: ["t.plist:6: UTTypeTagSpecification must be a dict, not an array"]),
        Case(name: "conformance an integer",
             input: infoPlist(execLine, documentTypesLine, exported("""
                 <key>UTTypeIdentifier</key> <string>com.example.t</string><key>UTTypeConformsTo</key> <integer>1</integer>
                 """)),
             diagnostics: ["t.plist:6: UTTypeConformsTo must be a string or an array of strings, not an integer"]),
        Case(name: "bad extension",
             input: infoPlist(execLine, documentTypesLine, exported("""
                 <key>UTTypeIdentifier</key> <string>com.example.t</string><key>UTTypeTagSpecification</key> \
                 <dict><key>public.filename-extension</key> <string>a/b</string></dict>
                 """)),
             diagnostics: ["t.plist:6: invalid extension 'a/b' in public.filename-extension"]),
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
        #expect(file.diagnostics.map(\.description) == [
            "b.plist: CFBundleDocumentTypes[0].CFBundleTypeRole: CFBundleTypeRole must be a string, not an integer",
            "b.plist: CFBundleName: CFBundleName holds a NUL character, which a registration value cannot carry",
            "b.plist: InboxdColour: warning: unknown key 'InboxdColour', ignored",
            "b.plist: InboxdHandler.Bogus: warning: unknown key 'Bogus' in InboxdHandler, ignored",
            "b.plist: InboxdHandler.TimeoutSec: TimeoutSec must be a string, a number or a boolean, not an array",
            "b.plist: UTExportedTypeDeclarations[0]: type declaration without UTTypeIdentifier",
            "b.plist: CFBundleDocumentTypes[0].LSHandlerRank: invalid LSHandlerRank 'Boss': expected Owner, Default, Alternate or None",
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
            "b.plist: missing InboxdHandler → Exec",
        ])
    }
}

// MARK: Helpers

/// An XML Info.plist: line 1 the declaration, 2 `<plist>`, 3 the top `<dict>`, the given lines from 4 on.
func infoPlist(_ body: String...) -> [UInt8] {
    Array((["<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<plist version=\"1.0\">", "<dict>"] + body
           + ["</dict>", "</plist>", ""]).joined(separator: "\n").utf8)
}

/// A registration without what may differ between formats: its path and its sections' locations.
func normalized(_ registration: HandlerRegistration) -> HandlerRegistration {
    let nowhere = SourceLocation(file: "", line: 0)
    var result = registration
    result.path = ""
    result.documentTypes = result.documentTypes.map { type in
        var type = type
        type.location = nowhere
        return type
    }
    result.exportedTypes = result.exportedTypes.map { type in
        var type = type
        type.origin = .exported(nowhere)
        return type
    }
    result.importedTypes = result.importedTypes.map { type in
        var type = type
        type.origin = .imported(nowhere)
        return type
    }
    return result
}

func entry(_ key: String, _ value: PropertyListValue, at location: PropertyListLocation = .line(1)) -> PropertyListEntry {
    PropertyListEntry(key: key, at: location, value: PropertyListNode(value, at: location))
}

func dict(_ pairs: [(String, PropertyListValue)], at location: PropertyListLocation = .line(1)) -> PropertyListValue {
    .dict(pairs.map { entry($0.0, $0.1, at: location) })
}

func root(_ pairs: [(String, PropertyListValue)], at location: PropertyListLocation = .line(1)) -> PropertyListNode {
    PropertyListNode(dict(pairs, at: location), at: location)
}
