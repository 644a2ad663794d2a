import Foundation
import Testing

/// The detection corpus (Tests/DetectionCorpus) through the real agent: its sandboxed sniffer child, fed in parts when
/// an OLE2 file needs more than the first 64 KiB, must give every sample the UTI expected.tsv says.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct DetectionCorpusAgentTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../DetectionCorpus").standardizedFileURL

    @Test func theAgentTypesEverySampleAsExpected() throws {
        let table = try String(contentsOf: Self.directory.appendingPathComponent("expected.tsv"), encoding: .utf8)
        let rows = table.split(separator: "\n").dropFirst().map { $0.split(separator: "\t").map(String.init) }
        let world = try AgentHarness()
        // A kind of text among the claims (public.source-code): text is classified as far as the agent can (libmagic's
        // whole database, ContentNeeds), as every binary is named.
        try world.register("test.everything.\(world.tag)", contentTypes: "public.item public.content public.source-code")
        try world.start()
        for row in rows {
            let bytes = [UInt8](try Data(contentsOf: Self.directory.appendingPathComponent("files/\(row[0])")))
            try world.drop(row[0], contents: bytes)
        }
        try waitUntil("\(rows.count) recordings", timeout: 120) { world.recordings().count >= rows.count }
        let decided = world.recordedContentTypes()
        for row in rows {
            #expect(decided[row[0]] == row[2], "\(row[0]): \(row[3])")
        }
    }
}
