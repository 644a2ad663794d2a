import Foundation
import Testing

/// `inboxctl info` against real registration directories and real files.
@Suite struct InboxctlInfoTests: InspectsWorkspace {
    let workspace: InspectWorkspace

    init() throws {
        workspace = try InspectWorkspace()
    }

    @Test func aPNGNamedPNGIsTypedByItsExtension() throws {
        try register("test.png-viewer", "[DocumentType]\nName=PNG\nContentTypes=public.png\nIconFiles=png-44.png gone.png\n")
        _ = try write("png-44.png", bytes: pngBytes(width: 1, height: 1))
        try FileManager.default.moveItem(at: directory.appendingPathComponent("png-44.png"),
                                         to: handlers.appendingPathComponent("png-44.png"))
        let photo = try write("photo.png", bytes: pngBytes(width: 2, height: 2))
        let result = try inboxctl(["info", photo.path] + agentOptions)
        #expect(result.status == 0)
        #expect(result.stdout == """
            Name:         photo.png
            URL:          file://\(photo.path)
            Type:         public.png (PNG image)
            Conformance:  public.png public.image public.data public.content public.item
            MIME type:    image/png
            Decided by:   extension
            Content:      image/png (public.png)
            Icons:        \(handlers.path)/png-44.png \(handlers.path)/gone.png (missing)
            Handlers:
              * 1  test.png-viewer  Default    public.png  distance 0
              Chosen: test.png-viewer (only candidate)

            """)
        let parsed = try #require(try json(try inboxctl(["info", "--json", photo.path] + agentOptions).stdout) as? [[String: Any]])
        let report = try #require(parsed.first)
        #expect(report["typeSource"] as? String == "extension")
        #expect(report["url"] as? String == "file://" + photo.path)
        let icons = try #require(report["icons"] as? [[String: Any]])
        #expect(icons.map { $0["exists"] as? Bool } == [true, false])
    }

    @Test func anExecutableNamedPNGIsTypedByItsContent() throws {
        let fake = directory.appendingPathComponent("photo.png")
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: fake.path)
        let result = try inboxctl(["info", fake.path] + agentOptions)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Type:         public.unix-executable (Unix executable)\n"))
        #expect(result.stdout.contains("Decided by:   content\n"))
        #expect(result.stdout.contains(
            "Mismatch:     its name says public.png but the content is public.unix-executable; typed by its content\n"))
        #expect(result.stdout.hasSuffix("Handlers:\n  none (no handler for public.unix-executable)\n"))
        let report = try #require((try json(try inboxctl(["info", "--json", fake.path] + agentOptions).stdout) as? [[String: Any]])?.first)
        let mismatch = try #require(report["mismatch"] as? [String: Any])
        #expect(mismatch["claimed"] as? String == "public.png")
        #expect(mismatch["claimSource"] as? String == "extension")
        #expect(mismatch["contentWon"] as? Bool == true)
        #expect(report["chosen"] is NSNull)
    }

    @Test func theContentTypeAttributeDecides() throws {
        let note = try write("note.dat", "just some words\n")
        try setAttribute("user.inbox.content-type", "public.plain-text", on: note)
        let report = try #require((try json(try inboxctl(["info", "--json", note.path] + agentOptions).stdout) as? [[String: Any]])?.first)
        #expect(report["contentType"] as? String == "public.plain-text")
        #expect(report["typeSource"] as? String == "attribute")
        #expect(report["mimeType"] as? String == "text/plain")
    }

    @Test func eachFileIsReportedAndAFailureIsExitOne() throws {
        let good = try write("a.txt", "text\n")
        let link = directory.appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: good.path)
        let result = try inboxctl(["info", "--json", directory.appendingPathComponent("missing").path, link.path, good.path,
                                   directory.path] + agentOptions)
        #expect(result.status == 1)
        #expect(result.stderr == """
            inboxctl: \(directory.path)/missing: cannot open: No such file or directory
            inboxctl: \(link.path): is a symbolic link

            """)
        let reports = try #require(try json(result.stdout) as? [[String: Any]])
        #expect(reports.map { $0["name"] as? String } == ["a.txt", directory.lastPathComponent])
        // A directory is looked at as a package document would be: this one's name is no package type's.
        #expect((reports.last?["notes"] as? [String])?.contains("a directory whose name has no package type's extension: "
                                                                  + "from a drop Inbox the agent would move it aside to failed/") == true,
                "\(result.stdout)")
    }

    @Test func aHardLinkIsShownWithTheAgentsRefusal() throws {
        let file = try write("linked.txt", "text\n")
        try FileManager.default.linkItem(at: file, to: directory.appendingPathComponent("other.txt"))
        let result = try inboxctl(["info", file.path] + agentOptions)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Note:         it has 2 links: from a drop Inbox the agent would refuse it (a hard link) "
            + "and move it aside to failed/\n"))
    }
}
