import Foundation
import Testing

/// scripts/inboxctl-completion.bash in a real bash, completing against the built inboxctl.
struct CompletionTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/inboxctl-completion.bash").standardizedFileURL

    /// What bash offers for the words (the last one is being completed).
    static func complete(_ words: [String]) throws -> [String] {
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let program = """
            source '\(script.path)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _inboxctl
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = Binaries.directory.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let result = try run("/bin/bash", ["-c", program], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func subcommandsComeFromTheToolsOwnHelp() throws {
        let all = try Self.complete(["inboxctl", ""])
        for name in ["verify", "types", "info", "handlers", "status", "help"] {
            #expect(all.contains(name), "\(all)")
        }
        #expect(try Self.complete(["inboxctl", "sta"]) == ["status"])
        #expect(try Self.complete(["inboxctl", "help", "ver"]) == ["verify"])
        #expect(try Self.complete(["inboxctl", "--ver"]) == ["--version"])
    }

    @Test func listTakesWhichList() throws {
        #expect(try Self.complete(["inboxctl", "list", ""]) == ["failed", "unhandled"])
        #expect(try Self.complete(["inboxctl", "list", "un"]) == ["unhandled"])
        #expect(try Self.complete(["inboxctl", "list", "failed", "--j"]) == ["--json"])
        #expect(try Self.complete(["inboxctl", "list", "--mi"]) == ["--mine"])
    }

    @Test func optionsOfTheSubcommand() throws {
        #expect(try Self.complete(["inboxctl", "status", "--js"]) == ["--json"])
        #expect(try Self.complete(["inboxctl", "status", "--sy"]) == ["--system"])
        #expect(try Self.complete(["inboxctl", "send", "--us"]) == ["--user"])
        let options = try Self.complete(["inboxctl", "types", "--"])
        #expect(options.contains("--tree") && options.contains("--handlers"), "\(options)")
    }

    @Test func typeAndHandlerIdentifiers() throws {
        let types = try Self.complete(["inboxctl", "types", "public.jp"])
        #expect(types.contains("public.jpeg"), "\(types)")
        #expect(types.allSatisfy { $0.hasPrefix("public.jp") })
        let world = try AgentHarness()
        try world.register("test.completion.\(world.tag)", contentTypes: "public.png")
        let handlers = try Self.complete(["inboxctl", "log", "--handlers", world.handlers.path, "--handler", "test.comp"])
        #expect(handlers == ["test.completion.\(world.tag)"], "\(handlers)")
        let chosen = try Self.complete(["inboxctl", "open", "--handlers", world.handlers.path, "--with", "test.comp"])
        #expect(chosen == ["test.completion.\(world.tag)"], "\(chosen)")
        // --system and --user take no value: the word after one is not taken for theirs.
        let asked = try Self.complete(["inboxctl", "open", "--system", "--handlers", world.handlers.path, "--with", "test.comp"])
        #expect(asked == ["test.completion.\(world.tag)"], "\(asked)")
        #expect(try Self.complete(["inboxctl", "open", "--fo"]) == ["--force"])
    }

    @Test func optionsTakesItsActionsAndTheirArguments() throws {
        #expect(try Self.complete(["inboxctl", "opt"]) == ["options"])
        #expect(try Self.complete(["inboxctl", "options", "--do", ""])
                == ["quicklook", "open=", "print", "print=", "copy", "copy=", "send="])
        #expect(try Self.complete(["inboxctl", "options", "--do", "q"]) == ["quicklook"])
        let world = try AgentHarness()
        try world.register("test.completion.\(world.tag)", contentTypes: "public.png")
        // Whole, as these tests give the word, and split at '=' as bash splits it by default (COMP_WORDBREAKS).
        #expect(try Self.complete(["inboxctl", "options", "--handlers", world.handlers.path, "--do", "open=test.comp"])
                == ["open=test.completion.\(world.tag)"])
        #expect(try Self.complete(["inboxctl", "options", "--handlers", world.handlers.path, "--do", "open", "=",
                                   "test.comp"]) == ["test.completion.\(world.tag)"])
        let options = try Self.complete(["inboxctl", "options", "--"])
        for option in ["--to", "--printer", "--json", "--do"] { #expect(options.contains(option), "\(options)") }
    }
}
