import Glibc
import InboxCore

// PackageTree.remove: depth first, by descriptor. Each entry is unlinked as itself (unlinkat(2) never follows a
// link: a symlink goes, its target stays); one that is a directory (EISDIR) is opened by the rules of PackageOpener,
// emptied, and removed with AT_REMOVEDIR. A mount point is never entered: it is left, and the removal reports EBUSY.
// One descriptor per level is held, and no more than `removalDepth` levels are entered (ELOOP beyond).

extension PackageTree {
    /// Levels of directories `remove` enters, a deeper one left (ELOOP): as many as MaxPackageDepth= may allow, so
    /// whatever passed its check can be removed (holding one descriptor per level).
    public static let removalDepth = PackageLimits.depthRange.upperBound

    /// `remove` with the resolution chosen and the levels it enters (tests try a few).
    static func remove(_ name: [UInt8], in directory: Directory, resolution: PackageResolution,
                       levels: Int = removalDepth) -> Errno? {
        let opener: PackageOpener
        do { opener = try PackageOpener.beneath(directory.descriptor, resolution: resolution) } catch { return error }
        switch openForRemoval(name, in: directory.descriptor, opener) {
        case .gone: return nil
        case .mountPoint: return .mountPointBusy
        case .notDirectory: return unlink(name, in: directory.descriptor, flags: 0)
        case .failed(let error): return error
        case .directory(let stream):
            let error = empty(stream, level: 1, bound: levels, opener)
            return error ?? unlink(name, in: directory.descriptor, flags: AT_REMOVEDIR)
        }
    }

    private enum Opened {
        case directory(DirectoryStream)
        case notDirectory
        case gone
        case mountPoint
        case failed(Errno)
    }

    private static func openForRemoval(_ name: [UInt8], in parent: FileDescriptor, _ opener: PackageOpener) -> Opened {
        switch opener.pin(name, in: parent, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) {
        case .success(let (fd, _)):
            do { return .directory(try DirectoryStream(adopting: fd)) } catch { return .failed(error) }
        case .failure(.gone): return .gone
        case .failure(.mountPoint): return .mountPoint
        // O_NOFOLLOW|O_DIRECTORY: a symlink (ELOOP) or anything else (ENOTDIR), neither followed nor opened.
        case .failure(.failed(.notDirectory)), .failure(.failed(.tooManyLinks)): return .notDirectory
        case .failure(.failed(let error)): return .failed(error)
        }
    }

    /// Removes every entry of the directory `stream` reads; the first error, after going on with the others.
    private static func empty(_ stream: DirectoryStream, level: Int, bound: Int, _ opener: PackageOpener) -> Errno? {
        var first: Errno?
        while let name = stream.next() {
            let parent = stream.descriptor
            switch unlink(name, in: parent, flags: 0) {
            case nil: continue
            case .isDirectory?:
                guard level <= bound else {
                    first = first ?? .tooManyLinks
                    continue
                }
                switch openForRemoval(name, in: parent, opener) {
                case .gone: continue
                case .mountPoint: first = first ?? .mountPointBusy
                case .notDirectory:
                    let error = unlink(name, in: parent, flags: 0)
                    if first == nil { first = error }
                case .failed(let error): first = first ?? error
                case .directory(let inner):
                    // Emptied (else its error) and removed, whatever went wrong with an entry before.
                    let error = empty(inner, level: level + 1, bound: bound, opener) ?? unlink(name, in: parent, flags: AT_REMOVEDIR)
                    if first == nil { first = error }
                }
            case let error?:
                // EBUSY: a file with a bind mount on it.
                first = first ?? error
            }
        }
        if errno != 0 { first = first ?? .current }
        return first
    }

    /// unlinkat(2); nil when it is gone (ENOENT too).
    private static func unlink(_ name: [UInt8], in directory: FileDescriptor, flags: CInt) -> Errno? {
        switch retryingErrno({ withCName(name) { sys_unlinkat(directory.rawValue, $0, flags) } }) {
        case .success, .failure(.noSuchFile): nil
        case .failure(let error): error
        }
    }
}

extension Errno {
    /// EBUSY: a mount point, left where it is.
    public static let mountPointBusy = Errno(rawValue: EBUSY)
}
