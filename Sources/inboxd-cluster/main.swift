import InboxCore
import InboxSystem

// inboxd-cluster: the agent's cluster child (docs/design.md, Cluster: the NATS layer). libnats is synchronous and
// runs threads of its own, so it never runs in the agent: the agent spawns this child with its socket as fd 0 and,
// for a worker, the spool directory as fd 3, sandboxed (Landlock: writes only beneath the spool), and talks to it in
// ClusterProtocol's messages.
//
//     inboxd-cluster --role ingest|work
//
// 1. The agent's first message configures it (servers, names, credentials, role).
// 2. It connects (every 2 s until a server answers; libnats reconnects after that) and says it is ready.
// 3. It serves requests until the agent closes the socket; then it deletes its presence and exits.

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2, arguments[0] == "--role", ClusterRole(rawValue: arguments[1]) != nil else {
    _ = FileDescriptor.standardError.write(all: "usage: inboxd-cluster --role ingest|work (the agent starts it)\n")
    CurrentProcess.exit(2)
}
let channel = ClusterChannel(descriptor: .standardInput)
guard let configuration = ClusterChild.awaitConfiguration(channel) else { CurrentProcess.exit(2) }
let child = ClusterChild(channel: channel, configuration: configuration,
                         spool: configuration.role == .work ? FileDescriptor(rawValue: 3) : nil)
child.run()
