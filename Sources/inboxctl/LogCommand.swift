import InboxCore
import InboxSystem

/// `inboxctl log`: runs journalctl with the field matches of docs/design.md, Journal, printing the command first.
enum LogCommand: InboxctlCommand {
    static let name = "log"
    static let summary = "Show the journal entries of a handler, file or delivery"
    static let usage = "inboxctl log [--handler ID] [--file NAME] [--delivery ID] [--follow] [-n N] [-- JOURNALCTL-ARGS...]"
    static let journalctl = "/usr/bin/journalctl"

    static let help = """
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

        USAGE: \(usage)

        OPTIONS:
          --handler ID            Entries for handler ID
          --file NAME             Entries for the file NAME
          --delivery ID           Entries for one delivery (INBOX_DELIVERY_ID)
          -f, --follow            Keep printing new entries
          -n, --lines N           Show the last N entries
        \(AgentOptions.help)
          -h, --help              Show help information

        """

    static let options = CommandOptions([
        .value("--handler"), .value("--file"), .value("--delivery"), .flag("--follow", "-f"), .value("--lines", "-n"),
    ], agentOptions: true, positionals: .passthrough)

    /// The usage errors that the options one by one cannot show.
    static func check(_ parsed: ParsedOptions) throws(UsageError) {
        if let lines = parsed.value("--lines"), Int(lines).map({ $0 < 0 }) ?? true {
            throw UsageError(message: "invalid number of lines '\(lines)'")
        }
        if let delivery = parsed.value("--delivery"), AgentAttribute.validDeliveryID(delivery.lowercased()) == nil {
            throw UsageError(message: "invalid delivery id '\(delivery)': expected 32 hex digits")
        }
        if parsed.value("--file") == "" { throw UsageError(message: "empty file name") }
    }

    static func run(_ parsed: ParsedOptions) -> CInt {
        let handler = parsed.value("--handler"), delivery = parsed.value("--delivery")
        // A package document's name as a shell completes it ("Report.rtfd/"): the journal names it without the '/'.
        var file = parsed.value("--file")
        while let name = file, name.count > 1, name.hasSuffix("/") { file = String(name.dropLast()) }
        let lines = parsed.value("--lines")
        var command = ["journalctl"]
        if parsed.flag("--follow") { command.append("-f") }
        if let lines { command += ["-n", lines] }
        command += parsed.passthrough
        // The agent's settings only when a match needs them (its handlers, its directories): resolved once.
        var settings: AgentSettings?
        if handler != nil || (file.map { !$0.contains("/") } ?? false) {
            guard let resolved = parsed.agent.settings() else { return 1 }
            settings = resolved
        }
        if let handler, let settings { suggest(for: handler, settings: settings) }
        if let handler, file == nil, delivery == nil {
            // -t adds its matches in a group of their own, ANDed with the others: an OR across fields needs '+'.
            command += ["SYSLOG_IDENTIFIER=inboxd", "INBOX_HANDLER=\(handler)", "+", "SYSLOG_IDENTIFIER=\(handler)"]
        } else {
            // A delivery's id is on the handler's own lines too (its output names the delivery): no -t, so that they
            // are shown with the agent's.
            if delivery == nil { command += ["-t", "inboxd"] }
            if let handler { command.append("INBOX_HANDLER=\(handler)") }
            if let delivery { command.append("INBOX_DELIVERY_ID=\(delivery.lowercased())") }
            if let file {
                command += paths(of: file, settings: settings).map { "INBOX_FILE=\($0)" }
            }
        }
        Inboxctl.write(command.map(quoted).joined(separator: " ") + "\n", to: 2)
        return exec(journalctl, command)
    }

    /// Says so when `handler` is not registered, with the nearest identifier that is (a typo finds nothing in the
    /// journal, silently); the search still runs, since a removed handler's entries stay in the journal.
    static func suggest(for handler: String, settings: AgentSettings) {
        let registered = RegistrationLoader.load(directories: settings.handlerDirectories).registrations.map(\.identifier)
        guard !registered.contains(handler) else { return }
        var message = "inboxctl: no handler '\(handler)' is registered"
        if let close = Spelling.closest(to: handler, among: registered) { message += "; did you mean '\(close)'?" }
        Inboxctl.write(message + "\n", to: 2)
    }

    /// Every path the agent may have logged for a file name: where it was dropped, where it waited or failed, and
    /// each handler's Inbox it was moved to.
    static func paths(of name: String, settings: AgentSettings?) -> [String] {
        guard let settings, !name.contains("/") else { return [name] }
        var directories = settings.inboxes.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        let held = StateDirectories.paths(of: settings.stateDirectory)
        directories += [held.failed, held.unhandled]
        if let state = try? StateDirectories(existing: settings.stateDirectory) {
            directories += state.containerInboxes().filter { !$0.handler.hasPrefix(".") }.map(\.inbox.path)
        }
        return directories.map { $0 + "/" + name }
    }

    /// A word as a shell would need it, so the printed command can be pasted.
    static func quoted(_ word: String) -> String {
        let plain = word.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || "-_./=:+@,%".utf8.contains(byte)
        }
        return plain && !word.isEmpty ? word : "'" + word.replacing("'", with: "'\\''") + "'"
    }

    /// Replaces inboxctl with journalctl (no shell); returns only if that fails.
    static func exec(_ path: String, _ arguments: [String]) -> CInt {
        let error = CurrentProcess.exec(path, arguments: arguments)
        Inboxctl.write("inboxctl: cannot run \(path): \(error)\n", to: 2)
        return 1
    }
}
