import Glibc

/// A handler's private directories: `containers/<id>/{Inbox,Documents,tmp}`.
/// The Inbox sits beside Documents, never inside it (docs/design.md, Directories).
public final class Container {
    public let handler: String
    public let root: Directory
    public let inbox: Directory
    public let documents: String
    public let tmp: String

    init(handler: String, in containers: Directory, identity: Identity?) throws(SystemError) {
        self.handler = handler
        root = try containers.subdirectory(handler, mode: 0o755)
        inbox = try root.subdirectory("Inbox", mode: 0o770)
        let documentsDirectory = try root.subdirectory("Documents", mode: 0o700)
        let tmpDirectory = try root.subdirectory("tmp", mode: 0o700)
        documents = documentsDirectory.path
        tmp = tmpDirectory.path
        if let identity {
            // The handler may remove its Inbox copies (group write on the directory) and owns
            // Documents and tmp; the Inbox itself and the files in it stay the agent's.
            _ = fchown(inbox.descriptor.rawValue, geteuid(), identity.gid)
            _ = fchmod(inbox.descriptor.rawValue, 0o770)
            _ = fchown(documentsDirectory.descriptor.rawValue, identity.uid, identity.gid)
            _ = fchown(tmpDirectory.descriptor.rawValue, identity.uid, identity.gid)
        }
        // Set again on every start, whatever a handler or an administrator changed: these modes are
        // what keeps handlers out of each other's containers (Landlock leaves reading to them).
        _ = fchmod(documentsDirectory.descriptor.rawValue, 0o700)
        _ = fchmod(tmpDirectory.descriptor.rawValue, 0o700)
    }
}
