import Foundation
import Testing

/// `Unit=NAME@.service` registrations where systemd is not PID 1 (this host; the container tier checks them under a
/// real systemd): refused at their line by the agent and by `inboxctl verify`, while every other registration works.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: !FileManager.default.fileExists(atPath: "/run/systemd/system"),
                "systemd is PID 1 here: a Unit= registration is accepted (the container tier checks that case)"))
struct UnitHandlerTests {
    static let refusal = "Unit= needs systemd as the service manager (PID 1), and this system was not booted with it "
        + "(sd_booted(3)); use Exec= here"

    func writeUnitRegistration(in world: AgentHarness) throws -> URL {
        let url = world.handlers.appendingPathComponent("photos.handler")
        try world.write("""
            [Handler]
            Identifier=test.unit.\(world.tag)
            Unit=inboxd-photos@.service
            [DocumentType]
            ContentTypes=public.plain-text
            Rank=Owner
            """, to: url)
        return url
    }

    @Test func aUnitRegistrationIsRefusedAtItsLineAndOthersKeepWorking() throws {
        let world = try AgentHarness()
        let good = "test.good.\(world.tag)"
        try world.register(good, contentTypes: "public.plain-text")
        let unit = try writeUnitRegistration(in: world)
        try world.start()
        let errors = try Journal.wait(for: ["_PID=\(world.pid)", "CONFIG_FILE=\(unit.path)"])
        #expect(errors.first?["CONFIG_LINE"] as? String == "3")
        #expect(errors.first?["MESSAGE"] as? String == "\(unit.path):3: \(Self.refusal)")
        // The Owner that was refused takes nothing: the other handler gets the file.
        try world.drop("note.txt", contents: Array("ok".utf8))
        let finished = try Journal.wait(for: ["_PID=\(world.pid)", "INBOX_EVENT=finished"])
        #expect(finished.first?["INBOX_HANDLER"] as? String == good)
        #expect(finished.first?["INBOX_UNIT"] == nil)
        #expect(world.recordings().count == 1)
    }

    @Test func verifySaysWhy() throws {
        let world = try AgentHarness()
        let unit = try writeUnitRegistration(in: world)
        let result = try run(Binaries.inboxctl.path, ["verify", "--handlers", world.handlers.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("\(unit.path):3: \(Self.refusal)\n"), "\(result.stdout)")
        let single = try run(Binaries.inboxctl.path, ["verify", unit.path])
        #expect(single.status == 1)
        #expect(single.stdout.contains("\(unit.path):3: \(Self.refusal)\n"), "\(single.stdout)")
    }
}
