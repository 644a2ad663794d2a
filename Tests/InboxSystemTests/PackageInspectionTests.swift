import Foundation
import Glibc
import InboxCore
import InboxSystem
import Testing

/// What the agent reads for package documents: the package limits its settings resolve (MaxPackageSize= defaulting
/// to MaxInboxBytes=), and a package's type from its checked manifest (`TypeInspector.inspectPackage`).
@Suite("Package settings and inspection")
struct PackageInspectionTests {
    static func settings(_ config: String) throws -> AgentSettings {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("inboxd-package-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("inboxd.conf")
        try config.write(to: file, atomically: true, encoding: .utf8)
        var overrides = SettingsOverrides()
        overrides.config = file.path
        overrides.handlers = [directory.appendingPathComponent("handlers.d").path]
        return try SettingsResolver.resolve(overrides, environment: ["HOME": directory.path], isRoot: true).settings.get()
    }

    @Test(arguments: [
        ("", PackageLimits(maxDepth: 32, maxEntries: 10_000, maxBytes: nil)),
        ("[Agent]\nMaxInboxBytes=2M\n", PackageLimits(maxBytes: 2 << 20)),
        ("[Agent]\nMaxInboxBytes=2M\nMaxPackageSize=512K\n", PackageLimits(maxBytes: 512 << 10)),
        ("[Agent]\nMaxInboxBytes=2M\nMaxPackageSize=infinity\n", PackageLimits(maxBytes: nil)),
        ("[Agent]\nMaxPackageDepth=4\nMaxPackageEntries=99\n", PackageLimits(maxDepth: 4, maxEntries: 99)),
    ] as [(String, PackageLimits)])
    func resolvedLimits(config: String, expected: PackageLimits) throws {
        #expect(try Self.settings(config).packageLimits == expected)
    }

    @Test func aBadLimitIsAnErrorAtItsLine() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("inboxd-package-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("inboxd.conf")
        try "[Agent]\nMaxPackageEntries=lots\n".write(to: file, atomically: true, encoding: .utf8)
        var overrides = SettingsOverrides()
        overrides.config = file.path
        let (settings, diagnostics) = SettingsResolver.resolve(overrides, environment: ["HOME": directory.path],
                                                               isRoot: true)
        #expect(throws: (any Error).self) { try settings.get() }
        #expect(diagnostics.map(\.description)
                == ["\(file.path):2: MaxPackageEntries= must be a whole number from 1 to 10000000, got 'lots'"])
    }

    /// The agent's own loader over a handlers.d: a `.handler` exporting a package type and an Info.plist whose
    /// document type says LSTypeIsPackage both make package types, and the file type it also claims is a warning.
    @Test func theLoaderMakesPackageTypes() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("inboxd-package-loader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "[Handler]\nExec=/bin/true %f\n[DocumentType]\nContentTypes=com.example.album\n[ExportedType]\n"
            .appending("Identifier=com.example.album\nConformsTo=com.apple.package\nExtensions=album\n")
            .write(to: directory.appendingPathComponent("album.handler"), atomically: true, encoding: .utf8)
        let plist = directory.appendingPathComponent("mixer.plist")
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
            <key>InboxdHandler</key> <dict><key>Exec</key> <string>/bin/true %f</string></dict>
            <key>CFBundleDocumentTypes</key> <array> <dict>
            <key>CFBundleTypeExtensions</key> <array><string>mixproj</string><string>txt</string></array>
            <key>LSTypeIsPackage</key> <true/>
            </dict> </array>
            </dict>
            </plist>

            """.write(to: plist, atomically: true, encoding: .utf8)
        let loaded = RegistrationLoader.load(directories: [directory.path])
        #expect(loaded.registrations.count == 2)
        #expect(loaded.diagnostics.map(\.description) == ["\(plist.path):7: warning: LSTypeIsPackage is set but "
            + "public.plain-text is not a package type; its documents are files"])
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "Trip.album") == "com.example.album")
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "Song.MIXPROJ") == "dyn.ext.mixproj")
        #expect(loaded.database.isPackage("dyn.ext.mixproj"))
        #expect(loaded.database.packageIdentifier(forDirectoryNamed: "notes.txt") == nil)
    }

    /// A manifest as the tree check makes one: the package's directory, then its entries.
    static func manifest(_ top: [String]) -> PackageManifest {
        func entry(_ path: String, _ kind: EntryKind, _ depth: Int) -> PackageEntry {
            var st = stat()
            st.st_mode = kind == .directory ? S_IFDIR | 0o700 : S_IFREG | 0o600
            return PackageEntry(path: Array(path.utf8), kind: kind, depth: depth, status: st)
        }
        var entries = [entry("", .directory, 0)]
        for name in top {
            if name.hasSuffix("/") {
                entries.append(entry(String(name.dropLast()), .directory, 1))
                entries.append(entry(String(name.dropLast()) + "/Document.iwa", .regular, 2))
            } else {
                entries.append(entry(name, .regular, 1))
            }
        }
        return PackageManifest(entries: entries)
    }

    @Test(arguments: [
        ("Report.rtfd", nil, ["TXT.rtf", "photo.jpg"], "com.apple.rtfd", false),
        ("Report.rtfd", nil, ["photo.jpg"], "com.apple.package", true),
        // A file TXT.rtf deeper down is no marker.
        ("Report.rtfd", nil, ["Attachments/"], "com.apple.package", true),
        ("Essay.pages", nil, ["Index/", "preview.jpg"], "com.apple.iwork.pages.pages", false),
        ("Essay.pages", "com.apple.package", ["Index/"], "com.apple.iwork.pages.pages", false),
        ("Essay.pages", "public.plain-text", ["Index/"], "com.apple.iwork.pages.pages", true),
    ] as [(String, String?, [String], String, Bool)])
    func inspectsByTheManifestsTopLevel(name: String, explicit: String?, top: [String], expected: String,
                                        mismatch: Bool) {
        // A sniffer is never asked: a package's inspection reads nothing.
        let inspection = TypeInspector(sniffer: nil).inspectPackage(name: name, explicit: explicit,
                                                                   manifest: Self.manifest(top), in: .builtin)
        #expect(inspection.resolved.identifier == expected)
        #expect((inspection.resolved.mismatch != nil) == mismatch)
        #expect(inspection.sniffed == nil && inspection.sniffedMIMEType == nil && inspection.sniffFailure == nil)
    }
}
