import Foundation
import Testing

/// `inboxctl handlers` against real registration directories and real files.
@Suite struct InboxctlHandlersTests: InspectsWorkspace {
    let workspace: InspectWorkspace

    init() throws {
        workspace = try InspectWorkspace()
    }

    @Test func theRegistrationsWithTheirStates() throws {
        try register("test.active", "[DocumentType]\nName=Text\nContentTypes=public.plain-text\nRank=Owner\nRole=Editor\n")
        _ = try write("test.broken.handler", "[Handler]\nExec=/bin/true\n\n[DocumentType]\nContentTypes=public.png\nRank=Supreme\n",
                      in: handlers)
        try FileManager.default.createSymbolicLink(atPath: handlers.appendingPathComponent("test.masked.handler").path,
                                                   withDestinationPath: "/dev/null")
        let result = try inboxctl(["handlers"] + agentOptions)
        #expect(result.status == 0)
        #expect(result.stdout == """
            test.active  active  \(handlers.path)/test.active.handler
              Text: public.plain-text (Owner, Editor)
            test.broken  broken  \(handlers.path)/test.broken.handler
              error: \(handlers.path)/test.broken.handler:6: invalid Rank= 'Supreme': expected Owner, Default, Alternate or None
            test.masked  masked  \(handlers.path)/test.masked.handler

            """)
        let entries = try #require(try json(try inboxctl(["handlers", "--json"] + agentOptions).stdout) as? [[String: Any]])
        #expect(entries.map { $0["state"] as? String } == ["active", "broken", "masked"])
        #expect((entries[1]["error"] as? String)?.hasPrefix("\(handlers.path)/test.broken.handler:6: ") == true)
        let types = try #require(entries[0]["documentTypes"] as? [[String: Any]])
        #expect(types.first?["contentTypes"] as? [String] == ["public.plain-text"])
    }

    @Test func theOpenInListRanksOwnerAboveDefault() throws {
        // Identifiers sort against rank, so a tie-break by name would put them the other way round.
        try register("test.a-default", "[DocumentType]\nContentTypes=public.png\nRank=Default\n")
        try register("test.z-owner", "[DocumentType]\nContentTypes=public.image\nRank=Owner\n")
        try register("test.m-alternate", "[DocumentType]\nContentTypes=public.data\nRank=Alternate\n")
        let photo = try write("photo.png", bytes: pngBytes(width: 2, height: 2))
        let result = try inboxctl(["handlers", photo.path] + agentOptions)
        #expect(result.status == 0)
        #expect(result.stdout == """
            Handlers for photo.png (public.png):
              * 1  test.z-owner      Owner      public.image  distance 1
                2  test.a-default    Default    public.png    distance 0
                3  test.m-alternate  Alternate  public.data   distance 2
              Chosen: test.z-owner (rank Owner)

            """)
        let parsed = try #require(try json(try inboxctl(["handlers", "--type", "public.png", "--json"] + agentOptions).stdout)
            as? [String: Any])
        #expect(parsed["chosen"] as? String == "test.z-owner")
        #expect(parsed["reason"] as? String == "rank Owner")
        let candidates = try #require(parsed["candidates"] as? [[String: Any]])
        #expect(candidates.map { $0["handler"] as? String } == ["test.z-owner", "test.a-default", "test.m-alternate"])
        #expect(candidates.map { $0["distance"] as? Int } == [1, 0, 2])

        // defaults.conf outranks rank, and says so.
        _ = try write("defaults.conf", "[Defaults]\npublic.image=test.a-default\n")
        let preferred = try inboxctl(["handlers", "--type", "public.png"] + agentOptions)
        #expect(preferred.stdout.contains("  * 1  test.a-default    Default    public.png    distance 0  preferred\n"))
        #expect(preferred.stdout.hasSuffix("  Chosen: test.a-default (preferred in defaults.conf)\n"))
    }
}
