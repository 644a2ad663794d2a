import InboxCore
import InboxSystem

// inboxd: parse flags, load the configuration, run the agent in the foreground.

let arguments = Array(CommandLine.arguments.dropFirst())
// The agent starts itself as its content sniffer (see SnifferWorker): not an option for users,
if arguments.first == SnifferWorker.argument {
    CurrentProcess.exit(SnifferWorker.run(mimeDirectories: Array(arguments.dropFirst())))
}
// ... and as the print job of a Print= registration (see PrintWorker).
if arguments.first == PrintWorker.argument {
    CurrentProcess.exit(PrintWorker.run(Array(arguments.dropFirst())))
}
let options: AgentCommandLine
do {
    options = try AgentCommandLine.parse(arguments)
} catch {
    printError("Error: \(error.message)\nUsage: \(AgentCommandLine.usage)\n  See 'inboxd --help'.")
    CurrentProcess.exit(2)
}
if options.help {
    print(AgentCommandLine.help, terminator: "")
    CurrentProcess.exit(0)
}
if options.version {
    print("inboxd \(inboxdVersion)")
    CurrentProcess.exit(0)
}

let settings: AgentSettings
switch makeSettings(options) {
case .success(let made): settings = made
case .failure(let error):
    printError("inboxd: \(error.message)")
    CurrentProcess.exit(2)
}

Signals.ignorePipe()
let logger = Logger(target: settings.logTarget, threshold: settings.logLevel)
do {
    let agent = try Agent(settings: settings, logger: logger)
    CurrentProcess.exit(try agent.run())
} catch {
    logger.fatal("inboxd failed: \(error)")
    CurrentProcess.exit(1)
}
