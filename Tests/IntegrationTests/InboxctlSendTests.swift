import Foundation
import Testing

/// Runs a command with `input` on its stdin (the harness's `run` gives it /dev/null).
func run(_ executable: String, _ arguments: [String], input: [UInt8]) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let inPipe = Pipe(), out = Pipe(), err = Pipe()
    process.standardInput = inPipe
    process.standardOutput = out
    process.standardError = err
    try process.run()
    inPipe.fileHandleForWriting.write(Data(input))
    try inPipe.fileHandleForWriting.close()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

extension AgentHarness {
    /// inboxctl on this world's directories.
    func inboxctl(_ subcommand: String, _ arguments: [String], input: [UInt8]? = nil) throws
        -> (status: Int32, stdout: String, stderr: String) {
        let all = [subcommand] + arguments + ["--inbox", inbox.path, "--handlers", handlers.path, "--state", state.path]
        if let input { return try run(Binaries.inboxctl.path, all, input: input) }
        return try run(Binaries.inboxctl.path, all)
    }

    /// Every entry of a directory, hidden ones included.
    func allEntries(of directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    static let profileType = """
        [ExportedType]
        Identifier=com.example.customprofile
        Description=Custom Profile
        ConformsTo=public.data public.content
        Extensions=customprofile
        MIMETypes=application/x-customprofile
        """
}

/// `inboxctl send`, `retry`, `discard` and `log` against the real agent.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)))
struct InboxctlSendTests {
    @Test func sendWithSourceAppAndAnnotationReachesTheHandlerIntact() throws {
        let world = try AgentHarness()
        try world.register("test.text.\(world.tag)", contentTypes: "public.plain-text")
        try world.start()
        let file = world.root.appendingPathComponent("note.txt")
        try Data("hello\n".utf8).write(to: file)
        let annotation = #"{"subject":"Holiday \"2026\"","tags":["a","b"],"n":2}"#
        let result = try world.inboxctl("send", ["--source-app", "com.example.mail", "--annotation", annotation, file.path])
        #expect(result.status == 0)
        #expect(result.stdout == world.inbox.appendingPathComponent("note.txt").path + "\n")
        #expect(result.stderr.isEmpty)
        try waitUntil("the handler recorded the delivery") { world.recordings().count == 1 }
        let record = try #require(world.recordings().values.first)
        #expect(record.contains("INBOX_SOURCE_APP=com.example.mail\n"))
        #expect(record.contains("INBOX_ANNOTATION=\(annotation)\n"))
        #expect(record.contains("INBOX_NAME=note.txt\n"))
        #expect(record.contains(#""annotation":\#(annotation)"#))
        // A second send of the same name while the first still sits there would be numbered; the Inbox is empty now.
        try waitUntil("the Inbox is empty") { world.allEntries(of: world.inbox).isEmpty }
    }

    @Test func stdinWithATypeIsNamedFromTheTypeAndReachesItsOwner() throws {
        let world = try AgentHarness()
        let owner = "test.profile-owner.\(world.tag)"
        try world.register("test.data-alternate.\(world.tag)", contentTypes: "public.data", rank: "Alternate")
        try world.register(owner, contentTypes: "com.example.customprofile", rank: "Owner",
                           extraSections: AgentHarness.profileType)
        try world.start()
        let result = try world.inboxctl("send", ["--type", "com.example.customprofile", "-"], input: Array("<profile/>".utf8))
        #expect(result.status == 0)
        let prefix = world.inbox.path + "/customprofile-"
        #expect(result.stdout.hasPrefix(prefix) && result.stdout.hasSuffix(".customprofile\n"))
        let random = result.stdout.dropFirst(prefix.count).dropLast(".customprofile\n".count)
        #expect(random.count == 12 && random.allSatisfy(\.isHexDigit))
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?["INBOX_HANDLER"] as? String == owner)
        #expect(finished.first?["INBOX_CONTENT_TYPE"] as? String == "com.example.customprofile")
        let record = try #require(world.recordings().values.first)
        #expect(record.contains("INBOX_NAME=customprofile-\(random).customprofile\n"))
    }

    @Test func retryBringsFailedFilesBackByNameAndByDeliveryIDAndDiscardRemovesOne() throws {
        let world = try AgentHarness()
        let handler = "test.flaky.\(world.tag)"
        try world.register(handler, contentTypes: "public.plain-text", exit: 1)
        try world.start(config: "[Agent]\nMaxAttempts=1\n")
        // a.txt comes from another user: the agent (root) owns it in failed/, retry gives it back.
        let hidden = world.inbox.appendingPathComponent(".a.txt.part")
        try Data("text a.txt".utf8).write(to: hidden)
        #expect(chown(hidden.path, 4321, 4321) == 0)
        #expect(rename(hidden.path, world.inbox.appendingPathComponent("a.txt").path) == 0)
        for name in ["b.txt", "c.txt"] { try world.drop(name, contents: Array("text \(name)".utf8)) }
        let failed = try world.waitForEvents("failed", count: 3)
        #expect(world.contents(of: world.failedDirectory) == ["a.txt", "b.txt", "c.txt"])
        let bFailure = try #require(failed.first { ($0["INBOX_FILE"] as? String)?.hasSuffix("/b.txt") == true })
        let bID = try #require(bFailure["INBOX_DELIVERY_ID"] as? String)

        // An unknown id lists what is there.
        let unknown = try world.inboxctl("retry", ["nothing.txt"])
        #expect(unknown.status == 1)
        // The places are this world's (--state), the runtime directory the system's default: whether the host runs a
        // system instance there is not this test's, so the last line may say either.
        let listed = """
            inboxctl: no file or delivery 'nothing.txt' in failed/ or unhandled/; there are:
              failed/a.txt
              failed/b.txt
              failed/c.txt
            This is the system instance
            """
        #expect([listed + ", which is not running; your user instance is not running either ('inboxctl retry --user' looks there).\n",
                  listed + "; your user instance is not running either ('inboxctl retry --user' looks there).\n"]
            .contains(unknown.stderr), "\(unknown.stderr)")

        // discard: by name.
        let discarded = try world.inboxctl("discard", ["c.txt"])
        #expect(discarded.status == 0)
        #expect(discarded.stdout == "removed \(world.failedDirectory.path)/c.txt\n")
        #expect(world.contents(of: world.failedDirectory) == ["a.txt", "b.txt"])

        // The registration is fixed; once the agent has reloaded it, retry by name and by delivery id.
        let fixed = world.registrationText(handler, exec: "\(world.recorderURL.path) --file %f", contentTypes: "public.plain-text",
                                           environment: "EXIT_CODE=0")
        try world.write(fixed, to: world.handlerFile(handler))
        try world.waitForRegistrationLoads(2)
        let byName = try world.inboxctl("retry", ["a.txt"])
        #expect(byName.status == 0)
        #expect(byName.stdout == "\(world.failedDirectory.path)/a.txt -> \(world.inbox.path)/a.txt\n")
        let byID = try world.inboxctl("retry", [bID])
        #expect(byID.status == 0)
        #expect(byID.stdout == "\(world.failedDirectory.path)/b.txt -> \(world.inbox.path)/b.txt\n")
        let finished = try world.waitForEvents("finished", count: 2)
        #expect(Set(finished.compactMap { ($0["INBOX_FILE"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } })
                == ["a.txt", "b.txt"])
        #expect(world.contents(of: world.failedDirectory).isEmpty)
        #expect(world.allEntries(of: world.inbox).isEmpty)
        let aID = try #require(finished.first { ($0["INBOX_FILE"] as? String)?.hasSuffix("/a.txt") == true }?["INBOX_DELIVERY_ID"]
                               as? String)
        #expect(world.recordings()["\(aID).1"]?.contains("INBOX_SOURCE_UID=4321\n") == true)

        // log: the failed delivery's entries, by its id.
        let log = try world.inboxctl("log", ["--delivery", bID, "--no-such-option"])
        #expect(log.status == 2)
        let entries = try run(Binaries.inboxctl.path, ["log", "--delivery", bID])
        #expect(entries.status == 0)
        #expect(entries.stderr == "journalctl INBOX_DELIVERY_ID=\(bID)\n")
        #expect(entries.stdout.contains("b.txt"))
        #expect(entries.stdout.contains(handler))
        #expect(!entries.stdout.contains("a.txt"))
        // By file name: every place it was logged (failed/ and the container Inbox), both deliveries.
        let byFile = try world.inboxctl("log", ["--file", "c.txt"])
        #expect(byFile.status == 0)
        #expect(byFile.stderr.hasPrefix("journalctl -t inboxd INBOX_FILE=\(world.inbox.path)/c.txt "))
        #expect(byFile.stdout.contains("\(handler) failed on c.txt"))
        #expect(!byFile.stdout.contains("b.txt"))
        // By handler: the agent's entries and the handler's own output.
        // The handler's output reaches journald on a stream of its own: wait for the retried run's line.
        _ = try Journal.wait(for: ["SYSLOG_IDENTIFIER=\(handler)", "MESSAGE=recorded a.txt type=public.plain-text from=none attempt=1"],
                             count: 2)
        let byHandler = try world.inboxctl("log", ["--handler", handler])
        #expect(byHandler.status == 0)
        #expect(byHandler.stderr == "journalctl SYSLOG_IDENTIFIER=inboxd INBOX_HANDLER=\(handler) + SYSLOG_IDENTIFIER=\(handler)\n")
        #expect(byHandler.stdout.contains("recorded a.txt type=public.plain-text"))
        #expect(byHandler.stdout.contains("\(handler) handled b.txt"))
    }
}

/// What `inboxctl send` refuses before creating anything, and the four help texts.
@Suite struct InboxctlSendUsageTests {
    let inbox: URL

    init() throws {
        inbox = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxctl-send-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
    }

    func send(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let file = inbox.deletingLastPathComponent().appendingPathComponent("inboxctl-send-data.txt")
        try Data("data".utf8).write(to: file)
        return try run(Binaries.inboxctl.path, ["send", "--inbox", inbox.path] + arguments + [file.path])
    }

    var everything: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: inbox.path)) ?? []) }

    static let usageLines = """
        Usage: inboxctl send [--inbox DIR] [--source-app ID] [--annotation JSON] [--type UTI] [--name NAME] [--json] FILE...|-
          See 'inboxctl help send'.

        """

    @Test func aBadAnnotationIsRefusedAndLeavesNothing() throws {
        let result = try send(["--annotation", #"{"a":"#])
        #expect(result.status == 2)
        #expect(result.stderr == "Error: annotation is not valid JSON: unexpected end of input at byte 5\n" + Self.usageLines)
        #expect(result.stdout.isEmpty)
        #expect(everything.isEmpty)
    }

    @Test func anOversizeAnnotationIsRefusedAndLeavesNothing() throws {
        let big = "\"" + String(repeating: "x", count: 70_000) + "\""
        let result = try send(["--annotation", big])
        #expect(result.status == 2)
        #expect(result.stderr == "Error: annotation is 70002 bytes, over the limit of 65536\n" + Self.usageLines)
        #expect(everything.isEmpty)
    }

    @Test func metadataTheFilesystemCannotHoldTravelsInASidecar() throws {
        // Within the 64 KiB bound, but more than ext4 keeps in extended attributes (about 4 KB).
        let big = "\"" + String(repeating: "x", count: 20_000) + "\""
        let result = try send(["--annotation", big, "--source-app", "com.example.mail"])
        #expect(result.status == 0)
        #expect(result.stdout == inbox.appendingPathComponent("inboxctl-send-data.txt").path + "\n")
        #expect(everything.sorted() == [".inboxctl-send-data.txt.inbox-meta", "inboxctl-send-data.txt"])
        let sidecar = try String(contentsOf: inbox.appendingPathComponent(".inboxctl-send-data.txt.inbox-meta"), encoding: .utf8)
        #expect(sidecar == #"{"source-app":"com.example.mail","annotation":\#(big)}"# + "\n")
        // All of it is in the sidecar, none in attributes.
        #expect(attributeNames(inbox.appendingPathComponent("inboxctl-send-data.txt").path).isEmpty)
        // A second send takes the next name, sidecar and all.
        #expect(try send(["--annotation", big]).status == 0)
        #expect(everything.sorted() == [".inboxctl-send-data-2.txt.inbox-meta", ".inboxctl-send-data.txt.inbox-meta",
                                        "inboxctl-send-data-2.txt", "inboxctl-send-data.txt"])
    }

    @Test func badSourceAppTypeAndStdinWithoutANameAreUsageErrors() throws {
        let app = try send(["--source-app", "com example"])
        #expect(app.status == 2)
        #expect(app.stderr.hasPrefix("Error: invalid source application 'com example': "))
        let type = try send(["--type", "public.pngg"])
        #expect(type.status == 2)
        #expect(type.stderr == "Error: unknown type 'public.pngg'; did you mean 'public.png'?\n" + Self.usageLines)
        let stdin = try run(Binaries.inboxctl.path, ["send", "--inbox", inbox.path, "-"], input: [])
        #expect(stdin.status == 2)
        #expect(stdin.stderr == "Error: '-' (stdin) needs --type or --name: there is no file name to keep\n" + Self.usageLines)
        #expect(everything.isEmpty)
    }

    @Test func anInterruptedSendRemovesItsHiddenFile() throws {
        let process = Process()
        process.executableURL = Binaries.inboxctl
        process.arguments = ["send", "--inbox", inbox.path, "--type", "public.plain-text", "-"]
        let input = Pipe(), err = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        input.fileHandleForWriting.write(Data("half of it".utf8))
        try waitUntil("the hidden file exists") { everything.contains { $0.hasPrefix(".inboxctl-send-") } }
        process.interrupt()
        defer { if process.isRunning { process.terminate() } }
        try waitUntil("inboxctl exits", timeout: 10) { !process.isRunning }
        process.waitUntilExit()
        try input.fileHandleForWriting.close()
        #expect(process.terminationStatus == 128 + SIGINT)
        #expect(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                == "inboxctl: cannot send stdin: interrupted\n")
        #expect(everything.isEmpty)
    }

    static let helps: [String: String] = [
        "send": """
            OVERVIEW: Send files to their handlers through a drop Inbox.

            Each FILE is copied to a hidden name in the Inbox, its metadata set as extended attributes
            (user.inbox.source-app, user.inbox.annotation, user.inbox.content-type), synced, and renamed
            into place, so the agent never sees half a file. Metadata the filesystem cannot hold in
            extended attributes goes into the hidden sidecar .NAME.inbox-meta, written before the
            rename. A name already taken becomes NAME-2.EXT, NAME-3.EXT... One line per file sent: its
            path in the Inbox. '-' reads the data from stdin; with --type and no --name it is named
            TYPE-XXXXXXXXXXXX.EXT from the type's last identifier component and preferred extension.

            A FILE that is a directory is sent whole, as one package document (an .rtfd, a .pages
            package, a .bundle): its name must end in a package type's extension, or --type names a
            package type and the name takes its extension. Its entries are copied to a hidden directory
            in the Inbox without following anything in it, its metadata set on that directory, synced,
            and renamed into place. What the agent would refuse in a package (a symbolic link, a hard
            link, a FIFO, socket or device, a mount point, more levels, entries or bytes than
            MaxPackageDepth=, MaxPackageEntries= and MaxPackageSize= allow) is refused here, with the
            entry that is why, and nothing is left in the Inbox.

            USAGE: inboxctl send [--inbox DIR] [--source-app ID] [--annotation JSON] [--type UTI] [--name NAME] [--json] FILE...|-

            ARGUMENTS:
              <FILE>                  A file or package directory to send, or '-' for stdin

            OPTIONS:
              --inbox DIR             The drop Inbox (default: the agent's first Inbox)
              --source-app ID         The sending application's identifier (printable ASCII, no spaces)
              --annotation JSON       JSON handed to the handler (at most 65536 bytes)
              --type UTI              The content type (a UTI, a dyn.mime. identifier or a MIME type)
              --name NAME             The name in the Inbox (one FILE, or '-')
              --json                  Print one JSON document: each file's path in the Inbox, or why not
              --system                The system instance (the default as root, or when yours is not running)
              --user                  Your user instance (the default when it is running)
              --config FILE           The agent's configuration (default /etc/inboxd/inboxd.conf, a user's ~/.config/inboxd/inboxd.conf)
              --handlers DIR          Registrations from DIR (repeatable; replaces the search path)
              --state DIR             The agent's state directory
              --runtime-dir DIR       The agent's runtime directory (its status file)
              --defaults FILE         Handler preferences (default /etc/inboxd/defaults.conf, a user's ~/.config/inboxd/defaults.conf)
              -h, --help              Show help information

            """,
        "retry": """
            OVERVIEW: Send a failed or unhandled file to its handler again.

            The file is moved back into the drop Inbox (to a hidden name, then into place), without
            the agent's failure attributes, so the agent takes it as a new arrival with a new delivery
            id. ID is a file name in failed/ or unhandled/ (failed/NAME or unhandled/NAME when both
            hold one), or a delivery id (32 hex digits, as in the journal's INBOX_DELIVERY_ID).
            --all retries everything in failed/; unhandled/ is left alone, as the agent dispatches
            it by itself once a registration for its type appears. A package document (a directory)
            goes back whole, the same way.

            USAGE: inboxctl retry ID|--all [--json]

            ARGUMENTS:
              <ID>                    A file name in failed/ or unhandled/, or a delivery id

            OPTIONS:
              --all                   Retry every file in failed/
              --inbox DIR             The drop Inbox (default: the agent's first Inbox)
              --json                  Print one JSON document: where each file went, or why not
              --system                The system instance (the default as root, or when yours is not running)
              --user                  Your user instance (the default when it is running)
              --config FILE           The agent's configuration (default /etc/inboxd/inboxd.conf, a user's ~/.config/inboxd/inboxd.conf)
              --handlers DIR          Registrations from DIR (repeatable; replaces the search path)
              --state DIR             The agent's state directory
              --runtime-dir DIR       The agent's runtime directory (its status file)
              --defaults FILE         Handler preferences (default /etc/inboxd/defaults.conf, a user's ~/.config/inboxd/defaults.conf)
              -h, --help              Show help information

            """,
        "discard": """
            OVERVIEW: Remove a failed or unhandled file.

            ID is a file name in failed/ or unhandled/ (failed/NAME or unhandled/NAME when both hold
            one), or a delivery id (32 hex digits, as in the journal's INBOX_DELIVERY_ID). Only regular
            files and directories (a package document, or a directory moved aside) are removed, a
            directory whole, depth first; a link is never followed, another mount never entered.

            USAGE: inboxctl discard ID [--json]

            ARGUMENTS:
              <ID>                    A file name in failed/ or unhandled/, or a delivery id

            OPTIONS:
              --json                  Print one JSON document: what was removed, or why not
              --system                The system instance (the default as root, or when yours is not running)
              --user                  Your user instance (the default when it is running)
              --config FILE           The agent's configuration (default /etc/inboxd/inboxd.conf, a user's ~/.config/inboxd/inboxd.conf)
              --inbox DIR             A drop Inbox (repeatable; as the agent's --inbox)
              --handlers DIR          Registrations from DIR (repeatable; replaces the search path)
              --state DIR             The agent's state directory
              --runtime-dir DIR       The agent's runtime directory (its status file)
              --defaults FILE         Handler preferences (default /etc/inboxd/defaults.conf, a user's ~/.config/inboxd/defaults.conf)
              -h, --help              Show help information

            """,
        "log": """
            OVERVIEW: Show the agent's journal entries for a handler, a file or a delivery.

            Runs journalctl with the matching fields (printed first on stderr). With --handler alone
            or --delivery, the handler's own output is shown too (each line of it names the handler
            and the delivery). --file NAME matches INBOX_FILE
            exactly, for NAME in each drop Inbox, failed/, unhandled/ and each handler's container
            Inbox (a renamed copy, NAME-2.EXT, has a name of its own); a NAME with a '/' is taken as
            a full path. The matches are exact and use the journal's index, unlike --grep. Words
            after '--' are passed to journalctl as they are, before the matches (-o json, --since
            today, -x). A --handler that is not registered is still looked for (its entries outlive
            it), with the nearest registered identifier suggested.

            USAGE: inboxctl log [--handler ID] [--file NAME] [--delivery ID] [--follow] [-n N] [-- JOURNALCTL-ARGS...]

            OPTIONS:
              --handler ID            Entries for handler ID
              --file NAME             Entries for the file NAME
              --delivery ID           Entries for one delivery (INBOX_DELIVERY_ID)
              -f, --follow            Keep printing new entries
              -n, --lines N           Show the last N entries
              --system                The system instance (the default as root, or when yours is not running)
              --user                  Your user instance (the default when it is running)
              --config FILE           The agent's configuration (default /etc/inboxd/inboxd.conf, a user's ~/.config/inboxd/inboxd.conf)
              --inbox DIR             A drop Inbox (repeatable; as the agent's --inbox)
              --handlers DIR          Registrations from DIR (repeatable; replaces the search path)
              --state DIR             The agent's state directory
              --runtime-dir DIR       The agent's runtime directory (its status file)
              --defaults FILE         Handler preferences (default /etc/inboxd/defaults.conf, a user's ~/.config/inboxd/defaults.conf)
              -h, --help              Show help information

            """,
    ]

    @Test(arguments: ["send", "retry", "discard", "log"])
    func helpIsExactAndTheSameEveryWay(_ subcommand: String) throws {
        for arguments in [["help", subcommand], [subcommand, "--help"], [subcommand, "-h"]] {
            let result = try run(Binaries.inboxctl.path, arguments)
            #expect(result.status == 0)
            #expect(result.stdout == Self.helps[subcommand])
            #expect(result.stderr.isEmpty)
        }
    }
}
