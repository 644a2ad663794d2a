import Foundation
import Testing

/// units/inboxd.catalog, the text `journalctl -x` shows beside an entry, points at commands that exist.
struct CatalogTests {
    static let catalog = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../units/inboxd.catalog").standardizedFileURL

    /// The entry for one MESSAGE_ID: its lines up to the next entry.
    static func entry(_ id: String, in text: String) -> String? {
        guard let start = text.range(of: "-- \(id)\n") else { return nil }
        let rest = text[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n-- ")?.lowerBound ?? rest.endIndex)])
    }

    @Test func everyInboxctlCommandItNamesExists() throws {
        let text = try String(contentsOf: Self.catalog, encoding: .utf8)
        let help = try inboxctl(["--help"]).stdout
        let named = Set(text.matches(of: /inboxctl ([a-z]+)/).map { String($0.1) })
        #expect(!named.isEmpty)
        for subcommand in named {
            #expect(help.contains("\n  \(subcommand.padding(toLength: 22, withPad: " ", startingAt: 0))  "),
                    "the catalog names 'inboxctl \(subcommand)', which inboxctl --help does not list")
        }
    }

    @Test func aFailedFileIsSentAgainWithRetryAndProblemsSayWhatAWarningCosts() throws {
        let text = try String(contentsOf: Self.catalog, encoding: .utf8)
        let failed = try #require(Self.entry("3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c55", in: text))
        #expect(failed.contains("inboxctl retry @INBOX_DELIVERY_ID@"))
        #expect(!failed.contains("inboxctl open"), "open sends a new file; retry sends the one in failed/")
        let problem = try #require(Self.entry("3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5b", in: text))
        #expect(problem.contains("A warning (priority 4)") && problem.contains("An error (priority 3)"))
    }
}
