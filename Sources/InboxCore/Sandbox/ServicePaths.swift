/// The systemd service an agent runs as, found from its control group: the unit a drop-in goes to.
public struct ServiceUnit: Sendable, Hashable {
    /// The unit's name, `inboxd.service`.
    public var name: String
    /// Run by a user's service manager (`systemctl --user`).
    public var user: Bool

    public init(name: String, user: Bool) {
        self.name = name
        self.user = user
    }

    /// The unit of a process from the text of its `/proc/PID/cgroup`: the unified hierarchy's line (`0::/…`), its
    /// last `.service` component; under `user@UID.service`, a user's unit. nil outside a service (run by hand, in
    /// a session scope).
    public static func parse(cgroup text: String) -> ServiceUnit? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let components = line.dropFirst(3).split(separator: "/")
        guard let last = components.last(where: { $0.hasSuffix(".service") }), !last.hasPrefix("user@") else {
            return nil
        }
        return ServiceUnit(name: String(last), user: components.contains { $0.hasPrefix("user@") })
    }

    /// `systemctl` or `systemctl --user`.
    public var systemctl: String { user ? "systemctl --user" : "systemctl" }
}

/// What is wrong, where the agent runs, with a path a registration or inboxd.conf names. The agent and its handlers
/// share one mount namespace: under a unit's `ProtectSystem=strict`, `ProtectHome=`, `PrivateTmp=` or
/// `InaccessiblePaths=`, what the host shows is not what they see.
public enum ServicePathProblem: Sendable, Hashable {
    /// On a mount that is read-only there (`mountPoint`).
    case readOnly(mountPoint: String)
    /// Not there at all; `readOnlyParent` is the mount point of the nearest directory above it that is, when that
    /// one is read-only (so it cannot be made there either).
    case absent(readOnlyParent: String?)
    /// In the unit's own /tmp (`PrivateTmp=`): nothing outside the service sees what is written there.
    case privateTemporary(mountPoint: String)
}

/// A path setting with a problem where the agent runs, and the words that say so.
public struct ServicePathFinding: Sendable, Hashable {
    /// The setting as written: `ReadWritePaths=/var/lib/slowlog`, `Inbox=/srv/scans`.
    public var setting: String
    public var path: String
    public var problem: ServicePathProblem
    /// What fails because of it: "com.example.log cannot write there" (a read-only or absent path).
    public var consequence: String
    /// Whether the setting needs writing (a drop Inbox, a grant) or only reading (a handlers.d directory).
    public var writing: Bool
    /// A registration's grant: what its handler, run inside the agent's sandbox, needs.
    public var byHandler: Bool

    public init(setting: String, path: String, problem: ServicePathProblem, consequence: String, writing: Bool = true,
                byHandler: Bool = false) {
        self.setting = setting
        self.path = path
        self.problem = problem
        self.consequence = consequence
        self.writing = writing
        self.byHandler = byHandler
    }

    /// The warning: what is wrong, why, and the cure for the unit the agent runs as (nil: not a service).
    public func message(unit: ServiceUnit?) -> String {
        let place = unit.map { "where \($0.name) runs" } ?? "where the agent runs"
        let dropIn = unit.flatMap { unit in
            writing ? "`\(unit.systemctl) edit \(unit.name)`, add `[Service]` and `ReadWritePaths=\(path)`, then "
                + "`\(unit.systemctl) restart \(unit.name)`" : nil
        }
        switch problem {
        case .readOnly(let mountPoint):
            var text = "\(setting) is read-only \(place) ("
                + (unit != nil ? "its sandbox mounts \(mountPoint) read-only"
                   : "the mount at \(mountPoint) is read-only in the agent's mount namespace")
                + ")" + (byHandler ? ", and handlers run inside \(unit == nil ? "that namespace" : "that sandbox")" : "")
                + ": \(consequence)"
            if let dropIn { text += ". Let the service write it with a drop-in: " + dropIn }
            return text
        case .absent(let readOnlyParent):
            var text = "\(setting) does not exist \(place): \(consequence)"
            if writing, let readOnlyParent {
                text += ", and it cannot be made there (the mount at \(readOnlyParent) is read-only there)"
            }
            if let unit {
                text += ". Create it on the host; if it is there already, \(unit.name)'s sandbox hides it "
                    + "(InaccessiblePaths=, TemporaryFileSystem=, ProtectHome=; `\(unit.systemctl) cat \(unit.name)` "
                    + "shows them)"
                if readOnlyParent != nil, let dropIn { text += ". Once it exists, a drop-in lets the service use it: " + dropIn }
            } else {
                text += ". Create it, then reload the agent"
            }
            return text
        case .privateTemporary(let mountPoint):
            return "\(setting) is in \(unit.map { "\($0.name)'s" } ?? "the agent's") own \(mountPoint) (PrivateTmp=), "
                + "which handlers share: no process outside sees what is written there, and nothing put there from "
                + "outside is there. Use a directory outside \(mountPoint) (under /var/lib, say)"
        }
    }
}
