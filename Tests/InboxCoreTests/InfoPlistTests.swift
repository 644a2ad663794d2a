import Testing
@testable import InboxCore

/// Info.plist registrations: the key mapping, and equivalence with the same registration written as a `.handler`
/// file.
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

    /// A valid InboxdHandler and CFBundleDocumentTypes, for cases about other keys (lines 4 and 5 in `infoPlist`).
    static let execLine = "<key>InboxdHandler</key> <dict><key>Exec</key> <string>/bin/true</string></dict>"
    static let documentTypesLine = """
        <key>CFBundleDocumentTypes</key> <array><dict><key>LSItemContentTypes</key> \
        <array><string>public.png</string></array></dict></array>
        """

    // MARK: Equivalence

    @Test func xmlInfoPlistEqualsTheHandlerFile() throws {
        let path = Self.directory + "com.example.profile-editor.plist"
        let file = RegistrationParser.parse(bytes(Self.xmlInfoPlist), path: path)
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(normalized(registration) == normalized(try Self.handlerRegistration()))
        #expect(registration.typeDetails == ["com.example.customprofile": TypeDetails(iconFiles: ["p.png"])])
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
                                    ("LimitNOFILE", .integer(4096)), ("OutputLimit", .integer(65536))])),
            ("CFBundleDocumentTypes", .array([node(dict([("LSItemContentTypes", .array([node(.string("public.png"))]))]))])),
        ]), path: "s.plist")
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(registration.exec.arguments == ["/bin/true", "%f"])
        #expect(registration.timeout == .milliseconds(1500))
        #expect(registration.maxConcurrent == 3)
        #expect(registration.requiresLandlock == false)
        #expect(registration.limits == [HandlerLimit(key: .openFiles, soft: 4096, hard: 4096)])
        #expect(registration.outputLimit == 65536)
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

    @Test func legacyKeysCountOnlyWithoutItemContentTypes() throws {
        let legacy: PropertyListValue = .array([node(.string("image/x-icon")), node(.string("text/x-profile"))])
        let extensions: PropertyListValue = .array([node(.string("ICO")), node(.string("*"))])
        let file = InfoPlist.read(root([
            ("InboxdHandler", dict([("Exec", .string("/bin/true %f"))])),
            ("CFBundleDocumentTypes", .array([
                node(dict([("LSItemContentTypes", .array([node(.string("public.png"))])),
                           ("CFBundleTypeMIMETypes", legacy), ("CFBundleTypeExtensions", extensions)])),
                node(dict([("CFBundleTypeMIMETypes", legacy), ("CFBundleTypeExtensions", extensions)])),
            ])),
        ]), path: "/x/com.example.legacy.plist")
        #expect(file.diagnostics == [])
        let types = try #require(file.registration?.documentTypes)
        #expect(types.map(\.contentTypes) == [["public.png"], ["image/x-icon", "text/x-profile", "public.data"]])
        // Extensions are turned into types when the database is complete (ClaimResolver).
        #expect(types.map(\.extensions) == [[], ["ico"]])
    }

}

/// A registration without what may differ between formats: its path and its sections' locations.
func normalized(_ registration: HandlerRegistration) -> HandlerRegistration {
    let nowhere = SourceLocation(file: "", line: 0)
    var result = registration
    result.path = ""
    result.typeDetails = [:]
    result.readWritePathLocations = result.readWritePathLocations.mapValues { _ in nowhere }
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
