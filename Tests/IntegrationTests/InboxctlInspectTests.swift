import Foundation
import Testing

/// `inboxctl types`, `info` and `handlers` against real registration directories and real files.
@Suite struct InboxctlInspectTests {
    let directory: URL
    let handlers: URL
    /// An empty inboxd.conf and a defaults.conf that may not exist: the host's /etc/inboxd never takes part.
    let agentOptions: [String]

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxctl-inspect-\(UUID().uuidString)")
        handlers = directory.appendingPathComponent("handlers.d")
        try FileManager.default.createDirectory(at: handlers, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("inboxd.conf")
        try "".write(to: config, atomically: true, encoding: .utf8)
        agentOptions = ["--config", config.path, "--handlers", handlers.path,
                        "--defaults", directory.appendingPathComponent("defaults.conf").path]
    }

    func write(_ name: String, _ text: String, in folder: URL? = nil) throws -> URL {
        let url = (folder ?? directory).appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func write(_ name: String, bytes: [UInt8]) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    func register(_ identifier: String, _ sections: String) throws {
        _ = try write("\(identifier).handler", "[Handler]\nIdentifier=\(identifier)\nExec=/bin/true %f\n" + sections,
                      in: handlers)
    }

    func inboxctl(_ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.inboxctl.path, arguments, environment: environment)
    }

    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    // MARK: Help and usage errors

    static let agentOptionsHelp = """
          --config FILE           The agent's configuration (default /etc/inboxd/inboxd.conf when present)
          --inbox DIR             A drop Inbox (repeatable; as the agent's --inbox)
          --handlers DIR          Registrations from DIR (repeatable; replaces the search path)
          --state DIR             The agent's state directory
          --runtime-dir DIR       The agent's runtime directory (its status file)
          --defaults FILE         Handler preferences (default /etc/inboxd/defaults.conf)
          -h, --help              Show help information

        """

    static let helpTexts: [String: String] = [
        "types": """
            OVERVIEW: Show the types the agent knows and how they conform.

            With no UTI, every declared type (built in, or exported or imported by a registration) with its
            description. With a UTI (or a MIME type, or a dyn.mime. identifier), its description, conformance
            chain, extensions, MIME types and where it is declared.

            USAGE: inboxctl types [UTI] [--tree] [--json]

            ARGUMENTS:
              <UTI>                   A type identifier, a MIME type or a dyn.mime. identifier

            OPTIONS:
              --tree                  Show the conformance tree under public.item and public.content (or under UTI)
              --json                  Print one JSON document

            """ + agentOptionsHelp,
        "info": """
            OVERVIEW: Show a file's type, how it was decided, and the handlers that would open it.

            For each FILE: its name and file:// URL, its type and conformance chain, its MIME type, what
            decided the type (attribute, extension, content or fallback, as INBOX_TYPE_SOURCE in the
            journal), what its content was sniffed as and any mismatch, the icons of the document type that
            matched, and the candidate handlers, best first, the chosen one marked with the reason. The exit
            status is 1 when a file could not be read; the others are still shown.

            USAGE: inboxctl info FILE... [--json]

            ARGUMENTS:
              <FILE>                  A file to inspect (it is opened read-only and never moved)

            OPTIONS:
              --json                  Print one JSON document (an array, one object per file)

            """ + agentOptionsHelp,
        "handlers": """
            OVERVIEW: List the registered handlers, or the handlers that would open a file or a type.

            With no argument, every registration file in the search path with its state: active, masked (a
            symlink to /dev/null) or broken (with its first error as file:line), and its document types.
            With FILE or --type UTI, the candidate handlers, best first: their rank, the type they matched,
            its distance from the file's type and whether defaults.conf prefers them; the chosen one is
            marked with '*' and the reason.

            USAGE: inboxctl handlers [FILE | --type UTI] [--json]

            ARGUMENTS:
              <FILE>                  A file whose handlers to list (opened read-only, never moved)

            OPTIONS:
              --type UTI              The handlers of a type (a UTI, a MIME type or a dyn.mime. identifier)
              --json                  Print one JSON document

            """ + agentOptionsHelp,
    ]

    @Test(arguments: ["types", "info", "handlers"])
    func helpIsTheSameEveryWay(_ subcommand: String) throws {
        let expected = try #require(Self.helpTexts[subcommand])
        for arguments in [["help", subcommand], [subcommand, "--help"], [subcommand, "-h"]] {
            let result = try inboxctl(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stdout == expected, "\(arguments)")
            #expect(result.stderr.isEmpty)
        }
        let overview = try inboxctl(["--help"])
        #expect(overview.stdout.contains("\n  \(subcommand.padding(toLength: 22, withPad: " ", startingAt: 0))  "))
    }

    @Test(arguments: [
        (["types", "--tre"], "unknown option '--tre'; did you mean '--tree'?", "inboxctl types [UTI] [--tree] [--json]", "types"),
        (["types", "public.png", "public.jpeg"], "unexpected argument 'public.jpeg'", "inboxctl types [UTI] [--tree] [--json]", "types"),
        (["info"], "missing expected argument '<FILE>'", "inboxctl info FILE... [--json]", "info"),
        (["info", "x.png", "--jsn"], "unknown option '--jsn'; did you mean '--json'?", "inboxctl info FILE... [--json]", "info"),
        (["info", "x.png", "--handlers"], "missing value for '--handlers'", "inboxctl info FILE... [--json]", "info"),
        (["handlers", "x.png", "--type", "public.png"], "give FILE or '--type', not both",
         "inboxctl handlers [FILE | --type UTI] [--json]", "handlers"),
        (["handlers", "--type"], "missing value for '--type'", "inboxctl handlers [FILE | --type UTI] [--json]", "handlers"),
        (["types", "--json=yes"], "option '--json' takes no value", "inboxctl types [UTI] [--tree] [--json]", "types"),
        (["verify", "--handler", "x"], "unknown option '--handler'; did you mean '--handlers'?",
         "inboxctl verify [--handlers DIR]... [PATH...]", "verify"),
        (["verify", "--handlers"], "missing value for '--handlers'", "inboxctl verify [--handlers DIR]... [PATH...]", "verify"),
        (["status", "stray"], "unexpected argument 'stray'", "inboxctl status [--json] [--runtime-dir DIR] [agent options]", "status"),
        (["discard", "--stat", "/tmp"], "unknown option '--stat'; did you mean '--state'?", "inboxctl discard ID", "discard"),
        (["retry", "a", "b"], "unexpected argument 'b'", "inboxctl retry ID|--all", "retry"),
        (["log", "--folow"], "unknown option '--folow'; did you mean '--follow'?",
         "inboxctl log [--handler ID] [--file NAME] [--delivery ID] [--follow] [-n N]", "log"),
        (["log", "-n"], "missing value for '-n'",
         "inboxctl log [--handler ID] [--file NAME] [--delivery ID] [--follow] [-n N]", "log"),
    ])
    func usageErrorsExitTwo(_ arguments: [String], _ message: String, _ usage: String, _ subcommand: String) throws {
        let result = try inboxctl(arguments)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "Error: \(message)\nUsage: \(usage)\n  See 'inboxctl help \(subcommand)'.\n")
    }

    // MARK: types

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

    // MARK: info

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
            inboxctl: \(directory.path): not a regular file

            """)
        let reports = try #require(try json(result.stdout) as? [[String: Any]])
        #expect(reports.map { $0["name"] as? String } == ["a.txt"])
    }

    @Test func aHardLinkIsShownWithTheAgentsRefusal() throws {
        let file = try write("linked.txt", "text\n")
        try FileManager.default.linkItem(at: file, to: directory.appendingPathComponent("other.txt"))
        let result = try inboxctl(["info", file.path] + agentOptions)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Note:         it has 2 links: from a drop Inbox the agent would refuse it (a hard link) "
            + "and move it aside to failed/\n"))
    }

    // MARK: handlers

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

/// inboxctl and the running agent decide the same type, source and handler for the same file.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxctlAgreementTests {
    @Test func infoAgreesWithTheAgent() throws {
        let world = try AgentHarness()
        let owner = "test.z-image-owner.\(world.tag)", png = "test.a-png.\(world.tag)"
        try world.register(owner, contentTypes: "public.image", rank: "Owner")
        try world.register(png, contentTypes: "public.png", rank: "Default")
        try world.start()
        let options = ["--inbox", world.inbox.path, "--handlers", world.handlers.path, "--state", world.state.path,
                       "--runtime-dir", world.runtime.path, "--defaults", world.root.appendingPathComponent("defaults.conf").path]

        // One named by its extension, one without a name that says anything (typed by its content).
        let files: [(name: String, bytes: [UInt8])] = [("agree.png", pngBytes(width: 3, height: 3)),
                                                      ("agree-picture", pngBytes(width: 4, height: 4))]
        let outside = world.root.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        for (index, file) in files.enumerated() {
            let copy = outside.appendingPathComponent(file.name)
            try Data(file.bytes).write(to: copy)
            let result = try run(Binaries.inboxctl.path, ["info", "--json", copy.path] + options)
            #expect(result.status == 0, "\(result.stderr)")
            let report = try #require((try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])?.first)

            try world.drop(file.name, contents: file.bytes)
            let finished = try #require(try world.waitForEvents("finished", count: index + 1)
                .first { ($0[field: "INBOX_FILE"] ?? "").hasSuffix("/" + file.name) })
            #expect(finished[field: "INBOX_CONTENT_TYPE"] == report["contentType"] as? String)
            #expect(finished[field: "INBOX_TYPE_SOURCE"] == report["typeSource"] as? String)
            #expect(finished[field: "INBOX_HANDLER"] == report["chosen"] as? String)
            #expect(finished[field: "INBOX_HANDLER"] == owner)
        }
    }
}
