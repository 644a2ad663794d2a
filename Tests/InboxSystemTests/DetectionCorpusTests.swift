import Foundation
import Glibc
import InboxCore
import InboxSystem
import Testing

/// The detection corpus (Tests/DetectionCorpus): small sample files, each a hard case of the type decision rule, typed
/// as the agent types them (libmagic and the host's shared-mime-info, for real). Each file's reported MIME type and UTI
/// must be expected.tsv's; the accuracy is printed exactly and up to an alias or a parent, as a MIME corpus is scored.
@Suite("Detection corpus")
struct DetectionCorpusTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../DetectionCorpus").standardizedFileURL

    @Test func everySampleGetsItsExpectedMIMETypeAndUTI() throws {
        let table = try String(contentsOf: Self.directory.appendingPathComponent("expected.tsv"), encoding: .utf8)
        let rows = table.split(separator: "\n").dropFirst().map { $0.split(separator: "\t").map(String.init) }
        try #require(rows.count >= 15)
        let mime = MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories()).database
        let database = TypeDatabase.builtin.attaching(mime)
        let sniffer = try ContentSniffer()
        sniffer.rules = MIMEDatabaseLoader.loadMagic(directories: MIMEDatabaseLoader.defaultDirectories()).rules
        let inspector = TypeInspector(sniffer: sniffer)
        var exact = 0, related = 0
        var wrong: [String] = []
        for row in rows {
            let (name, expectedMIME, expectedUTI) = (row[0], row[1], row[2])
            let path = Self.directory.appendingPathComponent("files/\(name)").path
            let file = try FileDescriptor.open(path, .readOnly)
            defer { file.close() }
            let inspection = try inspector.inspect(file, name: name, explicit: nil, in: database).get()
            let resolved = inspection.resolved
            let got = resolved.mimeType ?? "none"
            if got == expectedMIME {
                exact += 1
            } else if mime.canonical(got) == mime.canonical(expectedMIME) || mime.descends(got, from: expectedMIME)
                        || mime.descends(expectedMIME, from: got) {
                related += 1
            }
            if got != expectedMIME || resolved.identifier != expectedUTI {
                wrong.append("\(name): expected \(expectedMIME) \(expectedUTI), got \(got) \(resolved.identifier) "
                             + "(sniffed: \(inspection.sniffed.map { "\($0.mimeType) by \($0.path)" } ?? "not sniffed"))")
            }
            // Every identifier `inboxctl info` prints resolves in `inboxctl types`.
            #expect(database.knownIdentifier(resolved.identifier) == resolved.identifier, "\(name)")
            if let content = resolved.contentIdentifier {
                #expect(database.knownIdentifier(content) == content, "\(name): \(content)")
            }
        }
        print("detection corpus: \(exact)/\(rows.count) MIME types exact, \(exact + related)/\(rows.count) up to an "
              + "alias or a parent")
        for line in wrong { print("detection corpus: wrong: \(line)") }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }
}

/// The sniffer child's long requests: an OLE2 file whose first 64 KiB say only "OLE2" is sent again in parts, and
/// the sandboxed child names its kind from the whole.
@Suite("Sniffer child, long requests", .enabled(if: BuiltAgent.path != nil, "the built inboxd was not found"))
struct SnifferChildTests {
    @Test func anOLE2FileIsReadPastTheFirst64KiBInParts() throws {
        let sniffer = try SnifferProcess(executable: try #require(BuiltAgent.path), identity: nil,
                                         landlockABI: LandlockRuleset.abi(),
                                         mimeDirectories: MIMEDatabaseLoader.defaultDirectories())
        defer { sniffer.stop() }
        let whole = DetectionCorpusTests.directory.appendingPathComponent("files/spreadsheet").path
        let file = try FileDescriptor.open(whole, .readOnly)
        defer { file.close() }
        #expect(try sniffer.sniff(file).get().mimeType == "application/vnd.ms-excel")

        // The same first 64 KiB alone say only "OLE2": the second look is what names it.
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let prefix = try scratch.create("prefix")
        defer { prefix.close() }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)).prefix(ContentSniffer.byteLimit))
        _ = bytes.withUnsafeBytes { write(prefix.rawValue, $0.baseAddress, $0.count) }
        let answer = try sniffer.sniff(prefix).get().mimeType
        #expect(ContentSniffer.needsMoreBytes(answer), "\(answer)")
        // The child serves the next request as usual.
        #expect(try sniffer.sniff(file).get().mimeType == "application/vnd.ms-excel")
    }

    /// An FLC animation is named by libmagic's database alone (shared-mime-info's rule for it looks elsewhere):
    /// searched when the decision has no claim, not under a concrete claim, where it is "some data" for a few µs.
    @Test func binaryOnlyLibmagicsDatabaseNamesIsSearchedForOnlyWithoutAClaim() throws {
        let sniffer = try SnifferProcess(executable: try #require(BuiltAgent.path), identity: nil,
                                         landlockABI: LandlockRuleset.abi(),
                                         mimeDirectories: MIMEDatabaseLoader.defaultDirectories())
        defer { sniffer.stop() }
        try #require(sniffer.ruleSections > 0, "no shared-mime-info magic file on this host")
        let file = try FileDescriptor.open(DetectionCorpusTests.directory.appendingPathComponent("files/anim").path, .readOnly)
        defer { file.close() }
        let named = try sniffer.sniff(file, namingBinary: true).get()
        #expect(named.mimeType == "video/x-flc" && named.path == .libmagic, "\(named)")
        let claimed = try sniffer.sniff(file, namingBinary: false).get()
        #expect(claimed.mimeType == "application/octet-stream" && claimed.path == .quick, "\(claimed)")
        // What libmagic's built-in checks name is the same either way, and needs no search (an OLE2 kind).
        let sheet = try FileDescriptor.open(DetectionCorpusTests.directory.appendingPathComponent("files/spreadsheet").path,
                                            .readOnly)
        defer { sheet.close() }
        #expect(try sniffer.sniff(sheet, namingBinary: false).get().mimeType == "application/vnd.ms-excel")
    }
}

/// The built `inboxd` (the sniffer is `inboxd --content-sniffer`), beside the test bundle.
enum BuiltAgent {
    static let path: String? = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("inboxd").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()
}

/// libmagic's names against this host's shared-mime-info: each rename lands on a type the host declares, and the
/// names kept as libmagic's own are ones the host does not know (else they would be renamed or aliased).
@Suite("libmagic's names on this host")
struct LibmagicNamesTests {
    static let mime = MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories()).database

    @Test func everyRenameLandsOnAHostType() {
        let mime = Self.mime
        let undeclared = LibmagicNames.hostNames.filter { !mime.knows($0.value) }.map { "\($0.key) -> \($0.value)" }
        #expect(undeclared.isEmpty, "renamed to types shared-mime-info does not declare: \(undeclared.sorted())")
        let ownTypes = LibmagicNames.hostNames.filter { mime.knows($0.key) && mime.canonical($0.key) != $0.value }
        #expect(ownTypes.isEmpty, "renamed although the host has them as types of their own: \(ownTypes.keys.sorted())")
    }

    @Test func libmagicsOwnNamesAreNotTheHosts() {
        let mime = Self.mime
        let known = LibmagicNames.vocabulary.filter { mime.knows($0) }.sorted()
        #expect(known.isEmpty, "known to shared-mime-info, so no longer libmagic's own: \(known)")
        #expect(LibmagicNames.vocabulary.count > 300)
    }
}
