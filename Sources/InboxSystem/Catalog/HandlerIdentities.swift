import Glibc
import InboxCore

/// Who each handler runs as (docs/design.md, Identities: a handler never runs as root unless `User=root`).
/// As root: `User=` is looked up (with `Group=` instead of the user's group); without `User=` a handler gets an
/// identity of its own (DynamicIdentity), in `Group=` if it names one. As an ordinary user: that user, with
/// `User=`/`Group=` looked up for the spawn to apply (it fails unless they are the user's own). A print hot folder
/// (`Print=`) without `User=` runs its jobs as `nobody` (`user(of:isRoot:)` says why).
public enum HandlerIdentities {
    public static func resolve(_ registrations: [HandlerRegistration], isRoot: Bool, containersPath: String)
        -> [String: Result<Identity, Identity.LookupError>] {
        var identities: [String: Result<Identity, Identity.LookupError>] = [:]
        let named = registrations.filter { user(of: $0, isRoot: isRoot) != nil || (!isRoot && $0.group != nil) }
        for registration in named {
            do throws(Identity.LookupError) {
                identities[registration.identifier] = .success(
                    try Identity.resolve(user: user(of: registration, isRoot: isRoot) ?? currentUserName(),
                                         group: registration.group))
            } catch {
                identities[registration.identifier] = .failure(error)
            }
        }
        guard isRoot else { return identities }
        let unnamed = registrations.filter { user(of: $0, isRoot: isRoot) == nil }
        let containers = try? Directory(path: containersPath)
        let dynamic = DynamicIdentity.allocate(unnamed.map(\.identifier), containers: containers) { handler in
            containersPath + "/" + handler + "/Documents"
        }
        for registration in unnamed {
            guard let identity = dynamic[registration.identifier] else { continue }
            guard let group = registration.group else {
                identities[registration.identifier] = .success(identity)
                continue
            }
            do throws(Identity.LookupError) {
                let gid = try Identity.lookupGroup(group)
                identities[registration.identifier] = .success(
                    Identity(uid: identity.uid, gid: gid, groups: [gid], name: identity.name, home: identity.home))
            } catch {
                identities[registration.identifier] = .failure(error)
            }
        }
        return identities
    }

    /// The user a registration runs as: its `User=`; for a print hot folder (`Print=`) run by root without one,
    /// `nobody`. A print job talks to cupsd over its local socket, where cupsd takes the peer's uid for the job's owner
    /// and looks it up in the user database: CUPS 2.4 crashes on a uid it cannot find there, which every identity of
    /// the agent's own (DynamicIdentity) is.
    static func user(of registration: HandlerRegistration, isRoot: Bool) -> String? {
        registration.user ?? (isRoot && registration.printer != nil ? printUser : nil)
    }

    /// Who a print hot folder's job runs as, by default.
    public static let printUser = "nobody"

    static func currentUserName() -> String {
        let uid = CurrentProcess.effectiveUserID
        return sys_getpwuid_name(uid) ?? String(uid)
    }
}
