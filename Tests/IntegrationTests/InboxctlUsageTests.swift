import Foundation
import Testing

/// The help of `inboxctl types`, `info` and `handlers`, and usage errors across inboxctl's subcommands.
@Suite struct InboxctlUsageTests {
    static let agentOptionsHelp = """
          --system                The system instance (the default as root, or when yours is not running)
          --user                  Your user instance (the default when it is running)
          --config FILE           The agent's configuration (default /etc/inboxd/inboxd.conf, a user's ~/.config/inboxd/inboxd.conf)
          --inbox DIR             A drop Inbox (repeatable; as the agent's --inbox)
          --handlers DIR          Registrations from DIR (repeatable; replaces the search path)
          --state DIR             The agent's state directory
          --runtime-dir DIR       The agent's runtime directory (its status file)
          --defaults FILE         Handler preferences (default /etc/inboxd/defaults.conf, a user's ~/.config/inboxd/defaults.conf)
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
            matched, and the candidate handlers, best first, the chosen one marked with the reason (a
            name pattern, or the Inbox's binding when the file lies in a bound Inbox). A FILE that is a
            directory is a package document (an .rtfd, a .pages package, a .bundle): typed by its
            extension and its format's marker, with its entries and bytes, and what the agent would
            refuse in it. The exit status is 1 when a file could not be read; the others are still shown.

            USAGE: inboxctl info FILE... [--json]

            ARGUMENTS:
              <FILE>                  A file or package to inspect (opened read-only, never moved)

            OPTIONS:
              --json                  Print one JSON document (an array, one object per file)

            """ + agentOptionsHelp,
        "handlers": """
            OVERVIEW: List the registered handlers, or the handlers that would open a file or a type.

            With no argument, every registration file in the search path with its state: active, masked (a
            symlink to /dev/null) or broken (with its first error as file:line), and its document types.
            A registration whose ReadWritePaths= the running agent's sandbox makes read-only, hides or
            keeps private (its handlers run inside it) is marked, with a 'sandbox:' line and the cure.
            With FILE or --type UTI, the candidate handlers, best first: their rank, the type they matched,
            its distance from the file's type, the name pattern that matched FILE's name and whether
            defaults.conf prefers them; the chosen one is marked with '*' and the reason. A FILE in an Inbox
            bound to a handler ([Inbox] Handler= in inboxd.conf) has that handler only, if it opens it.
            With --type, the document types that claim files of the type by name are listed after.
            A FILE that is a directory is taken as a package document, typed as 'inboxctl info' does.

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
         "inboxctl verify [--handlers DIR]... [--runtime-dir DIR] [--strict] [--json] [PATH...]", "verify"),
        (["verify", "--handlers"], "missing value for '--handlers'", "inboxctl verify [--handlers DIR]... [--runtime-dir DIR] [--strict] [--json] [PATH...]", "verify"),
        (["status", "one", "two"], "unexpected argument 'two'",
         "inboxctl status [FILE|ID] [--cluster] [--json] [--runtime-dir DIR] [agent options]", "status"),
        (["discard", "--stat", "/tmp"], "unknown option '--stat'; did you mean '--state'?", "inboxctl discard ID [--json]", "discard"),
        (["retry", "a", "b"], "unexpected argument 'b'", "inboxctl retry ID|--all [--json]", "retry"),
        (["log", "--folow"], "unknown option '--folow'; did you mean '--follow'?",
         "inboxctl log [--handler ID] [--file NAME] [--delivery ID] [--follow] [-n N] [-- JOURNALCTL-ARGS...]", "log"),
        (["log", "-n"], "missing value for '-n'",
         "inboxctl log [--handler ID] [--file NAME] [--delivery ID] [--follow] [-n N] [-- JOURNALCTL-ARGS...]", "log"),
        (["options"], "missing FILE", OptionsUsage.line, "options"),
        (["options", "x.png", "y.png"], "unexpected argument 'y.png'", OptionsUsage.line, "options"),
        (["options", "x.png", "--do", "dance"], "unknown action 'dance' (one of quicklook, open, print, copy, send)",
         OptionsUsage.line, "options"),
        (["options", "x.png", "--do", "open"], "--do open needs a handler: --do open=ID", OptionsUsage.line, "options"),
        (["options", "x.png", "--json", "--do", "copy"], "--json takes no action: give --do or --json, not both",
         OptionsUsage.line, "options"),
        (["options", "x.png"], "not on a terminal, so no menu to choose from: give --do ACTION or --json",
         OptionsUsage.line, "options"),
    ])
    func usageErrorsExitTwo(_ arguments: [String], _ message: String, _ usage: String, _ subcommand: String) throws {
        let result = try inboxctl(arguments)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "Error: \(message)\nUsage: \(usage)\n  See 'inboxctl help \(subcommand)'.\n")
    }
}

/// `inboxctl options`' usage line, as its usage errors end.
enum OptionsUsage {
    static let line = "inboxctl options FILE [--to DIR] [--printer DEST] [--json] [--do ACTION[=ARG]]"
}
