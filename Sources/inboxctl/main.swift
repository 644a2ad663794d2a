import InboxCore
import InboxSystem

// inboxctl: the user's side of inboxd: send and open files, inspect types and handlers, preview, retry and
// discard what the agent holds, read its status and its log. Inboxctl.commands lists the subcommands.

let arguments = Array(CommandLine.arguments.dropFirst())
// inboxctl starts itself as the owner of the X clipboard it copied a file onto (see X11ClipboardServer): not an
// option for users, and nothing else is done first.
if arguments.first == X11ClipboardServer.argument {
    CurrentProcess.exit(X11ClipboardServer.run(Array(arguments.dropFirst())))
}
CurrentProcess.exit(Inboxctl.run(arguments))
