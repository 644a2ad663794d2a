import Foundation
import Testing

/// The handlers.d search path: the first directory holding a file name wins; /dev/null masks.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct SearchPathTests {
    @Test func theFirstDirectoryWinsByFileName() throws {
        let world = try AgentHarness()
        let second = world.root.appendingPathComponent("handlers-2.d")
        try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
        let first = "test.first.\(world.tag)", shadowed = "test.shadowed.\(world.tag)"
        // Same file name in both; the shadowed one would win on rank if it were loaded.
        try world.write(world.registrationText(first, exec: "\(world.recorderURL.path) %f",
                                               contentTypes: "public.plain-text", rank: "Alternate"),
                        to: world.handlers.appendingPathComponent("viewer.handler"))
        try world.write(world.registrationText(shadowed, exec: "\(world.recorderURL.path) %f",
                                               contentTypes: "public.plain-text", rank: "Owner"),
                        to: second.appendingPathComponent("viewer.handler"))
        // A different name in the second directory is loaded as usual.
        let other = "test.other.\(world.tag)"
        try world.register(other, exec: "\(world.recorderURL.path) %f", contentTypes: "public.png", in: second)
        try world.start(["--handlers", second.path])

        let loaded = try world.waitForRegistrationLoads(1)
        let handlers = Set((loaded.first?[field: "INBOX_HANDLERS"] ?? "").split(separator: " ").map(String.init))
        #expect(handlers == [first, other])
        try world.drop("note.txt", contents: Array("text".utf8))
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == first)
        try world.drop("image.png", contents: pngBytes(width: 1, height: 1))
        #expect(try world.waitForEvents("finished", ["INBOX_HANDLER=\(other)"]).count == 1)
        #expect(world.events("finished", ["INBOX_HANDLER=\(shadowed)"]).isEmpty)
    }

    @Test func aSymlinkToDevNullMasksTheNameFurtherDown() throws {
        let world = try AgentHarness()
        let second = world.root.appendingPathComponent("handlers-2.d")
        try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
        let masked = "test.masked.\(world.tag)"
        try world.write(world.registrationText(masked, exec: "\(world.recorderURL.path) %f", contentTypes: "public.plain-text"),
                        to: second.appendingPathComponent("text.handler"))
        try FileManager.default.createSymbolicLink(atPath: world.handlers.appendingPathComponent("text.handler").path,
                                                   withDestinationPath: "/dev/null")
        try world.start(["--handlers", second.path])

        let loaded = try world.waitForRegistrationLoads(1)
        let handlers = loaded.first?[field: "INBOX_HANDLERS"] ?? ""
        #expect(handlers.isEmpty, "only the masked registration exists, yet loaded: \(handlers)")
        #expect((loaded.first?[field: "MESSAGE"])?.contains("1 masked") == true)
        // Nothing handles text now: the file waits in unhandled/.
        try world.drop("note.txt", contents: Array("text".utf8))
        let unhandled = try world.waitForEvents("unhandled")
        #expect(unhandled.first?[field: "INBOX_CONTENT_TYPE"] == "public.plain-text")
        #expect(world.contents(of: world.unhandledDirectory) == ["note.txt"])
        #expect(world.recordings().isEmpty)
        #expect(world.events("finished").isEmpty)
    }
}
