import Foundation
import Testing

/// User= in a registration: the handler runs as that user, or the delivery fails naming it. Root only:
/// as another user the tests are skipped with the reason shown.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct IdentityTests {
    static let isRoot = geteuid() == 0
    static let needsRoot: Comment = "only root runs a handler as another user"

    @Test(.enabled(if: isRoot, needsRoot)) func aHandlerRunsAsItsUser() throws {
        let nobody = try #require(getpwnam("nobody"), "this machine has no user 'nobody'")
        let uid = nobody.pointee.pw_uid, gid = nobody.pointee.pw_gid
        let world = try AgentHarness()
        let handler = "test.as-nobody.\(world.tag)"
        let script = try world.script("identity-handler", """
            echo "uid=$(id -u) groups=$(id -G) content=$(cat "$INBOX_FILE")"
            cp "$INBOX_FILE" "$INBOX_DOCUMENTS/kept.txt"
            """)
        try world.register(handler, exec: script.path, contentTypes: "public.plain-text", extraHandler: "User=nobody")
        try world.start()

        // Readable by its owner (root) only: the handler reads it through what the agent grants.
        let hidden = world.inbox.appendingPathComponent(".private.txt.part")
        try Data("for nobody".utf8).write(to: hidden)
        #expect(chmod(hidden.path, 0o600) == 0)
        #expect(rename(hidden.path, world.inbox.appendingPathComponent("private.txt").path) == 0)

        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == handler)
        let output = try Journal.wait(for: ["SYSLOG_IDENTIFIER=\(handler)"])
        #expect(output.first?[field: "MESSAGE"] == "uid=\(uid) groups=\(gid) content=for nobody")

        let documents = world.state.appendingPathComponent("containers/\(handler)/Documents")
        let owner = try FileManager.default.attributesOfItem(atPath: documents.path)[.ownerAccountID] as? NSNumber
        #expect(owner?.uint32Value == uid)
        let kept = documents.appendingPathComponent("kept.txt")
        #expect(try String(contentsOf: kept, encoding: .utf8) == "for nobody")
        let keptOwner = try FileManager.default.attributesOfItem(atPath: kept.path)[.ownerAccountID] as? NSNumber
        #expect(keptOwner?.uint32Value == uid)
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
    }

    @Test(.enabled(if: isRoot, needsRoot)) func anUnknownUserFailsTheDeliveryNamingTheUser() throws {
        let world = try AgentHarness()
        let handler = "test.no-user.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text", extraHandler: "User=no-such-user")
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        let registrationErrors = try Journal.wait(for: ["_PID=\(world.pid)", "CONFIG_FILE=\(world.handlerFile(handler).path)"])
        #expect(registrationErrors.first?[field: "MESSAGE"]?.contains("no-such-user") == true)

        try world.drop("for-nobody.txt", contents: Array("text".utf8))
        let failed = try world.waitForEvents("failed")
        #expect(failed.first?[field: "INBOX_HANDLER"] == handler)
        #expect(failed.first?[field: "INBOX_REASON"]?.contains("no-such-user") == true)
        #expect(world.contents(of: world.failedDirectory) == ["for-nobody.txt"])
        #expect(world.recordings().isEmpty)
        #expect(world.contents(of: world.containerInbox(handler)).isEmpty)
    }

    /// Group= alone does not make a handler root's: it keeps an identity of its own, in that group.
    @Test(.enabled(if: isRoot, needsRoot)) func groupWithoutUserKeepsAnIdentityOfItsOwn() throws {
        let group = try #require(getgrnam("nogroup"), "this machine has no group 'nogroup'")
        let gid = group.pointee.gr_gid
        let world = try AgentHarness()
        let handler = "test.in-group.\(world.tag)"
        let script = try world.script("group-handler", #"echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)""#)
        try world.register(handler, exec: script.path, contentTypes: "public.plain-text", extraHandler: "Group=nogroup")
        try world.start()
        try world.drop("grouped.txt", contents: Array("text".utf8))
        try world.waitForEvents("finished")
        let output = try #require(try Journal.wait(for: ["SYSLOG_IDENTIFIER=\(handler)"]).first?[field: "MESSAGE"])
        let uid = try #require(output.split(separator: " ").first.flatMap { UInt32($0.dropFirst("uid=".count)) })
        #expect(uid >= 0x7000_0000 && uid < 0x7001_0000, "\(output)")
        #expect(output.hasSuffix(" gid=\(gid) groups=\(gid)"), "\(output)")
    }
}
