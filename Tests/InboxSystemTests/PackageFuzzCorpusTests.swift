import Foundation
import InboxSystem
import Testing

/// The package fuzz target's seed corpus (Tests/Fuzz/Corpus/package, made by Tests/Fuzz/package-seeds), replayed
/// through its entry: each seed builds a hostile or ordinary tree and checks, copies and removes it.
@Suite struct PackageFuzzCorpusTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/package")

    static let seeds = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()

    @Test(arguments: seeds)
    func replay(_ name: String) throws {
        let bytes = try #require(FileManager.default.contents(atPath: Self.directory.appendingPathComponent(name).path))
        #expect(PackageFuzzEntry.run(Array(bytes)) == [])
    }

    @Test func thereAreSeeds() {
        #expect(Self.seeds.count >= 30)
    }
}
