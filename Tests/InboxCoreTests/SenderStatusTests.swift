import Testing
@testable import InboxCore

@Suite("A sender's view of their files")
struct SenderStatusTests {
    static func file(_ id: String, _ name: String, _ state: SenderStatus.State, reason: String? = nil) -> SenderStatus.File {
        SenderStatus.File(deliveryID: id, name: name, state: state, handler: state == .refused ? nil : "com.example.viewer",
                          reason: reason, attempt: 1, sinceUSec: 1_764_000_000_000_000,
                          nextAttemptUSec: state == .retrying ? 1_764_000_060_000_000 : nil)
    }

    @Test func writtenAndReadBack() throws {
        var view = SenderStatus(uid: 65534, files: SenderStatus.State.allCases.enumerated().map { index, state in
            Self.file(String(repeating: "\(index)", count: 32), "file \"\(index)\".txt", state, reason: "why \\ \(index)")
        }, moreLive: 3)
        view.writtenAtUSec = 1_764_000_001_000_000
        let text = view.json()
        #expect(text.hasSuffix("}\n"))
        #expect(JSON.validate(Array(text.utf8)) == nil)
        #expect(try SenderStatus.parse(Array(text.utf8)).get() == view)
    }

    /// A package document is marked in the file (and only then: a file's entry is as before), and read back marked.
    @Test func aPackageIsMarkedAndReadBack() throws {
        var package = Self.file(String(repeating: "a", count: 32), "Report.rtfd", .failed, reason: "why")
        package.isPackage = true
        let plain = Self.file(String(repeating: "b", count: 32), "note.txt", .done, reason: nil)
        let text = SenderStatus(uid: 1000, files: [package, plain]).json()
        #expect(text.components(separatedBy: #""package":true"#).count == 2)
        #expect(text.contains(#""nextAttemptUSec":null,"package":true}"#))
        #expect(try SenderStatus.parse(Array(text.utf8)).get().files.map(\.isPackage) == [true, false])
    }

    @Test(arguments: [
        (#"{"uid":7,"files":[{"state":"lost","name":"a"},{"state":"done","name":"b"}]}"#, 7, ["b"]),
        (#"{"files":"no"}"#, 0, []),
        (#"{}"#, 0, []),
    ])
    func unknownStatesAndMissingMembers(_ text: String, _ uid: UInt32, _ names: [String]) throws {
        let view = try SenderStatus.parse(Array(text.utf8)).get()
        #expect(view.uid == uid)
        #expect(view.files.map(\.name) == names)
    }

    @Test(arguments: [
        ("0123456789abcdef0123456789abcdef", true), ("0123456789ABCDEF0123456789ABCDEF", true),
        ("note.txt", true), ("/var/spool/inboxd/Inbox/note.txt", true), ("Inbox/note.txt/", true),
        ("other.txt", false), ("", false), ("/", false),
    ])
    func aFileIsFoundByItsDeliveryIDOrItsName(_ query: String, _ expected: Bool) {
        #expect(Self.file("0123456789abcdef0123456789abcdef", "note.txt", .failed).matches(query) == expected)
    }

    @Test func theLedgerKeepsTheLatestOutcomePerDeliveryWithinItsBounds() {
        var ledger = SenderLedger(perSender: 3, senders: 2)
        ledger.record(Self.file("a", "a.txt", .failed), uid: 1)
        ledger.record(Self.file("a", "a.txt", .done), uid: 1)
        #expect(ledger.outcomes(of: 1).map(\.state) == [.done])
        for id in ["b", "c", "d"] { ledger.record(Self.file(id, id + ".txt", .done), uid: 1) }
        #expect(ledger.outcomes(of: 1).map(\.deliveryID) == ["d", "c", "b"])
        // Without an id (a link moved aside), the name tells entries apart.
        ledger.record(Self.file("", "link", .refused, reason: "first"), uid: 1)
        ledger.record(Self.file("", "link", .refused, reason: "second"), uid: 1)
        #expect(ledger.outcomes(of: 1).filter { $0.name == "link" }.map(\.reason) == ["second"])
        #expect(ledger.takeChanged() == [1])
        #expect(ledger.takeChanged() == [])
        // A third sender makes the least recently changed one forgotten.
        ledger.record(Self.file("e", "e.txt", .done), uid: 2)
        ledger.record(Self.file("f", "f.txt", .done), uid: 3)
        #expect(ledger.outcomes(of: 1).isEmpty)
        #expect(ledger.outcomes(of: 2).count == 1 && ledger.outcomes(of: 3).count == 1)
        #expect(ledger.takeChanged() == [2, 3])
    }

    @Test func liveFilesComeFirstAndSupersedeTheirOutcomes() {
        var ledger = SenderLedger()
        ledger.record(Self.file("a", "a.txt", .failed), uid: 1)
        ledger.record(Self.file("b", "b.txt", .done), uid: 1)
        let live = [Self.file("a", "a.txt", .queued), Self.file("c", "c.txt", .running), Self.file("d", "d.txt", .queued)]
        let view = ledger.view(of: 1, live: live, liveLimit: 2)
        #expect(view.files.map(\.deliveryID) == ["a", "c", "b"])
        #expect(view.files.map(\.state) == [.queued, .running, .done])
        #expect(view.moreLive == 1)
    }
}
