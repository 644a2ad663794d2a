import InboxCore
import InboxSystem

// inboxctl: the user's side of inboxd: send and open files, inspect types and handlers, preview, retry and
// discard what the agent holds, read its status and its log. Inboxctl.commands lists the subcommands.

let arguments = Array(CommandLine.arguments.dropFirst())
CurrentProcess.exit(Inboxctl.run(arguments))
