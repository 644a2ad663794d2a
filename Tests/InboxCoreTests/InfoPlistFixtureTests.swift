import Foundation
import Testing
@testable import InboxCore

/// Tests/InfoPlistCorpus/fixtures: one small Info.plist per thing real files hold, XML and (where plistlib can
/// write it) binary, with every diagnostic word for word and what still works.
@Suite struct InfoPlistFixtureTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("InfoPlistCorpus/fixtures")

    static func parse(_ name: String, binary: Bool = false) throws -> RegistrationFile {
        let url = directory.appendingPathComponent(binary ? "binary/" + name : name)
        return RegistrationParser.parse(try [UInt8](Data(contentsOf: url)), path: name)
    }

    /// The diagnostics of the XML form; the binary form says the same, at the key path (in plistlib's key order).
    static func check(_ name: String, _ expected: [String], binary: [String]? = nil) throws -> RegistrationFile {
        let file = try parse(name)
        #expect(file.diagnostics.map(\.description) == expected)
        if let binary {
            let twin = try parse(name, binary: true)
            #expect(twin.diagnostics.map(\.description) == binary)
            #expect((twin.registration == nil) == (file.registration == nil))
        }
        return file
    }

    @Test func buildSettingsExpandFromInboxdHandler() throws {
        let file = try Self.check("build-settings.plist", [
            "build-settings.plist:19: warning: CFBundleDocumentTypes[0].LSItemContentTypes[1]: '$(TEAM_PREFIX).shared' "
                + "uses the Xcode build setting TEAM_PREFIX, which InboxdHandler → BuildSettings does not give: item skipped",
        ], binary: [
            "build-settings.plist: CFBundleDocumentTypes[0].LSItemContentTypes[1]: warning: '$(TEAM_PREFIX).shared' "
                + "uses the Xcode build setting TEAM_PREFIX, which InboxdHandler → BuildSettings does not give: item skipped",
        ])
        let registration = try #require(file.registration)
        #expect(registration.identifier == "org.example.Fix-Ture")
        #expect(registration.name == "Fix Ture")
        #expect(registration.documentTypes.map(\.name) == ["Fix Ture Document"])
        #expect(registration.documentTypes.map(\.contentTypes) == [["org.example.Fix-Ture.doc"]])
        #expect(registration.exportedTypes.map(\.identifier) == ["org.example.Fix-Ture.doc"])
    }

    @Test func unexpandedSettingsFallBackToTheFileName() throws {
        let file = try Self.check("unexpanded.plist", [
            "unexpanded.plist:6: warning: CFBundleIdentifier: '$(PRODUCT_BUNDLE_IDENTIFIER)' is the Xcode build setting "
                + "PRODUCT_BUNDLE_IDENTIFIER, which InboxdHandler → BuildSettings does not give: the identifier comes from "
                + "the file name ('unexpanded')",
            "unexpanded.plist:8: warning: CFBundleName: '$(PRODUCT_NAME)' is the Xcode build setting PRODUCT_NAME, which "
                + "InboxdHandler → BuildSettings does not give: the name falls back to CFBundleDisplayName, else the identifier",
        ], binary: [
            "unexpanded.plist: CFBundleIdentifier: warning: '$(PRODUCT_BUNDLE_IDENTIFIER)' is the Xcode build setting "
                + "PRODUCT_BUNDLE_IDENTIFIER, which InboxdHandler → BuildSettings does not give: the identifier comes from "
                + "the file name ('unexpanded')",
            "unexpanded.plist: CFBundleName: warning: '$(PRODUCT_NAME)' is the Xcode build setting PRODUCT_NAME, which "
                + "InboxdHandler → BuildSettings does not give: the name falls back to CFBundleDisplayName, else the identifier",
        ])
        #expect(file.registration?.identifier == "unexpanded")
        #expect(file.registration?.name == "unexpanded")
    }

    @Test func legacyKeysCountOnlyWithoutItemContentTypes() throws {
        let file = try Self.check("legacy-keys.plist", [
            "legacy-keys.plist:46: warning: CFBundleDocumentTypes[3]: only CFBundleTypeOSTypes, Mac type codes that files "
                + "here do not carry: entry skipped",
        ], binary: [
            "legacy-keys.plist: CFBundleDocumentTypes[3]: warning: only CFBundleTypeOSTypes, Mac type codes that files "
                + "here do not carry: entry skipped",
        ])
        var registrations = [try #require(file.registration)]
        #expect(registrations[0].documentTypes.map(\.contentTypes) == [["image/png"], ["public.plain-text"], ["public.data"]])
        #expect(registrations[0].documentTypes.map(\.extensions) == [["png", "zzfixture"], [], []])
        let resolved = ClaimResolver.resolve(&registrations, database: .builtin)
        #expect(resolved.diagnostics == [])
        #expect(registrations[0].documentTypes[0].contentTypes == ["image/png", "public.png", "dyn.ext.zzfixture"])
        #expect(resolved.declarations.map(\.identifier) == ["dyn.ext.zzfixture"])
        #expect(resolved.declarations.first?.extensions == ["zzfixture"])
    }

    @Test func badEntriesAreSkippedOrRepaired() throws {
        let file = try Self.check("bad-entries.plist", [
            "bad-entries.plist:6: warning: CFBundleIdentifier: 'org.example.bad-entries ' has blanks or invisible "
                + "characters at its ends: trimmed to 'org.example.bad-entries'",
            "bad-entries.plist:14: warning: CFBundleDocumentTypes[0].LSItemContentTypes[0]: empty item: skipped",
            "bad-entries.plist:15: warning: CFBundleDocumentTypes[0].LSItemContentTypes[1]: 'org.example.drawing\\u{200B}' "
                + "has blanks or invisible characters at its ends: trimmed to 'org.example.drawing'",
            "bad-entries.plist:16: warning: CFBundleDocumentTypes[0].LSItemContentTypes[2]: 'org.example.dra wing' is not "
                + "a valid type identifier: item skipped",
            "bad-entries.plist:20: warning: CFBundleDocumentTypes[0].LSHandlerRank: invalid rank 'Boss' (expected Owner, "
                + "Default, Alternate or None): the rank is Default",
            "bad-entries.plist:23: warning: CFBundleDocumentTypes[0].CFBundleTypeRoel: unknown key 'CFBundleTypeRoel', "
                + "ignored; did you mean 'CFBundleTypeRole'?",
            "bad-entries.plist:31: warning: CFBundleDocumentTypes[1].CFBundleTypeMIMETypes[0]: 'com.adobe.postscript' is a "
                + "type identifier, not a MIME type: item skipped",
            "bad-entries.plist:35: warning: CFBundleDocumentTypes[2]: must be a dict, not a string: entry skipped",
            "bad-entries.plist:37: warning: CFBundleDocumentType: unknown key 'CFBundleDocumentType', ignored; did you "
                + "mean 'CFBundleDocumentTypes'?",
            "bad-entries.plist:51: warning: UTExportedTypeDeclarations[0].UTTypeConformsTo[0]: 'org.example.drawing' is "
                + "the type itself: dropped",
            "bad-entries.plist:62: warning: UTExportedTypeDeclarations[0].UTTypeTagSpecification.public.mime-typ: unknown "
                + "key 'public.mime-typ', ignored; did you mean 'public.mime-type'?",
        ])
        let twin = try Self.parse("bad-entries.plist", binary: true)
        #expect(twin.diagnostics.count == file.diagnostics.count)
        #expect(twin.diagnostics.allSatisfy { $0.location.position != nil && !$0.isError })
        let registration = try #require(file.registration)
        #expect(registration.identifier == "org.example.bad-entries")
        #expect(registration.documentTypes.map(\.contentTypes) == [["org.example.drawing", "public.svg-image"],
                                                                    ["application/postscript"]])
        #expect(registration.documentTypes.first?.rank == .default)
        #expect(registration.exportedTypes.first?.conformsTo == ["public.image"])
        #expect(registration.exportedTypes.first?.extensions == ["drawing"])
        #expect(registration.exportedTypes.first?.mimeTypes == [])
    }

    @Test func repeatedKeysWarnAndTheLastWins() throws {
        let file = try Self.check("duplicate-keys.plist", [
            "duplicate-keys.plist:16: warning: duplicate key 'LSHandlerRank' (first on line 10): the last one is used",
            "duplicate-keys.plist:25: warning: duplicate key 'CFBundleIdentifier' (first on line 5): the last one is used",
        ])
        #expect(file.registration?.identifier == "org.example.last")
        #expect(file.registration?.documentTypes.first?.rank == .alternate)
    }

    @Test func utf16WithAByteOrderMarkIsRead() throws {
        let little = try Self.check("utf16-le.plist", [])
        #expect(little.registration?.identifier == "org.example.utf16")
        #expect(little.registration?.name == "Écrit en UTF-16")
        let big = try Self.check("utf16-be.plist", [])
        #expect(big.registration?.identifier == "org.example.utf16-be")
        #expect(big.registration?.documentTypes.first?.contentTypes == ["public.png"])
    }

    @Test func aPreprocessorLineIsNamed() throws {
        let file = try Self.check("preprocessor.plist", [
            "preprocessor.plist:7: C preprocessor line '#include \"Version.h\"': this is a source Info.plist that the "
                + "build preprocesses (INFOPLIST_PREPROCESS); register the Info.plist the build writes",
        ])
        #expect(file.registration == nil)
    }

    @Test func iconsPackagesAndReferenceURLsAreKept() throws {
        let file = try Self.check("shown-keys.plist", [], binary: [])
        let registration = try #require(file.registration)
        #expect(registration.documentTypes.first?.iconFiles == ["album-32.png", "album.icns"])
        #expect(registration.documentTypes.first?.isPackage == true)
        #expect(registration.typeDetails["org.example.album"]
                == TypeDetails(iconFiles: ["album.icns", "album-64.png"], referenceURL: "https://example.org/album-format"))
    }
}

/// The pieces: build-setting expansion and the escaping of messages.
@Suite struct InfoPlistPiecesTests {
    static let settings = BuildSettings(values: ["NAME": "Leaf Reader", "ID": "org.example.$(NAME:rfc1034identifier)",
                                                 "DIGITS": "9 lives", "LOOP": "$(LOOP)"])

    @Test(arguments: [
        ("$(NAME)", BuildSettings.Expansion.text("Leaf Reader")),
        ("${NAME}", .text("Leaf Reader")),
        ("x.$(NAME:rfc1034identifier)", .text("x.Leaf-Reader")),
        ("$(DIGITS:c99extidentifier)", .text("_9_lives")),
        ("$(NAME:lower)-$(NAME:upper)", .text("leaf reader-LEAF READER")),
        ("$(ID)", .text("org.example.Leaf-Reader")),
        ("no settings, $ alone", .text("no settings, $ alone")),
        ("$(MISSING).doc", .unresolved(reference: "$(MISSING)", setting: "MISSING")),
        ("$(NAME:reverse)", .unresolved(reference: "$(NAME:reverse)", setting: "NAME:reverse")),
        ("$(NAME", .unresolved(reference: "$(NAME", setting: "NAME")),
        ("$(LOOP)", .unresolved(reference: "$(LOOP)", setting: "LOOP")),
        ("$(not a name)", .unresolved(reference: "$(not a name)", setting: "$(not a name)")),
    ])
    func expansion(_ text: String, _ expected: BuildSettings.Expansion) {
        #expect(Self.settings.expand(text) == expected)
    }

    @Test(arguments: [
        ("plain", "plain"), ("tab\there", "tab\\there"), ("zero\u{200B}width", "zero\\u{200B}width"),
        ("no\u{00A0}break", "no\\u{A0}break"), ("bell\u{7}", "bell\\u{7}"), ("é ☃", "é ☃"),
    ])
    func visible(_ text: String, _ expected: String) {
        #expect(text.visible == expected)
    }

    @Test func binaryRepeatedKeysWarnAndTheLastWins() throws {
        // {"a": true, "a": false}: plistlib cannot write it, CoreFoundation reads it.
        var warnings: [PropertyListError] = []
        let root = try PropertyList.parse(bplist([[0xD2, 0x01, 0x01, 0x02, 0x03], [0x51, 0x61], [0x09], [0x08]]),
                                          warnings: &warnings)
        #expect(warnings.map(\.description) == ["offset 13: duplicate key 'a': the last one is used"])
        #expect(stripped(root.value) == .dict([PropertyListEntry(key: "a", at: .offset(0), value: node(.bool(false)))]))
    }
}
