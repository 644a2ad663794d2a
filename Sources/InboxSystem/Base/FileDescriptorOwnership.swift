import Glibc

extension FileDescriptor {
    /// fchown(2); failures are left to the checks that follow.
    func changeOwner(uid: UInt32, gid: UInt32) { _ = sys_fchown(rawValue, uid, gid) }
    /// fchmod(2).
    func changeMode(_ mode: mode_t) { _ = sys_fchmod(rawValue, mode) }
}
