import Foundation
import Glibc
import Testing

/// Registrations change under a running agent: SIGHUP, edits in place, removal with work queued or running.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct ReloadTests {
    @Test func sighupReadsTheRegistrationsAgain() throws {
        let world = try AgentHarness()
        let handler = "test.hup.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        try world.start()
        let first = try world.waitForRegistrationLoads(1)
        #expect(first.first?[field: "INBOX_HANDLERS"] == handler)

        #expect(kill(world.pid, SIGHUP) == 0)
        let loads = try world.waitForRegistrationLoads(2)
        #expect(loads.count == 2)
        #expect(loads.last?[field: "INBOX_HANDLERS"] == handler)
        #expect(loads.last?[field: "SYSLOG_IDENTIFIER"] == "inboxd")
        // Still delivering after the reload.
        try world.drop("after-hup.txt", contents: Array("hi".utf8))
        #expect(try world.waitForEvents("finished").first?[field: "INBOX_HANDLER"] == handler)
    }

    /// defaults.conf is watched as handlers.d is: an editor's save (a new file renamed over it), its removal and a new
    /// one written in place each reload, and the next file goes where the new preferences say.
    @Test func editingDefaultsConfTakesEffectWithoutReload() throws {
        let world = try AgentHarness()
        let first = "test.a-pref.\(world.tag)", second = "test.b-pref.\(world.tag)"
        try world.register(first, contentTypes: "public.plain-text")
        try world.register(second, contentTypes: "public.plain-text")
        try world.start()
        let defaults = world.root.appendingPathComponent("defaults.conf")
        var delivered = 0
        func deliver(_ name: String) throws -> String? {
            try world.drop(name, contents: Array("x".utf8))
            delivered += 1
            return try world.waitForEvents("finished", count: delivered).last?[field: "INBOX_HANDLER"]
        }
        #expect(try deliver("tie.txt") == first)

        // An editor's save: the new text in a temporary file, renamed over the name.
        let temporary = world.root.appendingPathComponent(".defaults.conf.swp")
        try "[Defaults]\npublic.plain-text=\(second)\n".write(to: temporary, atomically: false, encoding: .utf8)
        #expect(rename(temporary.path, defaults.path) == 0)
        try world.waitForRegistrationLoads(2)
        #expect(try deliver("preferred.txt") == second)

        // Gone: the tie is back.
        try FileManager.default.removeItem(at: defaults)
        try world.waitForRegistrationLoads(3)
        #expect(try deliver("removed.txt") == first)

        // Written in place where there was none.
        #expect(FileManager.default.createFile(atPath: defaults.path, contents: Data("[Defaults]\npublic.plain-text=\(second)\n".utf8)))
        try world.waitForRegistrationLoads(4)
        #expect(try deliver("created.txt") == second)
    }

    @Test func editingARegistrationInPlaceTakesEffectWithoutRestart() throws {
        let world = try AgentHarness()
        let handler = "test.edited.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text")
        try world.start()
        try world.drop("before.txt", contents: Array("text".utf8))
        #expect(try world.waitForEvents("finished").first?[field: "INBOX_HANDLER"] == handler)

        // Rewrite the same file (same inode, truncated and written), as an editor saving in place would.
        let file = world.handlerFile(handler)
        let inode = try FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? Int
        let edited = try String(contentsOf: file, encoding: .utf8)
            .replacingOccurrences(of: "ContentTypes=public.plain-text", with: "ContentTypes=public.png")
        let handle = try FileHandle(forUpdating: file)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(edited.utf8))
        try handle.close()
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? Int == inode)
        try world.waitForRegistrationLoads(2)

        try world.drop("picture.png", contents: pngBytes(width: 1, height: 1))
        let finished = try world.waitForEvents("finished", count: 2)
        #expect(finished.last?[field: "INBOX_HANDLER"] == handler)
        #expect(finished.last?[field: "INBOX_CONTENT_TYPE"] == "public.png")
        // Text is no longer this handler's: it waits in unhandled/.
        try world.drop("after.txt", contents: Array("text".utf8))
        let unhandled = try world.waitForEvents("unhandled")
        #expect(unhandled.first?[field: "INBOX_CONTENT_TYPE"] == "public.plain-text")
        #expect(world.contents(of: world.unhandledDirectory) == ["after.txt"])
    }

    @Test func removingARegistrationParksItsQueuedFilesInUnhandled() throws {
        let world = try AgentHarness()
        let handler = "test.removed.\(world.tag)"
        let gate = try queueBehindAGate(world, handler: handler)
        defer { _ = FileManager.default.createFile(atPath: gate.path, contents: nil) }

        try FileManager.default.removeItem(at: world.handlerFile(handler))
        try world.waitForRegistrationLoads(2)
        // The two waiting files are not lost: kept in unhandled/ for a future registration.
        let unhandled = try world.waitForEvents("unhandled", count: 2)
        #expect(Set(unhandled.compactMap { $0[field: "INBOX_CONTENT_TYPE"] }) == ["public.plain-text"])
        let started = world.lines("started")
        #expect(started.count == 1)
        let all: Set<String> = ["one.txt", "two.txt", "three.txt"]
        #expect(Set(world.contents(of: world.unhandledDirectory)) == all.subtracting(started))

        // The one already running finishes normally.
        #expect(FileManager.default.createFile(atPath: gate.path, contents: nil))
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == handler)
        #expect(world.lines("done") == started)
    }

    @Test func removingARegistrationHandsItsQueuedFilesToTheNextHandler() throws {
        let world = try AgentHarness()
        let handler = "test.removed.\(world.tag)"
        let alternate = "test.alternate.\(world.tag)"
        try world.register(alternate, contentTypes: "public.plain-text", rank: "Alternate")
        let gate = try queueBehindAGate(world, handler: handler)
        defer { _ = FileManager.default.createFile(atPath: gate.path, contents: nil) }

        try FileManager.default.removeItem(at: world.handlerFile(handler))
        let rerouted = try world.waitForEvents("finished", ["INBOX_HANDLER=\(alternate)"], count: 2)
        let started = world.lines("started")
        #expect(started.count == 1)
        let all: Set<String> = ["one.txt", "two.txt", "three.txt"]
        let names = Set(world.recordings().values.compactMap { record in
            record.split(separator: "\n").first { $0.hasPrefix("INBOX_NAME=") }.map { String($0.dropFirst(11)) }
        })
        #expect(names == all.subtracting(started))
        #expect(rerouted.allSatisfy { $0[field: "INBOX_CONTENT_TYPE"] == "public.plain-text" })
        #expect(world.contents(of: world.unhandledDirectory).isEmpty)

        #expect(FileManager.default.createFile(atPath: gate.path, contents: nil))
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(world.lines("done") == started)
    }

    /// The handler of a removed registration finished after the removal: its Inbox copy is still cleaned up,
    /// so a restart does not deliver the file a second time.
    @Test func aRunningDeliveryOfARemovedRegistrationIsCleanedUp() throws {
        let world = try AgentHarness()
        let handler = "test.removed-running.\(world.tag)"
        let gate = try queueBehindAGate(world, handler: handler)
        defer { _ = FileManager.default.createFile(atPath: gate.path, contents: nil) }
        try FileManager.default.removeItem(at: world.handlerFile(handler))
        try world.waitForEvents("unhandled", count: 2)

        #expect(FileManager.default.createFile(atPath: gate.path, contents: nil))
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        try waitUntil("the handled file's Inbox copy is removed") {
            world.contents(of: world.containerInbox(handler)).isEmpty
        }
    }

    /// Registers `handler` (MaxConcurrent=1) with a script that waits for a gate file, drops three text
    /// files, and returns once one is running and the other two wait in its container Inbox.
    private func queueBehindAGate(_ world: AgentHarness, handler: String) throws -> URL {
        let gate = world.root.appendingPathComponent("gate")
        let script = try world.script("gated-handler", """
            echo "$INBOX_NAME" >> "$OUTPUT_DIR/started"
            while [ ! -e "\(gate.path)" ]; do sleep 0.05; done
            echo "$INBOX_NAME" >> "$OUTPUT_DIR/done"
            """)
        try world.register(handler, exec: script.path, contentTypes: "public.plain-text", extraHandler: "MaxConcurrent=1")
        try world.start(["--max-concurrent", "4"])
        for name in ["one.txt", "two.txt", "three.txt"] {
            try world.drop(name, contents: Array(name.utf8))
        }
        try waitUntil("one file runs and two wait for the handler") {
            world.lines("started").count == 1 && world.contents(of: world.containerInbox(handler)).count == 3
        }
        return gate
    }
}
