import Foundation
import Testing

/// kill -9 of the agent with a package in its hands: in intake/, and while its handler runs. Nothing is lost: after
/// the restart the package is delivered whole, once, and a delivery whose handler was cut short is the next attempt,
/// marked as a redelivery.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: getuid() == 0, "the handler's identity and the tmpfs that holds a package in intake/ need root"))
struct PackageCrashTests {
    /// The agent killed while the package is in intake/. What keeps it there for the kill, without a race: its
    /// container Inbox is another filesystem (a tmpfs mounted on it), so the move on fails (EXDEV) and the package
    /// waits in intake/, the agent's already. Killed then, and started again once the mount is gone, the agent
    /// delivers it from intake/ whole.
    @Test func aPackageInIntakeWhenTheAgentIsKilledIsDeliveredWholeAfterTheRestart() throws {
        let world = try AgentHarness()
        defer { TestMounts.unmountAll(under: world.root) }
        let handler = "test.rtfd.\(world.tag)"
        try world.register(handler, exec: "\(try world.packageRecorder().path) %f", contentTypes: "com.apple.rtfd")
        try world.start()
        // A first package makes the handler's container.
        try world.dropPackage(try world.makePackage("First.rtfd", SamplePackages.rtfd))
        try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        try waitUntil("the first package is removed") { world.containerEntries(handler).isEmpty }
        world.stop()
        let containerInbox = world.containerInbox(handler)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: containerInbox.path)[.posixPermissions] as? Int)
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=\(String(mode, radix: 8))", "tmpfs",
                                       containerInbox.path]).status == 0)

        try world.start()
        var files = SamplePackages.rtfd
        files["Data/note.txt"] = Array("kept through a crash\n".utf8)
        try world.dropPackage(try world.makePackage("Kept.rtfd", files))
        let intake = world.state.appendingPathComponent("intake")
        try waitUntil("the package waits in intake/") {
            world.visibleEntries(of: intake).contains { name in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: intake.appendingPathComponent(name).path,
                                                      isDirectory: &isDirectory) && isDirectory.boolValue
            }
        }
        #expect(world.allEntries(of: world.inbox).isEmpty)
        let crashed = try #require(world.process)
        kill(crashed.processIdentifier, SIGKILL)
        crashed.waitUntilExit()
        // Still there, whole, as the agent's.
        let held = try #require(world.visibleEntries(of: intake).first)
        #expect(TreeSnapshot.of(intake.appendingPathComponent(held)).filter { $0.value.hasPrefix("file") }.count == files.count)
        TestMounts.unmountAll(under: containerInbox)

        try world.start()
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(finished.first?[field: "INBOX_EXIT_STATUS"] == "0")
        let recording = try #require(world.recording(named: "Kept.rtfd"))
        #expect(SamplePackages.recordedTree(recording) == SamplePackages.treeLines(files))
        // It never reached a handler before the kill: this is its first attempt.
        #expect(recording.contains("\nINBOX_ATTEMPT=1\n"))
        #expect(world.recordings().values.filter { $0.contains("\nINBOX_NAME=Kept.rtfd\n") }.count == 1)
        try waitUntil("the package is removed") { world.containerEntries(handler).isEmpty }
        #expect(world.allEntries(of: intake).isEmpty)
        #expect(world.visibleEntries(of: world.failedDirectory).isEmpty)
    }

    /// The agent killed while the package's handler runs (it blocks reading a FIFO nobody writes): the handler dies
    /// with it, the package waits whole in the container Inbox, and the next start delivers it again as attempt 2,
    /// marked redelivered, to a handler that sees the same tree.
    @Test func aPackageWhoseHandlerRunsWhenTheAgentIsKilledIsRedeliveredWhole() throws {
        let world = try AgentHarness()
        let handler = "test.crash.\(world.tag)"
        // In a directory of its own: the harness reads every file directly in output/ as a recording.
        let gates = world.output.appendingPathComponent("gates")
        try FileManager.default.createDirectory(at: gates, withIntermediateDirectories: true)
        #expect(mkfifo(gates.appendingPathComponent("gate").path, 0o666) == 0)
        let recorder = try world.packageRecorder()
        let script = try world.script("blocking-handler", """
            echo "start $$ $INBOX_ATTEMPT ${INBOX_REDELIVERED:-0}" >> "$OUTPUT_DIR/log"
            if [ "$INBOX_ATTEMPT" = 1 ]; then cat "$OUTPUT_DIR/gates/gate" > /dev/null; fi
            exec "\(recorder.path)" "$@"
            """)
        try world.register(handler, exec: "\(script.path) %f", contentTypes: "com.apple.rtfd")
        try world.start()
        var files = SamplePackages.rtfd
        files["Data/note.txt"] = Array("redelivered\n".utf8)
        try world.dropPackage(try world.makePackage("Running.rtfd", files))
        try waitUntil("the first attempt runs") { world.lines("log").count == 1 }
        let handlerPID = try #require(Int32(world.lines("log")[0].split(separator: " ")[1]))
        #expect(world.lines("log")[0].hasSuffix(" 1 0"))

        let crashed = try #require(world.process)
        kill(crashed.processIdentifier, SIGKILL)
        crashed.waitUntilExit()
        try waitUntil("the handler died with the agent", timeout: 5) { !CrashTests.isRunning(handlerPID) }
        #expect(world.visibleEntries(of: world.containerInbox(handler)) == ["Running.rtfd"])

        try world.start()
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(finished.first?[field: "INBOX_ATTEMPT"] == "2")
        #expect(finished.first?[field: "INBOX_REDELIVERED"] == "1")
        let log = world.lines("log")
        #expect(log.count == 2 && log[1].hasSuffix(" 2 1"), "\(log)")
        let recording = try #require(world.recording(named: "Running.rtfd"))
        #expect(recording.contains("\nINBOX_REDELIVERED=1\n"))
        #expect(recording.contains(#""attempt":2,"redelivered":true"#))
        #expect(SamplePackages.recordedTree(recording) == SamplePackages.treeLines(files))
        try waitUntil("the package is removed") { world.containerEntries(handler).isEmpty }
        #expect(world.visibleEntries(of: world.failedDirectory).isEmpty)
        #expect(world.events("violation").isEmpty)
    }
}
