import Foundation
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
        let inspector = TypeInspector(sniffer: try ContentSniffer())
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
                             + "(libmagic: \(inspection.sniffedMIMEType ?? "not sniffed"))")
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
