import InboxCore
import Testing

@Suite("Spelling suggestions") struct SpellingTests {
    @Test(arguments: [
        ("kitten", "sitting", 3), ("", "abc", 3), ("abc", "", 3), ("same", "same", 0),
        ("--inbx", "--inbox", 1), ("verfy", "verify", 1), ("é", "e", 1), ("image/pgn", "image/png", 1),
        ("ab", "ba", 1), ("abc", "ca", 3),
    ])
    func editDistance(a: String, b: String, expected: Int) {
        #expect(Spelling.editDistance(a, b) == expected)
        #expect(Spelling.editDistance(b, a) == expected)
    }

    @Test(arguments: [
        ("--inbx", "--inbox"), ("--handler", "--handlers"), ("--sate", "--state"), ("--zzzzzz", nil),
    ] as [(String, String?)])
    func closest(word: String, expected: String?) {
        #expect(Spelling.closest(to: word, among: ["--inbox", "--handlers", "--state", "--help"]) == expected)
    }

    @Test func tiesGoToTheAlphabeticallyFirst() {
        #expect(Spelling.closest(to: "ab", among: ["ax", "aa"]) == "aa")
    }
}
