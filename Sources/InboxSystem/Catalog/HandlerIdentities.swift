import Glibc
import InboxCore

/// Who each handler runs as (docs/design.md, Identities: a handler never runs as root unless `User=root`).
/// As root: `User=` is looked up (with `Group=` instead of the user's group); without `User=` a handler gets an
/// identity of its own (DynamicIdentity), in `Group=` if it names one. As an ordinary user: that user, with
/// `User=`/`Group=` looked up for the spawn to apply (it fails unless they are the user's own).
public enum HandlerIdentities {
    public static func resolve(_ registrations: [HandlerRegistration], isRoot: Bool, containersPath: String)
        -> [String: Result<Identity, Identity.LookupError>] {
        var identities: [String: Result<Identity, Identity.LookupError>] = [:]
        for registration in registrations where registration.user != nil || (!isRoot && registration.group != nil) {
            do throws(Identity.LookupError) {
                identities[registration.identifier] = .success(
                    try Identity.resolve(user: registration.user ?? currentUserName(), group: registration.group))
            } catch {
                identities[registration.identifier] = .failure(error)
            }
        }
        guard isRoot else { return identities }
        let unnamed = registrations.filter { $0.user == nil }
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

    static func currentUserName() -> String {
        let uid = CurrentProcess.effectiveUserID
        return sys_getpwuid_name(uid) ?? String(uid)
    }
}
