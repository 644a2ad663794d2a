import Testing
@testable import InboxCore

/// Inputs that must never make the property-list reader trap: truncations, flipped bytes, garbage, deep nesting.
@Suite("Property lists never trap")
struct PropertyListRobustnessTests {
    /// The XML suite's document, cut short and flipped here.
    static let xmlDocument = XMLPropertyListTests.xmlDocument

    @Test func everyTruncationOfABinaryFileIsHandled() {
        for fixture in [PropertyListFixtures.allTypes, PropertyListFixtures.profileEditor] {
            for length in 0..<fixture.count {
                // Cutting a binary plist loses its trailer: always an error, never a trap.
                #expect(throws: PropertyListError.self) { try PropertyList.parse(Array(fixture.prefix(length))) }
            }
        }
    }

    @Test func randomByteFlipsNeverTrap() {
        var garbage = Garbage(state: 0x5EED_F00D)
        var parsed = 0
        for fixture in [PropertyListFixtures.allTypes, PropertyListFixtures.profileEditor, Array(Self.xmlDocument)] {
            for _ in 0..<1500 {
                var bytes = fixture
                let flips = Int(garbage.next() % 4) + 1
                for _ in 0..<flips {
                    let index = Int(garbage.next() % UInt64(bytes.count))
                    bytes[index] = UInt8(truncatingIfNeeded: garbage.next())
                }
                if (try? PropertyList.parse(bytes)) != nil { parsed += 1 }
            }
        }
        // Many flips land in string bytes and still parse; the point is that none trapped.
        #expect(parsed > 0)
    }

    @Test func truncatedAndGarbageXMLNeverTraps() {
        let document = Array(Self.xmlDocument)
        for length in 0..<document.count - 1 {
            #expect(throws: PropertyListError.self) { try PropertyList.parse(Array(document.prefix(length))) }
        }
        var garbage = Garbage(state: 42)
        for size in [1, 7, 64, 4096] {
            for _ in 0..<50 {
                _ = try? PropertyList.parse(garbage.bytes(size))
                _ = try? PropertyList.parse(Array("bplist00".utf8) + garbage.bytes(size))
                _ = try? PropertyList.parse(Array("<plist>".utf8) + garbage.bytes(size))
            }
        }
    }

    @Test func deepInputsAreErrorsNotStackOverflows() {
        let opens = String(repeating: "<array>", count: 10_000)
        #expect(throws: PropertyListError.self) { try PropertyList.parse(xml(opens)) }
        // 5,000 arrays, each holding the next.
        let objects = (0..<5000).map { index -> [UInt8] in [0xA1, UInt8((index + 1) >> 8), UInt8((index + 1) & 0xFF)] }
        do {
            _ = try PropertyList.parse(bplist(objects + [[0x09]], offsetSize: 2, referenceSize: 2))
            Issue.record("parsed")
        } catch {
            #expect(error.message == "nested deeper than 64 levels")
        }
    }

    @Test func hugeXMLIsReadInBoundedTime() throws {
        // A 1 MiB string: the size limit the registration parser enforces.
        let big = String(repeating: "x", count: 1 << 20)
        #expect(try PropertyList.parse(xml("<string>\(big)</string>")).value == .string(big))
    }
}
