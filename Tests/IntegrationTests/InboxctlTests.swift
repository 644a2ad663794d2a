import Foundation
import Testing

@Suite struct InboxctlVerifyTests {
    let directory: URL

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func file(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test func reportsEachErrorWithItsLineAndFails() throws {
        let bad = try file("bad.handler", "[Handler]\nExec=/bin/true\n\n[DocumentType]\nContentTypes=public.png\nRank=Supreme\n")
        let good = try file("good.handler", "[Handler]\nExec=/bin/true\n[DocumentType]\nContentTypes=public.png\n")
        let result = try run(Binaries.inboxctl.path, ["verify", bad, good])
        #expect(result.status == 1)
        #expect(result.stdout == "\(bad):6: invalid Rank= 'Supreme': expected Owner, Default, Alternate or None\n")
        #expect(result.stderr == "2 paths: 1 error(s)\n")
    }

    @Test func aCleanDirectoryPasses() throws {
        _ = try file("viewer.handler", "[Handler]\nExec=/bin/cat %f\n[DocumentType]\nContentTypes=public.text\n")
        let result = try run(Binaries.inboxctl.path, ["verify", "--handlers", directory.path])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty)
    }

    @Test func checksAgentConfiguration() throws {
        let conf = try file("inboxd.conf", "[Agent]\nInbox=relative/path\nMaxAttempts=3\n")
        let result = try run(Binaries.inboxctl.path, ["verify", conf])
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("\(conf):2: "))
    }

    @Test func unknownSubcommandIsAUsageError() throws {
        let result = try run(Binaries.inboxctl.path, ["verfy"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            Error: unknown subcommand 'verfy'; did you mean 'verify'?
            Usage: inboxctl <subcommand> [options]
              See 'inboxctl --help'.

            """)
        #expect(result.stdout.isEmpty)
    }

    @Test func helpIsTheSameEveryWay() throws {
        let plain = try run(Binaries.inboxctl.path, ["--help"])
        #expect(plain.status == 0)
        #expect(plain.stdout.hasPrefix("OVERVIEW: Control and inspect inboxd.\n\nUSAGE: inboxctl <subcommand> [options]\n"))
        #expect(try run(Binaries.inboxctl.path, ["-h"]).stdout == plain.stdout)
        #expect(try run(Binaries.inboxctl.path, ["help"]).stdout == plain.stdout)
        let verify = try run(Binaries.inboxctl.path, ["help", "verify"])
        #expect(verify.stdout.contains("USAGE: inboxctl verify [--handlers DIR]... [--json] [PATH...]"))
        #expect(try run(Binaries.inboxctl.path, ["verify", "--help"]).stdout == verify.stdout)
    }
}
