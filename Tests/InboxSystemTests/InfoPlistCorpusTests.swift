import Foundation
import InboxCore
import InboxSystem
import Testing

/// Tests/InfoPlistCorpus: twenty Info.plists in the shape apps publish them (document editors, media players,
/// e-book readers, emulators, terminals, password managers), each with only an InboxdHandler command added, and
/// binary twins of four of them. They hold what real files hold: Xcode build settings, legacy document-type keys,
/// empty and padded items, an invisible character, a UTI among MIME types, a type conforming to itself, typos,
/// repeated keys, a UTF-16 file and a preprocessor line. Loaded as the agent loads handlers.d.
@Suite struct InfoPlistCorpusTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("InfoPlistCorpus")
    static var apps: String { directory.appendingPathComponent("apps").path }

    static func load() -> LoadedRegistrations {
        let mime = MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories()).database
        return RegistrationLoader.load(directories: [apps], mime: mime)
    }

    /// What the corpus declares, counted in the files themselves (every entry has a name or a description).
    static func declared() throws -> (files: Int, documentTypes: Int, declarations: Int) {
        let names = try FileManager.default.contentsOfDirectory(atPath: apps).filter { $0.hasSuffix(".plist") }
        var documentTypes = 0, declarations = 0
        for name in names {
            let data = try Data(contentsOf: URL(fileURLWithPath: apps + "/" + name))
            let utf16 = data.starts(with: [0xFF, 0xFE])
            let text = utf16 ? String(decoding: data.dropFirst(2).withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) },
                                      as: UTF16.self) : String(decoding: data, as: UTF8.self)
            documentTypes += text.components(separatedBy: "<key>CFBundleTypeName</key>").count - 1
            declarations += text.components(separatedBy: "<key>UTTypeDescription</key>").count - 1
        }
        return (names.count, documentTypes, declarations)
    }

    @Test func theCorpusLoadsAsLaunchServicesWouldReadIt() throws {
        let loaded = Self.load()
        let declared = try Self.declared()
        let documentTypes = loaded.registrations.map(\.documentTypes.count).reduce(0, +)
        let declarations = loaded.registrations.map { $0.exportedTypes.count + $0.importedTypes.count }.reduce(0, +)
        print("Info.plist corpus: \(loaded.registrations.count) of \(declared.files) registrations load; "
              + "\(documentTypes) of \(declared.documentTypes) document types and \(declarations) of "
              + "\(declared.declarations) type declarations found")
        // Only the source plist with a preprocessor line is broken; what is skipped inside the others is one
        // entry each (a document type with only Mac type codes, one whose key is misspelt, one that is no dict;
        // a declaration whose identifier key is misspelt).
        #expect(loaded.registrations.count == declared.files - 1)
        #expect(loaded.rejected.map(lastPathComponent) == ["dosbox-like.plist"])
        #expect(documentTypes == declared.documentTypes - 3)
        #expect(declarations == declared.declarations - 1)
        #expect(loaded.diagnostics.filter(\.isError).map(\.description) == [
            Self.apps + "/dosbox-like.plist:22: C preprocessor line '#ifdef C_DEBUG': this is a source Info.plist that "
                + "the build preprocesses (INFOPLIST_PREPROCESS); register the Info.plist the build writes",
        ])
    }

    /// Every warning, word for word (Tests/InfoPlistCorpus/expected-warnings.txt, paths relative to apps/).
    @Test func theWarningsAreExact() throws {
        let expected = try String(contentsOf: Self.directory.appendingPathComponent("expected-warnings.txt"), encoding: .utf8)
        let warnings = Self.load().diagnostics.filter { $0.severity == .warning }
            .map { $0.description.replacingOccurrences(of: Self.apps + "/", with: "") }
        #expect(warnings == expected.split(separator: "\n").map(String.init))
    }

    @Test func whatStillWorks() throws {
        let loaded = Self.load()
        func registration(_ identifier: String) throws -> HandlerRegistration {
            try #require(loaded.registration(identifier), "\(identifier) did not load")
        }
        // Build settings: expanded from InboxdHandler.BuildSettings, with modifiers; else the file name.
        #expect(try registration("org.marginalia.editor").name == "Marginalia")
        #expect(try registration("org.leafreader.Leaf-Reader").name == "Leaf Reader")
        #expect(try registration("com.inkwell.notes").name == "Inkwell")
        #expect(try registration("quill-text").name == "quill-text")
        #expect(loaded.registrations.allSatisfy { !$0.name.contains("$(") && !$0.name.contains("${") })
        #expect(loaded.database.declares("org.marginalia.editor.notebook"))
        // Legacy keys: extensions through the type database, a dynamic type for one nobody knows.
        let arcade = try registration("org.retroarcade.RetroArcade").documentTypes
        #expect(arcade.last?.contentTypes == ["public.zip-archive", "org.7-zip.7-zip-archive"])
        #expect(try registration("net.wavecut.Wavecut").documentTypes.last?.contentTypes == ["dyn.ext.wcproj"])
        // Wavecut's project is a package (LSTypeIsPackage): its type names directories, never a file.
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "take.wcproj") == "dyn.ext.wcproj")
        #expect(loaded.database.nameType(of: "take.wcproj") == nil)
        // Inkwell's note declares itself a package and its document type says LSTypeIsPackage: nothing is added.
        #expect(loaded.database.declaration(for: "com.inkwell.notes.note")?.conformsTo
                == ["com.apple.package", "public.composite-content"])
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "Groceries.inknote") == "com.inkwell.notes.note")
        #expect(try registration("org.tableau.office").documentTypes.last?.contentTypes == ["public.data"])
        // With LSItemContentTypes the legacy keys are not used.
        #expect(try registration("quill-text").documentTypes.first?.contentTypes == ["public.plain-text"])
        // Repairs: trimmed items, a dropped self-edge, the last of repeated keys.
        #expect(try registration("org.vektor.Vektor").documentTypes.first?.contentTypes
                == ["public.svg-image", "org.vektor.drawing"])
        #expect(loaded.database.declaration(for: "org.vektor.drawing")?.conformsTo == ["public.xml", "public.image"])
        #expect(try registration("org.coneplayer.Cone").name == "Cone Media Player")
        #expect(loaded.registration("com.keyhaven.mac") == nil)
        // Icons, packages and reference URLs are kept for inboxctl.
        #expect(try registration("org.tableau.office").documentTypes.first?.iconFiles == ["writer.icns"])
        #expect(try registration("net.wavecut.Wavecut").documentTypes.last?.isPackage == true)
        #expect(try registration("org.vaultkeep.Vaultkeep").typeDetails["org.vaultkeep.kdbx"]
                == TypeDetails(iconFiles: ["kdbx.icns"], referenceURL: "https://keepass.info/help/kb/kdbx_4.html"))
        // Claims on identifiers nobody declares: a notice, and the identifier is known.
        let notices = loaded.diagnostics.filter { $0.severity == .notice }.map(\.message)
        for claim in ["com.keyhaven.1pux", "io.luma.stream-bundle", "org.luma.ass"] {
            #expect(notices.contains { $0.hasPrefix("claims '\(claim)', which no type declares") })
            #expect(loaded.database.knownIdentifier(claim) == claim)
        }
        // UTF-16 with a byte-order mark reads like UTF-8.
        #expect(try registration("fr.folio.reader").name == "Folio — lecteur")
    }

    @Test(arguments: ["marginalia", "panel-comics", "retroarcade", "vaultkeep"])
    func binaryTwinsMeanTheSame(_ name: String) throws {
        func parse(_ path: String) throws -> RegistrationFile {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            return RegistrationParser.parse(bytes, path: path)
        }
        let xml = try parse(Self.apps + "/\(name).plist")
        let binary = try parse(Self.directory.appendingPathComponent("binary/\(name).plist").path)
        var a = try #require(xml.registration), b = try #require(binary.registration)
        for index in a.documentTypes.indices { a.documentTypes[index].location = b.documentTypes[index].location }
        for index in a.exportedTypes.indices { a.exportedTypes[index].origin = b.exportedTypes[index].origin }
        for index in a.importedTypes.indices { a.importedTypes[index].origin = b.importedTypes[index].origin }
        a.path = b.path
        #expect(a == b)
        // The same messages, at a line in XML and at the key path in binary.
        #expect(xml.diagnostics.map(\.message).count == binary.diagnostics.map(\.message).count)
    }
}
