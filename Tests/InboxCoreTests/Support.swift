@testable import InboxCore

/// Turns a string literal into the bytes a parser reads.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Lines joined with "\n", so that a case's line numbers can be read off the array index + 1.
func lines(_ lines: String...) -> [UInt8] { Array(lines.joined(separator: "\n").utf8) }

/// A small deterministic generator for garbage inputs (xorshift64*), so failures reproduce.
struct Garbage {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next() >> 32) }
    }
}
