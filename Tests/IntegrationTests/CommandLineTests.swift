import Foundation
import Testing

@Suite struct AgentCommandLineTests {
    @Test(arguments: [
        (["--inbx", "/tmp/x"], "Error: unknown option '--inbx'; did you mean '--inbox'?"),
        (["--max-concurrent", "zero"], "Error: invalid value 'zero' for '--max-concurrent': expected an integer from 1 to 4096"),
        (["--log-target", "syslog"], "Error: invalid value 'syslog' for '--log-target': expected auto, journal or stderr"),
        (["--state"], "Error: missing value for '--state'"),
        (["stray"], "Error: unexpected argument 'stray'"),
    ])
    func usageErrorsExitWithStatus2(arguments: [String], message: String) throws {
        let result = try run(Binaries.inboxd.path, arguments)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix(message + "\nUsage: inboxd "))
        #expect(result.stderr.hasSuffix("  See 'inboxd --help'.\n"))
        #expect(result.stdout.isEmpty)
    }

    @Test func helpGoesToStdout() throws {
        let result = try run(Binaries.inboxd.path, ["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("OVERVIEW: Deliver files dropped in an Inbox"))
        #expect(result.stdout.contains("\nUSAGE: inboxd [--config FILE]"))
    }

    @Test func badConfigFileIsReportedWithItsLine() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-conf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("inboxd.conf")
        try "[Agent]\nMaxConcurrent=lots\n".write(to: config, atomically: true, encoding: .utf8)
        let result = try run(Binaries.inboxd.path, ["--config", config.path, "--state", directory.path + "/state"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(config.path):2: "))
    }
}
