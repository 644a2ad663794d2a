import Foundation
import Testing

/// KeepFailedSec= and KeepUnhandledSec=: entries of failed/ and unhandled/ removed after their time, on a timer and at
/// start-up, each with one `expired` entry; links and FIFOs moved aside removed as entries, never followed.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct RetentionTests {
    static let expiredMessageID = "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c6a"

    static func microseconds(_ entry: [String: Any]) -> Int64 { Int64(entry[field: "__REALTIME_TIMESTAMP"] ?? "") ?? 0 }

    @Test func failedEntriesAndWhatWasMovedAsideGoAfterKeepFailedSec() throws {
        let world = try AgentHarness()
        try world.register("test.failing.\(world.tag)", contentTypes: "public.plain-text", exit: 1)
        let config = "[Agent]\nMaxAttempts=1\nKeepFailedSec=2s\n"
        try world.start(config: config)
        let secret = world.root.appendingPathComponent("secret.txt")
        try "not to be removed".write(to: secret, atomically: true, encoding: .utf8)
        let staging = world.root.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        #expect(symlink(secret.path, staging.appendingPathComponent("link.txt").path) == 0)
        #expect(mkfifo(staging.appendingPathComponent("pipe.txt").path, 0o644) == 0)
        for name in ["link.txt", "pipe.txt"] {
            #expect(rename(staging.appendingPathComponent(name).path, world.inbox.appendingPathComponent(name).path) == 0)
        }
        // An annotation too large for attributes: the file travels with a sidecar, which must go with it.
        let bad = world.root.appendingPathComponent("bad.txt")
        try Data("will fail".utf8).write(to: bad)
        let annotation = #"{"note":""# + String(repeating: "v", count: 6000) + #""}"#
        #expect(try world.inboxctl("send", ["--annotation", annotation, bad.path]).status == 0)
        let failed = try #require(world.waitForEvents("failed").first)
        let id = try #require(failed[field: "INBOX_DELIVERY_ID"])
        #expect(Set(world.allEntries(of: world.failedDirectory)).isSuperset(of: ["bad.txt", ".bad.txt.inbox-meta"]))

        let expired = try world.waitForEvents("expired", count: 3)
        #expect(expired.count == 3)
        #expect(expired.allSatisfy { $0[field: "MESSAGE_ID"] == Self.expiredMessageID })
        let kinds = Set(expired.compactMap { $0[field: "INBOX_FILE_KIND"] })
        #expect(kinds == ["regular file", "symbolic link", "FIFO"])
        let file = try #require(expired.first { $0[field: "INBOX_FILE_KIND"] == "regular file" })
        #expect(file[field: "INBOX_DELIVERY_ID"] == id)
        #expect(file[field: "INBOX_FILE"] == world.failedDirectory.appendingPathComponent("bad.txt").path)
        #expect(file[field: "INBOX_SOURCE_UID"] == String(getuid()))
        #expect(file[field: "INBOX_KEEP_SETTING"] == "KeepFailedSec=2s")
        #expect(file[field: "PRIORITY"] == "6")
        // Kept about 2 s: never less, and not much more than the timer's slack.
        let kept = Int64(file[field: "INBOX_KEPT_USEC"] ?? "") ?? 0
        #expect(kept >= 2_000_000 && kept < 10_000_000, "kept \(kept) µs")
        let between = Self.microseconds(file) - Self.microseconds(failed)
        #expect(between >= 1_900_000 && between < 10_000_000, "removed \(between) µs after it failed")
        #expect(world.allEntries(of: world.failedDirectory).isEmpty, "sidecars go with their files")
        #expect(try String(contentsOf: secret, encoding: .utf8) == "not to be removed", "the link was not followed")

        // inboxctl retry of the expired entry says it is gone, and why.
        let retry = try run(Binaries.inboxctl.path, ["retry", id, "--state", world.state.path, "--inbox", world.inbox.path,
                                                      "--config", world.root.appendingPathComponent("inboxd.conf").path])
        #expect(retry.status == 1)
        #expect(retry.stderr.contains("\(id) is gone: entries of failed/ are removed after KeepFailedSec=2s"),
                "\(retry.stderr)")
        #expect(world.contents(of: world.inbox).isEmpty)
    }

    @Test func whatExpiredWhileTheAgentWasStoppedGoesAtStartUp() throws {
        let world = try AgentHarness()
        try world.register("test.failing.\(world.tag)", contentTypes: "public.plain-text", exit: 1)
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        try world.drop("old.txt", contents: Array("old".utf8))
        try world.drop("new.txt", contents: Array("new".utf8))
        try world.drop("blob.unknownthing", contents: [0x00, 0xFF, 0x13, 0x37, 0x00, 0x01])
        try world.waitForEvents("failed", count: 2)
        try world.waitForEvents("unhandled")
        world.stop()
        let unhandled = world.unhandledDirectory
        #expect(world.contents(of: world.failedDirectory) == ["new.txt", "old.txt"])
        #expect(world.contents(of: unhandled) == ["blob.unknownthing"])
        // As the agent records it: put there two hours ago (its ctime is later, as after a copy of the state directory).
        let twoHoursAgo = String(Int64(Date().timeIntervalSince1970 * 1_000_000) - 7_200_000_000)
        try setAttribute("user.inboxd.kept", twoHoursAgo, on: world.failedDirectory.appendingPathComponent("old.txt"))
        try setAttribute("user.inboxd.kept", twoHoursAgo, on: unhandled.appendingPathComponent("blob.unknownthing"))

        try world.start(config: "[Agent]\nMaxAttempts=1\nKeepFailedSec=1h\nKeepUnhandledSec=90min\n")
        let expired = try world.waitForEvents("expired", count: 2)
        #expect(Set(expired.compactMap { $0[field: "INBOX_FILE"] }) == [
            world.failedDirectory.appendingPathComponent("old.txt").path, unhandled.appendingPathComponent("blob.unknownthing").path])
        #expect(Set(expired.compactMap { $0[field: "INBOX_KEEP_SETTING"] }) == ["KeepFailedSec=1h", "KeepUnhandledSec=1h 30min"])
        #expect(expired.allSatisfy { (Int64($0[field: "INBOX_KEPT_USEC"] ?? "") ?? 0) >= 7_200_000_000 })
        // The entry failed moments ago stays; nothing else expired.
        #expect(world.contents(of: world.failedDirectory) == ["new.txt"])
        #expect(world.contents(of: unhandled).isEmpty)
        #expect(world.events("expired", ["_PID=\(world.pid)"]).count == 2)
    }

    /// The context switches of every thread of a process so far: each wake-up of a sleeping thread is one.
    static func contextSwitches(_ pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return total + text.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: "\t").last ?? "") }.reduce(0, +)
        }
    }

    /// With entries that expire in an hour, an idle agent sleeps: one timer for the next expiry, no polling.
    @Test func anIdleAgentIsNotWokenBeforeTheNextExpiry() throws {
        let world = try AgentHarness()
        try world.register("test.failing.\(world.tag)", contentTypes: "public.plain-text", exit: 1)
        try world.start(config: "[Agent]\nMaxAttempts=1\nKeepFailedSec=1h\nKeepUnhandledSec=1h\n")
        try world.drop("kept.txt", contents: Array("kept".utf8))
        try world.waitForEvents("failed")
        // Past the one-off work after the agent falls idle (the memory trim a second later; on a loaded machine, what
        // it still had to do): a second without a switch, within ten.
        var before = Self.contextSwitches(world.pid)
        let settled = Date().addingTimeInterval(10)
        while Date() < settled {
            Thread.sleep(forTimeInterval: 1)
            let now = Self.contextSwitches(world.pid)
            if now == before { break }
            before = now
        }
        // Six seconds, and at most one wake-up: something the agent rightly answers may come once (a mount another
        // test makes wakes every agent's mount watch), while a timer polling every three seconds or more often
        // wakes it at least twice.
        Thread.sleep(forTimeInterval: 6)
        #expect(before > 0)
        #expect(Self.contextSwitches(world.pid) <= before + 1, "the idle agent woke up more than once")
        #expect(world.contents(of: world.failedDirectory) == ["kept.txt"])
    }
}
