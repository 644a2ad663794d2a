import Foundation
import InboxSystem
import Testing

/// The inotify fuzz target's seed corpus (Tests/Fuzz/Corpus/inotify), replayed through its entry.
@Suite struct InotifyFuzzCorpusTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/inotify")

    static let seeds = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()

    @Test(arguments: seeds)
    func replay(_ name: String) throws {
        let bytes = try #require(FileManager.default.contents(atPath: Self.directory.appendingPathComponent(name).path))
        #expect(InotifyFuzzEntry.events(Array(bytes)) == [])
    }

    @Test func thereAreSeeds() {
        #expect(Self.seeds.count >= 3)
    }
}
