import Foundation
import Testing

/// libmagic runs in a sandboxed child of the agent (`inboxd --content-sniffer`), never in the agent itself.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct SnifferTests {
    /// The agent's sniffer child: its pid, from /proc (its parent is the agent, its argv says what it is).
    static func snifferPID(of agent: Int32) -> Int32? {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
        return pids.first { pid in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  status.contains("\nPPid:\t\(agent)\n"),
                  let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: cmdline, as: UTF8.self).contains("\0--content-sniffer")
        }
    }

    static func status(_ pid: Int32, _ field: String) -> String? {
        let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        return text?.split(separator: "\n").first { $0.hasPrefix(field + ":") }
            .map { $0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    @Test func theSnifferRunsUnprivilegedWithNothingButItsChannel() throws {
        let world = try AgentHarness()
        try world.register("test.png.\(world.tag)", contentTypes: "public.png")
        try world.start()
        let sniffer = try #require(Self.snifferPID(of: world.pid), "the agent has a sniffer child")
        let uids = Self.status(sniffer, "Uid")?.split(separator: "\t").map(String.init) ?? []
        #expect(uids.count == 4 && !uids.contains("0"), "never root: \(uids)")
        if geteuid() == 0 {
            #expect(uids.first == String(0x7001_0000), "an identity of its own, outside the handlers' range")
        }
        #expect(Self.status(sniffer, "NoNewPrivs") == "1")
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(sniffer)/fd").sorted()
        #expect(descriptors == ["0", "1", "2"])
        let channel = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(sniffer)/fd/0")
        #expect(channel.hasPrefix("socket:"))
    }

    @Test func aSnifferThatDiesIsReplacedAndNoFileIsBlamed() throws {
        let world = try AgentHarness()
        let viewer = "test.png.\(world.tag)"
        try world.register(viewer, contentTypes: "public.png")
        try world.start()
        let first = try #require(Self.snifferPID(of: world.pid))
        kill(first, SIGKILL)
        try waitUntil("the killed sniffer is gone") { Self.snifferPID(of: world.pid) != first }

        try world.drop("snapshot", contents: pngBytes(width: 2, height: 2))
        let finished = try world.waitForEvents("finished").first
        #expect(finished?[field: "INBOX_TYPE_SOURCE"] == "content")
        #expect(finished?[field: "INBOX_CONTENT_TYPE"] == "public.png")
        let second = try #require(Self.snifferPID(of: world.pid))
        #expect(second != first)
        let messages = world.journal(["PRIORITY=4"]).compactMap { $0[field: "MESSAGE"] }
        #expect(messages.contains { $0.contains("content sniffer (pid \(first)) exited") }, "\(messages)")
        #expect(world.contents(of: world.failedDirectory).isEmpty)
    }

    @Test func aFileThatStallsTheSnifferIsRefusedAndTheNextOneIsServed() throws {
        let world = try AgentHarness()
        let viewer = "test.png.\(world.tag)"
        try world.register(viewer, contentTypes: "public.png")
        try world.start()
        // A stopped sniffer stands for one that libmagic keeps busy for ever.
        let stalled = try #require(Self.snifferPID(of: world.pid))
        kill(stalled, SIGSTOP)
        try world.drop("stalling", contents: pngBytes(width: 2, height: 2))
        let rejected = try world.waitForEvents("rejected").first
        #expect(rejected?[field: "INBOX_REASON"]?.contains("took longer than") == true, "\(String(describing: rejected))")
        #expect(world.contents(of: world.failedDirectory) == ["stalling"])
        let reason = attribute("user.inboxd.failure", of: world.failedDirectory.appendingPathComponent("stalling"))
        #expect(reason?.hasPrefix("unsniffable: ") == true)

        try world.drop("next", contents: pngBytes(width: 2, height: 2))
        let finished = try world.waitForEvents("finished").first
        #expect(finished?[field: "INBOX_HANDLER"] == viewer)
        #expect(finished?[field: "INBOX_TYPE_SOURCE"] == "content")
        #expect(Self.snifferPID(of: world.pid) != stalled)
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(stalled)"), "the stalled sniffer was killed and reaped")
    }

    /// Binary content that nothing but libmagic's whole database could name is not searched for under a concrete
    /// claim (the claim stands against "some data"), and that cheap path is counted in the status as `quick`;
    /// with no claim the database is searched (libmagic names formats shared-mime-info's rules miss).
    @Test func unnamedBinaryUnderAClaimSkipsLibmagicsDatabaseAndIsCounted() throws {
        let world = try AgentHarness()
        let viewer = "test.png.\(world.tag)"
        try world.register(viewer, contentTypes: "public.png")
        try world.start()
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let noise = (0..<2048).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        try world.drop("noise.png", contents: noise)
        let finished = try #require(try world.waitForEvents("finished").first)
        #expect(finished[field: "INBOX_HANDLER"] == viewer)
        #expect(finished[field: "INBOX_TYPE_SOURCE"] == "extension")
        try world.drop("noise", contents: noise)
        try waitUntil("both files are counted") {
            let text = try String(contentsOf: world.runtime.appendingPathComponent("status.json"), encoding: .utf8)
            return text.contains("\"quick\":{\"files\":1,") && text.contains("\"libmagic\":{\"files\":1,")
        }
        let status = try run(Binaries.inboxctl.path, ["status", "--runtime-dir", world.runtime.path]).stdout
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Sniff cost:") }, "\(status)")
        #expect(line.contains(", quick 1 ("), "\(line)")
        #expect(line.contains("libmagic 1 ("), "\(line)")
    }
}
