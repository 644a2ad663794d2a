import Testing
import InboxSystem

/// Intake looks for a file's sidecar only where its Inbox's events or a rescan showed one: a hint that may only err
/// towards looking.
@Suite("Sidecars seen arriving")
struct SidecarSightingsTests {
    enum Step {
        case saw(String, in: String)
        case rescanStarts
        case rescanIncomplete
        /// The file is taken: whether its sidecar is looked for.
        case take(String, in: String, looks: Bool)
    }

    static let cases: [(String, [Step])] = [
        ("a file whose sidecar came first is looked at; one without is not",
         [.saw(".a.txt.inbox-meta", in: "in"), .take("a.txt", in: "in", looks: true), .take("b.txt", in: "in", looks: false)]),
        ("only a sidecar's name counts, not another hidden name or a file",
         [.saw(".a.txt.swp", in: "in"), .saw("a.txt", in: "in"), .saw(".inbox-meta", in: "in"),
          .take("a.txt", in: "in", looks: false)]),
        ("a sighting is per Inbox",
         [.saw(".a.txt.inbox-meta", in: "one"), .take("a.txt", in: "two", looks: false), .take("a.txt", in: "one", looks: true)]),
        ("a sighting is used up by its file; the next sidecar of that name brings its own",
         [.saw(".a.txt.inbox-meta", in: "in"), .saw(".a.txt.inbox-meta", in: "in"), .take("a.txt", in: "in", looks: true),
          .take("a.txt", in: "in", looks: false), .saw(".a.txt.inbox-meta", in: "in"), .take("a.txt", in: "in", looks: true)]),
        ("a rescan's listing replaces what was seen",
         [.saw(".gone.txt.inbox-meta", in: "in"), .rescanStarts, .saw(".kept.txt.inbox-meta", in: "in"),
          .take("gone.txt", in: "in", looks: false), .take("kept.txt", in: "in", looks: true)]),
        ("past the capacity every file is looked at, until a complete rescan",
         [.saw(".1.inbox-meta", in: "in"), .saw(".2.inbox-meta", in: "in"), .saw(".3.inbox-meta", in: "in"),
          .take("4", in: "in", looks: true), .take("5", in: "in", looks: true), .rescanStarts,
          .take("4", in: "in", looks: false)]),
        ("an incomplete rescan rules nothing out",
         [.rescanStarts, .rescanIncomplete, .take("a.txt", in: "in", looks: true), .saw(".b.inbox-meta", in: "in"),
          .take("c", in: "in", looks: true), .rescanStarts, .take("c", in: "in", looks: false)]),
    ]

    @Test(arguments: cases)
    func sightings(_ what: String, _ steps: [Step]) {
        var sightings = SidecarSightings<String>(capacity: 2)
        for (index, step) in steps.enumerated() {
            switch step {
            case .saw(let name, let place): sightings.saw(Array(name.utf8), in: place)
            case .rescanStarts: sightings.rescanStarts()
            case .rescanIncomplete: sightings.rescanIncomplete()
            case .take(let name, let place, let looks):
                #expect(sightings.mayHaveSidecar(Array(name.utf8), in: place) == looks, "\(what), step \(index)")
            }
        }
    }
}
