import Foundation
import Testing

/// Which handler gets a file: rank, type specificity, defaults.conf, ties, the explicit content type.
/// The chosen handler is the one named by the finished entry's INBOX_HANDLER.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct SelectionTests {
    @Test func ownerBeatsDefaultBeatsAlternate() throws {
        let world = try AgentHarness()
        // Identifiers sort against rank, so a tie-break by name would choose the wrong one.
        let owner = "test.c-owner.\(world.tag)", byDefault = "test.b-default.\(world.tag)"
        let alternate = "test.a-alternate.\(world.tag)"
        try world.register(owner, contentTypes: "public.plain-text", rank: "Owner")
        try world.register(byDefault, contentTypes: "public.plain-text", rank: "Default")
        try world.register(alternate, contentTypes: "public.plain-text", rank: "Alternate")
        try world.start()

        try world.drop("one.txt", contents: Array("1".utf8))
        #expect(try world.waitForEvents("finished", count: 1).last?[field: "INBOX_HANDLER"] == owner)

        try FileManager.default.removeItem(at: world.handlerFile(owner))
        try world.waitForRegistrationLoads(2)
        try world.drop("two.txt", contents: Array("2".utf8))
        #expect(try world.waitForEvents("finished", count: 2).last?[field: "INBOX_HANDLER"] == byDefault)

        try FileManager.default.removeItem(at: world.handlerFile(byDefault))
        try world.waitForRegistrationLoads(3)
        try world.drop("three.txt", contents: Array("3".utf8))
        #expect(try world.waitForEvents("finished", count: 3).last?[field: "INBOX_HANDLER"] == alternate)
    }

    @Test func theMoreSpecificTypeWinsAtEqualRank() throws {
        let world = try AgentHarness()
        let image = "test.a-image.\(world.tag)", png = "test.z-png.\(world.tag)"
        try world.register(image, contentTypes: "public.image")
        try world.register(png, contentTypes: "public.png")
        try world.start()

        try world.drop("picture.png", contents: pngBytes(width: 2, height: 2))
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == png)
        #expect(finished.first?[field: "INBOX_CONTENT_TYPE"] == "public.png")
        // Another image type still reaches the general handler.
        try world.drop("photo.jpg", contents: [0xFF, 0xD8, 0xFF, 0xE0])
        let jpeg = try world.waitForEvents("finished", ["INBOX_CONTENT_TYPE=public.jpeg"])
        #expect(jpeg.first?[field: "INBOX_HANDLER"] == image)
    }

    @Test func defaultsConfOverridesRank() throws {
        let world = try AgentHarness()
        let owner = "test.png-owner.\(world.tag)", alternate = "test.png-alternate.\(world.tag)"
        try world.register(owner, contentTypes: "public.png", rank: "Owner")
        try world.register(alternate, contentTypes: "public.png", rank: "Alternate")
        try "[Defaults]\npublic.png=\(alternate)\n".write(to: world.root.appendingPathComponent("defaults.conf"),
                                                           atomically: true, encoding: .utf8)
        try world.start()

        try world.drop("picture.png", contents: pngBytes(width: 2, height: 2))
        #expect(try world.waitForEvents("finished").first?[field: "INBOX_HANDLER"] == alternate)
        // The preference is for PNG only: text goes by rank.
        let text = "test.text.\(world.tag)"
        try world.register(text, contentTypes: "public.plain-text", rank: "Alternate")
        try world.waitForRegistrationLoads(2)
        try world.drop("note.txt", contents: Array("text".utf8))
        #expect(try world.waitForEvents("finished", ["INBOX_CONTENT_TYPE=public.plain-text"]).first?[field: "INBOX_HANDLER"] == text)
        #expect(world.events("finished", ["INBOX_HANDLER=\(owner)"]).isEmpty)
    }

    /// The notice depends on the registrations alone: once per type per load, not once per file.
    @Test func aTieGoesToTheSmallerIdentifierEveryTimeWithANoticeOncePerLoad() throws {
        let world = try AgentHarness()
        let smaller = "test.a-tie.\(world.tag)", larger = "test.b-tie.\(world.tag)"
        // Written in the other order, so file order cannot be what decides.
        try world.register(larger, contentTypes: "public.plain-text")
        try world.register(smaller, contentTypes: "public.plain-text")
        try world.start()

        let count = 5
        for index in 0..<count {
            try world.drop("tie-\(index).txt", contents: Array("\(index)".utf8))
        }
        let finished = try world.waitForEvents("finished", count: count)
        #expect(finished.allSatisfy { $0[field: "INBOX_HANDLER"] == smaller })
        #expect(world.recordings().count == count)

        // Logged before the first file's finished entry, which is in the journal already.
        let tie = ["_PID=\(world.pid)", "INBOX_CANDIDATES=\(smaller) \(larger)"]
        #expect(Journal.entries(tie).count == 1)
        // After a reload (a registration added), the first file of the type says it again, once.
        try world.register("test.png.\(world.tag)", contentTypes: "public.png")
        try world.waitForRegistrationLoads(2)
        for index in 0..<2 {
            try world.drop("again-\(index).txt", contents: Array("\(index)".utf8))
        }
        try world.waitForEvents("finished", count: count + 2)
        let notices = Journal.entries(tie)
        #expect(notices.count == 2)
        for notice in notices {
            #expect(notice[field: "PRIORITY"] == "5")
            #expect(notice[field: "INBOX_HANDLER"] == smaller)
            #expect(notice[field: "INBOX_CONTENT_TYPE"] == "public.plain-text")
            #expect(notice[field: "MESSAGE"]?.contains(smaller) == true)
        }
    }

    @Test func theContentTypeAttributeOverridesTheExtension() throws {
        let world = try AgentHarness()
        let text = "test.text.\(world.tag)", png = "test.png.\(world.tag)"
        try world.register(text, contentTypes: "public.plain-text")
        try world.register(png, contentTypes: "public.png", rank: "Owner")
        try world.start()

        try world.drop("x.png", contents: Array("not a picture".utf8), attributes: ["user.inbox.content-type": "public.plain-text"])
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == text)
        #expect(finished.first?[field: "INBOX_CONTENT_TYPE"] == "public.plain-text")
        let record = try #require(world.recordings().values.first)
        #expect(record.contains("INBOX_CONTENT_TYPE=public.plain-text"))
        #expect(record.contains("INBOX_NAME=x.png"))
    }
}
