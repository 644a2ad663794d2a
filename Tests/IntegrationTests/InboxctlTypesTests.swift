import Foundation
import Testing

/// `inboxctl types` against real registration directories.
@Suite struct InboxctlTypesTests: InspectsWorkspace {
    let workspace: InspectWorkspace

    init() throws {
        workspace = try InspectWorkspace()
    }

    /// A shared-mime-info directory of our own, so the dynamic types do not depend on the host's database.
    func mimeEnvironment() throws -> [String: String] {
        let share = directory.appendingPathComponent("share")
        let mime = share.appendingPathComponent("mime")
        try FileManager.default.createDirectory(at: mime, withIntermediateDirectories: true)
        _ = try write("globs2", "50:application/x-inboxtest:*.inboxtest\n50:image/png:*.png\n", in: mime)
        _ = try write("subclasses", "", in: mime)
        _ = try write("aliases", "application/x-inboxtest-old application/x-inboxtest\n", in: mime)
        return ["XDG_DATA_HOME": share.path, "XDG_DATA_DIRS": share.path, "PATH": "/usr/bin:/bin"]
    }

    @Test func aTypeShowsItsChainTagsAndOrigin() throws {
        let result = try inboxctl(["types", "public.png"] + agentOptions)
        #expect(result.status == 0)
        #expect(result.stdout == """
            Identifier:   public.png
            Description:  PNG image
            Conformance:  public.png public.image public.data public.content public.item
            Extensions:   png
            MIME types:   image/png
            Declared:     built in

            """)
        let parsed = try #require(try json(try inboxctl(["types", "public.png", "--json"] + agentOptions).stdout) as? [String: Any])
        #expect(parsed["identifier"] as? String == "public.png")
        #expect(parsed["conformanceChain"] as? [String] == ["public.png", "public.image", "public.data", "public.content", "public.item"])
        #expect(parsed["declared"] as? String == "built in")
        // A MIME type names the same type.
        #expect(try inboxctl(["types", "image/png"] + agentOptions).stdout == result.stdout)
    }

    @Test func aDeclaredTypeSaysWhereAndADynamicOneWhence() throws {
        try register("test.profiles", """
            [DocumentType]
            ContentTypes=test.profile
            [ExportedType]
            Identifier=test.profile
            Description=Test profile
            ConformsTo=public.json
            Extensions=testprofile

            """)
        let environment = try mimeEnvironment()
        let declared = try inboxctl(["types", "test.profile"] + agentOptions, environment: environment)
        #expect(declared.status == 0)
        #expect(declared.stdout == """
            Identifier:   test.profile
            Description:  Test profile
            Conformance:  test.profile public.json public.text public.data public.content public.item
            Extensions:   testprofile
            MIME types:   none
            Declared:     exported by \(handlers.path)/test.profiles.handler:6

            """)

        let dynamic = try inboxctl(["types", "dyn.mime.application.x-inboxtest"] + agentOptions, environment: environment)
        #expect(dynamic.status == 0)
        #expect(dynamic.stdout == """
            Identifier:   dyn.mime.application.x-inboxtest
            Description:  application/x-inboxtest
            Conformance:  dyn.mime.application.x-inboxtest public.data public.item
            Extensions:   inboxtest
            MIME types:   application/x-inboxtest application/x-inboxtest-old
            Declared:     dynamic, from shared-mime-info

            """)
        // Its MIME type, and an alias of it, name it too.
        for name in ["application/x-inboxtest", "application/x-inboxtest-old"] {
            #expect(try inboxctl(["types", name] + agentOptions, environment: environment).stdout == dynamic.stdout)
        }
        // Without that MIME type on the host, the identifier names nothing.
        let unknown = try inboxctl(["types", "dyn.mime.application.x-inboxtest-other"] + agentOptions, environment: environment)
        #expect(unknown.status == 1)
    }

    @Test func anUnknownTypeFailsWithASuggestion() throws {
        let result = try inboxctl(["types", "public.pnj"] + agentOptions)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "inboxctl: unknown type 'public.pnj'; did you mean 'public.png'?\n")
        let far = try inboxctl(["types", "nothing.like.it"] + agentOptions)
        #expect(far.status == 1)
        #expect(far.stderr == "inboxctl: unknown type 'nothing.like.it'\n")
    }

    @Test func theListAndTheTree() throws {
        let list = try inboxctl(["types"] + agentOptions)
        #expect(list.status == 0)
        let pngLine = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix("public.png ") })
        #expect(pngLine.hasSuffix(" PNG image"))
        let array = try #require(try json(try inboxctl(["types", "--json"] + agentOptions).stdout) as? [[String: Any]])
        #expect(array.contains { $0["identifier"] as? String == "public.png" && $0["description"] as? String == "PNG image" })

        let tree = try inboxctl(["types", "--tree"] + agentOptions).stdout.split(separator: "\n").map(String.init)
        #expect(tree.first == "public.item (Item)")
        #expect(tree.contains("public.content (Content)"))
        // public.png conforms to public.image, which is both data and content: it is under each.
        #expect(tree.filter { $0.trimmingCharacters(in: .whitespaces) == "public.png (PNG image)" }.count >= 2)
        #expect(tree.contains("    public.image (Image)"))

        let image = try inboxctl(["types", "public.image", "--tree"] + agentOptions).stdout.split(separator: "\n")
        #expect(image.first == "public.image (Image)")
        #expect(image.contains("  public.png (PNG image)"))
        let nested = try #require(try json(try inboxctl(["types", "public.image", "--tree", "--json"] + agentOptions).stdout)
            as? [[String: Any]])
        let children = try #require(nested.first?["children"] as? [[String: Any]])
        #expect(children.contains { $0["identifier"] as? String == "public.png" })
    }
}
