import Glibc
import InboxCore
import InboxSystem
import Testing

/// What one sniffing request costs through the real sandboxed child, on the same bytes, with libmagic alone (the
/// child started without MIME directories: what every request cost before the rules) and with shared-mime-info's
/// rules first. Prints the medians (`swift test --filter SniffCostTests`; `SNIFF_COST_AGENT=.build/release/inboxd`
/// measures a release build's child, which is where the work is done; `SNIFF_COST_BEFORE=path/to/inboxd` measures
/// another build's child, with the rules and asked as its agent asked (every request an `S`), in place of libmagic
/// alone); asserts which check answered each kind and what it said, never a time (the machine is shared).
@Suite("Sniffing cost per request", .enabled(if: BuiltAgent.path != nil, "the built inboxd was not found"))
struct SniffCostTests {
    struct Sample {
        let name: String
        let bytes: [UInt8]
        /// As the agent asks: .none when the file's name claims a concrete type that can be text, or no registration
        /// claims a kind of text (ContentNeeds); .builtin when only JSON or CSV is claimed.
        let text: ContentNeeds.Text
        /// As the agent asks: false when the name claims a concrete type (binary nothing else names stays "data").
        var namingBinary = true
        /// Which check answers with the rules, and what.
        let path: SniffPath
        let mimeType: String
    }

    static func pseudoRandom(_ count: Int) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    static let samples: [Sample] = {
        let text = Array(String(repeating: "The quick brown fox jumps over the lazy dog again and again.\n", count: 25)
            .utf8.prefix(1536))
        let zip = Array("PK".utf8) + [3, 4, 20, 0, 0, 0, 8, 0] + [UInt8](repeating: 0, count: 18) + [8, 0, 0, 0]
            + Array("data.bin".utf8) + pseudoRandom(64)
        let pdf = Array("%PDF-1.4\n%\u{e2}\u{e3}\u{cf}\u{d3}\n1 0 obj\n<< /Type /Catalog >>\nendobj\n".utf8)
            + pseudoRandom(2000) + Array("\n%%EOF\n".utf8)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
            + [0, 0, 0, 16, 0, 0, 0, 16, 8, 6, 0, 0, 0, 0x1F, 0xF3, 0xFF, 0x61] + pseudoRandom(200)
        let json = Array(("{\"items\": [" + (0..<40).map { "{\"id\": \($0), \"ok\": true}" }.joined(separator: ", ")
            + "]}\n").utf8)
        let short = Array("scan 2026-12-01 page 1 of 1: 4 items, total 12.50, approved by ops\n".utf8.prefix(65))
        return [
            Sample(name: "random 2 KB (.dat)", bytes: pseudoRandom(2048), text: .all, path: .libmagic,
                   mimeType: "application/octet-stream"),
            Sample(name: "random 2 KB (.png)", bytes: pseudoRandom(2048), text: .all, namingBinary: false,
                   path: .quick, mimeType: "application/octet-stream"),
            Sample(name: "JSON 1 KB, no name", bytes: json, text: .all, path: .quick,
                   mimeType: "application/json"),
            Sample(name: "1.5 KB text (.txt)", bytes: text, text: .none, path: .text, mimeType: "text/plain"),
            Sample(name: "1.5 KB text, no name", bytes: text, text: .all, path: .libmagic, mimeType: "text/plain"),
            Sample(name: "zip header", bytes: zip, text: .all, path: .both, mimeType: "application/zip"),
            Sample(name: "PDF 2 KB", bytes: pdf, text: .all, path: .rules, mimeType: "application/pdf"),
            Sample(name: "PNG", bytes: png, text: .all, path: .rules, mimeType: "image/png"),
            Sample(name: "65 bytes text, no extension", bytes: short, text: .all, path: .libmagic,
                   mimeType: "text/plain"),
            // What the registrations claim bounds the work: no kind of text claimed but JSON or CSV.
            Sample(name: "65 bytes text, no extension, no kind of text claimed", bytes: short, text: .builtin,
                   path: .quick, mimeType: "text/plain"),
            Sample(name: "JSON 1 KB, no name, no kind of text claimed", bytes: json, text: .builtin, path: .quick,
                   mimeType: "application/json"),
            // A format written in text is still told from plain text when no kind of text is claimed: by the rules.
            Sample(name: "PostScript, no name, no kind of text claimed",
                   bytes: Array("%!PS-Adobe-3.0\n%%Creator: groff\n%%Pages: 1\n%%EndComments\nshowpage\n".utf8),
                   text: .builtin, path: .rules, mimeType: "application/postscript"),
            Sample(name: "random 2 KB, no name, no binary type claimed", bytes: pseudoRandom(2048), text: .builtin,
                   namingBinary: false, path: .quick, mimeType: "application/octet-stream"),
        ]
    }()

    /// Median microseconds of `rounds` requests, and the last answer.
    static func measure(_ sniffer: SnifferProcess, _ file: FileDescriptor, text: ContentNeeds.Text, namingBinary: Bool,
                        rounds: Int) throws -> (Int64, Sniffed) {
        var times: [Int64] = []
        var last: Sniffed?
        for _ in 0..<rounds {
            let started = ContinuousClock.now
            last = try sniffer.sniff(file, text: text, namingBinary: namingBinary).get()
            times.append((ContinuousClock.now - started).microsecondsClamped)
        }
        return (times.sorted()[times.count / 2], try #require(last))
    }

    @Test func rulesAnswerFirstAndCostLessThanLibmagicAlone() throws {
        let agent = try #require(CurrentProcess.environment("SNIFF_COST_AGENT") ?? BuiltAgent.path)
        let earlier = CurrentProcess.environment("SNIFF_COST_BEFORE")
        let before = try SnifferProcess(executable: earlier ?? agent, identity: nil, landlockABI: LandlockRuleset.abi(),
                                        mimeDirectories: earlier == nil ? [] : MIMEDatabaseLoader.defaultDirectories())
        defer { before.stop() }
        let after = try SnifferProcess(executable: agent, identity: nil, landlockABI: LandlockRuleset.abi(),
                                       mimeDirectories: MIMEDatabaseLoader.defaultDirectories())
        defer { after.stop() }
        try #require(after.ruleSections > 0, "no shared-mime-info magic file on this host")
        #expect(earlier != nil || before.ruleSections == 0 && before.rulesExtent == 0)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        print("sniff cost: median µs per request, \(earlier.map { "\($0)'s child" } ?? "libmagic alone") -> rules first "
              + "(which check answered)")
        for (index, sample) in Self.samples.enumerated() {
            let file = try scratch.create("sample-\(index)")
            defer { file.close() }
            _ = sample.bytes.withUnsafeBytes { write(file.rawValue, $0.baseAddress, $0.count) }
            let (old, oldAnswer) = try Self.measure(before, file, text: earlier != nil ? .all : sample.text,
                                                    namingBinary: earlier != nil || sample.namingBinary, rounds: 200)
            let (new, newAnswer) = try Self.measure(after, file, text: sample.text,
                                                    namingBinary: sample.namingBinary, rounds: 200)
            print("sniff cost: \(sample.name): \(old) -> \(new) µs (\(oldAnswer.mimeType) -> \(newAnswer.mimeType), "
                  + "\(newAnswer.path))")
            #expect(newAnswer.path == sample.path, "\(sample.name)")
            #expect(newAnswer.mimeType == sample.mimeType, "\(sample.name)")
        }
    }
}
