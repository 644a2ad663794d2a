import InboxCore
import InboxSystem

// inboxctl: the user's side of inboxd. This first version verifies registrations and
// configuration files; sending, inspecting and status follow.

let arguments = Array(CommandLine.arguments.dropFirst())
CurrentProcess.exit(Inboxctl.run(arguments))
