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
            try? inbox.descriptor.chown(uid: CurrentProcess.effectiveUserID, gid: identity.gid)
            try? inbox.descriptor.chmod(0o770)
            try? documentsDirectory.descriptor.chown(uid: identity.uid, gid: identity.gid)
            try? tmpDirectory.descriptor.chown(uid: identity.uid, gid: identity.gid)
        }
        // Set again on every start, whatever a handler or an administrator changed: these modes are
        // what keeps handlers out of each other's containers (Landlock leaves reading to them).
        try? documentsDirectory.descriptor.chmod(0o700)
        try? tmpDirectory.descriptor.chmod(0o700)
    }
}
