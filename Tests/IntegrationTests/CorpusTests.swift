import Foundation
import Testing

/// Real files of many kinds, made by real tools (Tests/Corpus/make-corpus), go through the real agent; each must
/// reach the handler with the type Tests/Corpus's expected.tsv gives it. Prints the accuracy.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct CorpusTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Corpus/make-corpus").standardizedFileURL

    struct Case {
        let name: String
        let expected: String
        let variant: String
        let note: String
    }

    @Test func everyFileOfTheCorpusGetsItsExpectedType() throws {
        let world = try AgentHarness()
        let corpus = world.root.appendingPathComponent("corpus")
        let made = try run(Self.script.path, [corpus.path])
        try #require(made.status == 0, "make-corpus failed: \(made.stderr)")
        let table = try String(contentsOf: corpus.appendingPathComponent("expected.tsv"), encoding: .utf8)
        let cases = table.split(separator: "\n").dropFirst().map { line -> Case in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Case(name: fields[0], expected: fields[1], variant: fields[2], note: fields.count > 3 ? fields[3] : "")
        }
        try #require(cases.count >= 40)
        #expect(Set(cases.map(\.expected)).count >= 25, "at least 25 kinds")

        // One handler takes everything, so each file's type is what the agent decided.
        let everything = "test.everything.\(world.tag)"
        try world.register(everything, contentTypes: "public.item public.content")
        try world.start()
        for testCase in cases {
            let bytes = [UInt8](try Data(contentsOf: corpus.appendingPathComponent(testCase.name)))
            try world.drop(testCase.name, contents: bytes)
        }
        try waitUntil("\(cases.count) recordings", timeout: 120) { world.recordings().count >= cases.count }

        let decided = world.recordedContentTypes()
        var wrong: [String] = []
        var byVariant: [String: (right: Int, all: Int)] = [:]
        for testCase in cases {
            let right = decided[testCase.name] == testCase.expected
            byVariant[testCase.variant, default: (0, 0)].all += 1
            if right {
                byVariant[testCase.variant, default: (0, 0)].right += 1
            } else {
                wrong.append("\(testCase.name) [\(testCase.variant)]: expected \(testCase.expected), got "
                             + "\(decided[testCase.name] ?? "nothing") (\(testCase.note))")
            }
        }
        let right = cases.count - wrong.count
        let percent = Double(right) * 100 / Double(cases.count)
        let variants = byVariant.keys.sorted().map { "\($0) \(byVariant[$0]!.right)/\(byVariant[$0]!.all)" }
        print("corpus: \(right)/\(cases.count) files typed as expected (\(String(format: "%.1f", percent))%), "
              + "\(Set(cases.map(\.expected)).count) kinds; \(variants.joined(separator: ", "))")
        for line in wrong { print("corpus: wrong: \(line)") }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }
}
