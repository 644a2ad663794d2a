import Foundation
import Testing

/// A registration someone else could have written is refused, as cron and sudo refuse such files: the file, the
/// directories above it, the Exec= program and every directory and symlink on the program's path (docs/design.md,
/// Security model). inboxctl verify and the agent say the same `file: reason`.
@Suite(.enabled(if: getuid() == 0, "files owned by another user need root"))
struct RegistrationTrustTests {
    let directory: URL
    let handlers: URL

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-trust-\(UUID().uuidString)")
        handlers = directory.appendingPathComponent("handlers.d")
        try FileManager.default.createDirectory(at: handlers, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        chmod(handlers.path, 0o755)
    }

    /// Writes `handlers.d/test.trust.handler` running `exec` (mode 0644).
    @discardableResult
    func registration(exec: String) throws -> String {
        let url = handlers.appendingPathComponent("test.trust.handler")
        try "[Handler]\nIdentifier=test.trust\nExec=\(exec) %f\n[DocumentType]\nContentTypes=public.plain-text\n"
            .write(to: url, atomically: false, encoding: .utf8)
        chmod(url.path, 0o644)
        return url.path
    }

    /// An executable script at `path` (mode 0755 unless told).
    @discardableResult
    func program(_ path: URL, mode: mode_t = 0o755) throws -> String {
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "#!/bin/sh\nexit 0\n".write(to: path, atomically: false, encoding: .utf8)
        chmod(path.path, mode)
        return path.path
    }

    /// What `inboxctl verify --handlers handlers.d` prints, and its status.
    func verify() throws -> (status: Int32, stdout: String) {
        let result = try run(Binaries.inboxctl.path, ["verify", "--handlers", handlers.path])
        return (result.status, result.stdout)
    }

    @Test func aSafeRegistrationAndProgramPass() throws {
        let program = try program(directory.appendingPathComponent("bin/viewer"))
        try registration(exec: program)
        // A symlink to a safe program, itself in a safe directory, is fine too.
        symlink(program, directory.appendingPathComponent("bin/link").path)
        try registration(exec: directory.appendingPathComponent("bin/link").path)
        let result = try verify()
        #expect(result.status == 0)
        #expect(result.stdout == "1 registration, 0 warnings\n")
    }

    @Test func aWorldWritableRegistrationIsRefused() throws {
        let file = try registration(exec: "/bin/true")
        chmod(file, 0o666)
        let result = try verify()
        #expect(result.status == 1)
        #expect(result.stdout == "\(file): refused: registration \(file) is writable by everyone (mode 0666)\n")
        // Named on the command line, the same.
        let single = try run(Binaries.inboxctl.path, ["verify", file])
        #expect(single.status == 1)
        #expect(single.stdout == result.stdout)
    }

    @Test func aGroupWritableDirectoryIsRefused() throws {
        let file = try registration(exec: "/bin/true")
        #expect(chown(handlers.path, 0, 100) == 0)
        chmod(handlers.path, 0o775)
        let result = try verify()
        #expect(result.status == 1)
        #expect(result.stdout == "\(file): refused: directory \(handlers.path) is writable by group 100 (mode 0775)\n")
    }

    @Test func writableByRootsGroupIsAllowed() throws {
        let file = try registration(exec: "/bin/true")
        #expect(chown(file, 0, 0) == 0)
        chmod(file, 0o664)
        #expect(try verify().status == 0)
    }

    @Test func aProgramOwnedByAnotherUserIsRefused() throws {
        let program = try program(directory.appendingPathComponent("bin/viewer"))
        #expect(chown(program, 1000, 1000) == 0)
        let file = try registration(exec: program)
        let result = try verify()
        #expect(result.status == 1)
        #expect(result.stdout == "\(file): refused: Exec= program \(program): program \(program) is owned by uid 1000, not by root\n")
    }

    @Test func aProgramInAWorldWritableDirectoryIsRefused() throws {
        let bin = directory.appendingPathComponent("bin")
        let program = try program(bin.appendingPathComponent("viewer"))
        chmod(bin.path, 0o777)
        let file = try registration(exec: program)
        let result = try verify()
        #expect(result.status == 1)
        #expect(result.stdout == "\(file): refused: Exec= program \(program): directory \(bin.path) is writable by everyone (mode 0777)\n")
        // Sticky, as /tmp is, it is accepted: only an entry's owner may replace it there.
        chmod(bin.path, 0o1777)
        #expect(try verify().status == 0)
    }

    @Test func aSymlinkedProgramWhoseTargetIsUnsafeIsRefused() throws {
        let target = try program(directory.appendingPathComponent("elsewhere/viewer"), mode: 0o757)
        let link = directory.appendingPathComponent("bin/viewer")
        try FileManager.default.createDirectory(at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
        #expect(symlink(target, link.path) == 0)
        let file = try registration(exec: link.path)
        let result = try verify()
        #expect(result.status == 1)
        #expect(result.stdout == "\(file): refused: Exec= program \(link.path): program \(target) is writable by everyone (mode 0757)\n")
        // And through a symlinked directory whose target is writable by others.
        chmod(target, 0o755)
        let open = directory.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
        chmod(open.path, 0o777)
        try self.program(open.appendingPathComponent("viewer"))
        #expect(symlink(open.path, directory.appendingPathComponent("linked").path) == 0)
        try registration(exec: directory.appendingPathComponent("linked/viewer").path)
        #expect(try verify().stdout.contains("directory \(open.path) is writable by everyone (mode 0777)"))
    }

    /// The agent refuses it the same way: an error entry naming the file, and the handler is not used.
    @Test(.enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
    func theAgentRefusesAndSaysSo() throws {
        let world = try AgentHarness()
        try world.register("test.unsafe", contentTypes: "public.plain-text")
        chmod(world.handlerFile("test.unsafe").path, 0o646)
        try world.start()
        let path = world.handlerFile("test.unsafe").path
        let entry = try #require(try Journal.wait(for: ["_PID=\(world.pid)", "CONFIG_FILE=\(path)"]).first)
        #expect(entry["MESSAGE"] as? String == "\(path): refused: registration \(path) is writable by everyone (mode 0646)")
        #expect(entry["PRIORITY"] as? String == "3")
        try world.drop("note.txt", contents: Array("hello".utf8))
        try waitUntil("the file is parked") { world.contents(of: world.state.appendingPathComponent("unhandled")) == ["note.txt"] }
        #expect(world.recordings().isEmpty)
    }
}
