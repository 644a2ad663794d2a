import Foundation
import InboxCore
import Testing

/// The seed corpora of the fuzz targets (Tests/Fuzz/Corpus), replayed through the entries the targets call.
enum FuzzCorpus {
    /// One seed: its target and file name, for the test's name, and its bytes.
    struct Seed: Sendable, CustomTestStringConvertible {
        let target: String
        let name: String
        let bytes: [UInt8]
        var testDescription: String { "\(target)/\(name)" }
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    /// Every file of the targets' corpora, sorted; empty names in `targets` are an error the tests report.
    static func seeds(_ targets: [String]) -> [Seed] {
        targets.flatMap { target in
            let folder = directory.appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.sorted().map { name in
                let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) ?? Data()
                return Seed(target: target, name: name, bytes: Array(data))
            }
        }
    }
}

@Suite struct FuzzCorpusTests {
    static let targets = FuzzEntry.targets.keys.sorted()

    @Test(arguments: FuzzCorpus.seeds(targets))
    func replay(_ seed: FuzzCorpus.Seed) throws {
        let entry = try #require(FuzzEntry.targets[seed.target])
        #expect(entry(seed.bytes) == [])
    }

    @Test(arguments: targets)
    func everyTargetHasSeeds(_ target: String) {
        #expect(FuzzCorpus.seeds([target]).count >= 3, "Tests/Fuzz/Corpus/\(target) has too few seeds")
    }

    @Test func everyTargetHasAFuzzer() {
        let fuzzers = FuzzCorpus.directory.deletingLastPathComponent()
        for target in Self.targets {
            #expect(FileManager.default.fileExists(atPath: fuzzers.appendingPathComponent("\(target).swift").path),
                    "Tests/Fuzz/\(target).swift is missing")
        }
    }

    /// The invariants themselves: inputs that must pass them.
    @Test(arguments: [
        "", "{", "\u{0}", "[1,2", "{\"a\":1}", "\"\\ud800\"", "[" + String(repeating: "[", count: 100),
    ])
    func jsonInvariantsHoldOn(_ text: String) {
        #expect(FuzzEntry.json(Array(text.utf8)) == [])
        #expect(FuzzEntry.sidecar(Array(text.utf8)) == [])
    }

    @Test(arguments: [[0xC3, 0x28], [0x22, 0xFF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0xEF, 0xBB, 0xBF, 0x31]] as [[UInt8]])
    func jsonNeverAcceptsInvalidUTF8(_ bytes: [UInt8]) {
        #expect(JSON.validate(bytes) != nil)
        #expect(FuzzEntry.json(bytes) == [])
    }
}
