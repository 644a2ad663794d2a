import Foundation
import Testing
@testable import InboxCore

/// The built-in table against Apple's own declarations (Tests/TypeReference/apple-types.tsv): every difference must be
/// a row of the "Deviations from Apple" table in docs/types.md, and every row there must be a real difference.
@Suite("Built-in types against Apple's declarations")
struct BuiltinTypesReferenceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardizedFileURL

    /// One of Apple's declarations as the reference list gives it.
    struct AppleType {
        let identifier: String
        let conformsTo: [String]
        let extensions: [String]
        let mimeTypes: [String]
        let source: String
    }

    /// One difference: the identifier, what differs, Apple's value and ours (as the docs table prints them).
    struct Deviation: Hashable, CustomStringConvertible {
        let identifier: String
        let kind: String
        let apple: String
        let inboxd: String

        var description: String {
            "| `\(identifier)` | \(kind) | \(apple.isEmpty ? "none" : "`\(apple)`") | "
                + "\(inboxd.isEmpty ? "none" : "`\(inboxd)`") |"
        }
    }

    static func reference() throws -> [AppleType] {
        let text = try String(contentsOf: root.appendingPathComponent("Tests/TypeReference/apple-types.tsv"),
                              encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst().map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let words = { (index: Int) in index < fields.count ? fields[index].split(separator: " ").map(String.init) : [] }
            return AppleType(identifier: fields[0], conformsTo: words(1), extensions: words(2), mimeTypes: words(3),
                             source: fields.count > 4 ? fields[4] : "")
        }
    }

    /// The differences between the table and the reference. Conformance must be the same set of direct parents;
    /// Apple's extensions and MIME types must all be ours, Apple's preferred extension ours too (the table may add
    /// the names shared-mime-info and libmagic use: additions are not differences).
    static func deviations() throws -> Set<Deviation> {
        let reference = try reference()
        let table = Dictionary(BuiltinTypes.declarations.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        var found: Set<Deviation> = []
        for apple in reference {
            guard let ours = table[apple.identifier] else {
                found.insert(Deviation(identifier: apple.identifier, kind: "absent", apple: "declared", inboxd: ""))
                continue
            }
            if Set(apple.conformsTo) != Set(ours.conformsTo) {
                found.insert(Deviation(identifier: apple.identifier, kind: "conformance",
                                       apple: apple.conformsTo.joined(separator: " "),
                                       inboxd: ours.conformsTo.joined(separator: " ")))
            }
            if !Set(apple.extensions).isSubset(of: ours.extensions)
                || (apple.extensions.first != nil && apple.extensions.first != ours.extensions.first) {
                found.insert(Deviation(identifier: apple.identifier, kind: "extensions",
                                       apple: apple.extensions.joined(separator: " "),
                                       inboxd: ours.extensions.joined(separator: " ")))
            }
            if !Set(apple.mimeTypes).isSubset(of: ours.mimeTypes) {
                found.insert(Deviation(identifier: apple.identifier, kind: "MIME types",
                                       apple: apple.mimeTypes.joined(separator: " "),
                                       inboxd: ours.mimeTypes.joined(separator: " ")))
            }
        }
        let appleIdentifiers = Set(reference.map(\.identifier))
        for declaration in BuiltinTypes.declarations where !appleIdentifiers.contains(declaration.identifier) {
            found.insert(Deviation(identifier: declaration.identifier, kind: "not Apple's", apple: "",
                                   inboxd: declaration.conformsTo.joined(separator: " ")))
        }
        return found
    }

    /// The rows of docs/types.md's "Deviations from Apple" table, without the reason column.
    static func documented() throws -> Set<Deviation> {
        let text = try String(contentsOf: root.appendingPathComponent("docs/types.md"), encoding: .utf8)
        var rows: Set<Deviation> = []
        var inSection = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inSection = line == "## Deviations from Apple" }
            guard inSection, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 5 else { continue }
            let plain = { (cell: String) in cell == "none" ? "" : cell.trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
            rows.insert(Deviation(identifier: plain(cells[0]), kind: cells[1], apple: plain(cells[2]),
                                  inboxd: plain(cells[3])))
        }
        return rows
    }

    @Test func referenceListIsWellFormed() throws {
        let reference = try Self.reference()
        #expect(reference.count >= 200)
        #expect(Set(reference.map(\.identifier)).count == reference.count, "no identifier twice")
        for apple in reference {
            #expect(["header", "reference"].contains(apple.source), "\(apple.identifier): source \(apple.source)")
            for parent in apple.conformsTo {
                #expect(reference.contains { $0.identifier == parent }, "\(apple.identifier): parent \(parent) not listed")
            }
        }
        // The families real files and apps use, and the MPEG-4 audio declaration as Apple has it.
        for identifier in ["com.microsoft.windows-media-wmv", "com.microsoft.windows-media-wma",
                           "com.microsoft.advanced-systems-format", "com.apple.protected-mpeg-4-audio",
                           "com.apple.protected-mpeg-4-video", "com.apple.applescript.text", "com.apple.applescript.script",
                           "com.apple.applescript.script-bundle", "com.real.realmedia", "com.adobe.illustrator.ai-image",
                           "com.apple.pict", "com.apple.quicktime-image", "com.apple.macpaint-image", "com.stuffit.archive",
                           "com.apple.flat-rtfd", "com.apple.colorsync-profile", "com.sgi.sgi-image",
                           "com.kodak.flashpix-image", "com.apple.iwork.keynote.key", "com.apple.application-bundle",
                           "com.apple.framework", "com.apple.plugin", "com.apple.application-and-system-extension",
                           "com.apple.live-photo", "com.apple.reality", "com.apple.arobject", "com.apple.scenekit.scene"] {
            #expect(reference.contains { $0.identifier == identifier }, "\(identifier) missing from the reference")
            #expect(TypeDatabase.builtin.declares(identifier), "\(identifier) missing from the table")
        }
        let audio = try #require(TypeDatabase.builtin.declaration(for: "public.mpeg-4-audio"))
        #expect(Set(audio.conformsTo) == ["public.mpeg-4", "public.audio"])
        #expect(audio.extensions.first == "m4a")
    }

    @Test func everyDeviationIsDocumentedAndEveryDocumentedOneIsReal() throws {
        let found = try Self.deviations()
        let documented = try Self.documented()
        let undocumented = found.subtracting(documented).map(\.description).sorted()
        let stale = documented.subtracting(found).map(\.description).sorted()
        #expect(undocumented.isEmpty, "deviations missing from docs/types.md:\n\(undocumented.joined(separator: "\n"))")
        #expect(stale.isEmpty, "rows of docs/types.md that are not deviations:\n\(stale.joined(separator: "\n"))")
    }

    @Test func everyDocumentedDeviationGivesAReason() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/types.md"), encoding: .utf8)
        var inSection = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("## ") { inSection = line == "## Deviations from Apple" }
            guard inSection, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            #expect(cells.count >= 7 && cells[5].trimmingCharacters(in: .whitespaces).count >= 10, "no reason: \(line)")
        }
    }
}
