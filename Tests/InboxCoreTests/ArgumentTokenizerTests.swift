import Testing
@testable import InboxCore

@Suite("Argument tokenizer")
struct ArgumentTokenizerTests {
    typealias Token = ArgumentTokenizer.Token

    /// Every token of `arguments`; the options in `valued` take their value, which the token then shows as inline.
    func tokens(_ arguments: [String], valued: Set<String> = ["--a", "-n"]) throws(UsageError) -> [Token] {
        var tokenizer = ArgumentTokenizer(arguments)
        var tokens: [Token] = []
        while let token = tokenizer.next() {
            if case .option(let name, let inline) = token, valued.contains(name) {
                tokens.append(.option(name, inline: try tokenizer.value(for: name, inline: inline)))
            } else {
                tokens.append(token)
            }
        }
        return tokens
    }

    @Test(arguments: [
        ([], []),
        (["--a=b"], [.option("--a", inline: "b")]),
        (["--a", "b"], [.option("--a", inline: "b")]),
        (["--a="], [.option("--a", inline: "")]),
        (["--a=b=c"], [.option("--a", inline: "b=c")]),
        (["--a", "1", "--a=2", "--a", "3"], [.option("--a", inline: "1"), .option("--a", inline: "2"), .option("--a", inline: "3")]),
        // A value is the next word as it is, even when it looks like an option.
        (["--a", "-h"], [.option("--a", inline: "-h")]),
        (["--a", "--"], [.option("--a", inline: "--")]),
        (["-n", "5"], [.option("-n", inline: "5")]),
        (["--flag=x"], [.option("--flag", inline: "x")]),
        (["-n=5"], [.option("-n=5", inline: nil)]),
        (["--json", "--", "--a", "-h", "--"], [.option("--json", inline: nil), .positional("--a"), .positional("-h"), .positional("--")]),
        (["--"], []),
        (["-"], [.positional("-")]),
        (["-", "--json"], [.positional("-"), .option("--json", inline: nil)]),
        ([""], [.positional("")]),
        (["", "x", ""], [.positional(""), .positional("x"), .positional("")]),
        (["--a", ""], [.option("--a", inline: "")]),
        (["x", "-h", "y"], [.positional("x"), .option("-h", inline: nil), .positional("y")]),
        (["--help", "x"], [.option("--help", inline: nil), .positional("x")]),
        (["--größe=groß", "café.txt", "ファイル"], [.option("--größe", inline: "groß"), .positional("café.txt"), .positional("ファイル")]),
        (["--a", "é\u{301}"], [.option("--a", inline: "é\u{301}")]),
        (["--=x"], [.option("--", inline: "x")]),
        (["---a"], [.option("---a", inline: nil)]),
    ] as [([String], [Token])])
    func tokenizes(_ arguments: [String], _ expected: [Token]) throws {
        #expect(try tokens(arguments) == expected)
    }

    @Test(arguments: [
        (["--a"], UsageError.missingValue(for: "--a")),
        (["x", "-n"], .missingValue(for: "-n")),
        (["--a", "1", "--a"], .missingValue(for: "--a")),
    ])
    func aValueTakingOptionAtTheEndIsMissingItsValue(_ arguments: [String], _ expected: UsageError) {
        #expect(throws: expected) { try tokens(arguments) }
        #expect(expected.message == "missing value for '\(arguments.last!)'")
        #expect(expected.token == arguments.last)
    }

    @Test func aHugeCommandLineIsTokenizedInOrder() throws {
        let arguments = (0..<10_000).map { $0.isMultiple(of: 2) ? "--a=\($0)" : "\($0)" }
        let expected: [Token] = (0..<10_000).map { $0.isMultiple(of: 2) ? .option("--a", inline: "\($0)") : .positional("\($0)") }
        #expect(try tokens(arguments) == expected)
    }
}
