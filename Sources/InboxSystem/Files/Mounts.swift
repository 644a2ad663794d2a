import Glibc

extension Directory {
    /// The id of the mount this directory is reached through (statx(2) STATX_MNT_ID): two bind mounts of one
    /// filesystem have different ids and the same st_dev, and rename(2) between them fails with EXDEV all the same.
    /// nil where the kernel cannot say (before Linux 5.8).
    public func mountID() -> UInt64? {
        var id: UInt64 = 0
        return sys_mount_id(descriptor.rawValue, &id) == 0 ? id : nil
    }

    /// Whether a rename(2) from this directory to `other` would cross mounts (and fail with EXDEV): by mount id, else
    /// by device; false when neither can be told.
    public func isOnAnotherMount(than other: Directory) -> Bool {
        if let mine = mountID(), let theirs = other.mountID() { return mine != theirs }
        guard let mine = try? descriptor.status(), let theirs = try? other.descriptor.status() else { return false }
        return mine.st_dev != theirs.st_dev
    }
}
