import CShims
import Glibc

// The raw calls behind Directory, FileSystem, SafeOpen and ExtendedAttributes, one tiny function per call.

func sys_openat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t = 0) -> CInt {
    openat(dirfd, name, flags, mode)
}

func sys_open(_ path: String, _ flags: CInt, _ mode: mode_t = 0) -> CInt { open(path, flags, mode) }

func sys_fstatat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ st: inout stat, _ flags: CInt) -> CInt {
    fstatat(dirfd, name, &st, flags)
}

func sys_mkdirat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ mode: mode_t) -> CInt { mkdirat(dirfd, name, mode) }

func sys_renameat2(_ from: CInt, _ old: UnsafePointer<CChar>, _ to: CInt, _ new: UnsafePointer<CChar>,
                   _ flags: CUnsignedInt) -> CInt {
    inbox_renameat2(from, old, to, new, flags)
}

func sys_unlinkat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ flags: CInt) -> CInt { unlinkat(dirfd, name, flags) }
/// linkat(2) with flags (AT_SYMLINK_FOLLOW: a /proc/self/fd path names the open file itself).
func sys_linkat(_ from: CInt, _ old: String, _ to: CInt, _ new: UnsafePointer<CChar>, _ flags: CInt) -> CInt {
    linkat(from, old, to, new, flags)
}

func sys_fgetxattr(_ fd: CInt, _ name: String, _ buffer: UnsafeMutableRawBufferPointer?) -> Int {
    inbox_fgetxattr(fd, name, buffer?.baseAddress, buffer?.count ?? 0)
}

func sys_fsetxattr(_ fd: CInt, _ name: String, _ value: UnsafeRawBufferPointer) -> CInt {
    inbox_fsetxattr(fd, name, value.baseAddress, value.count)
}

func sys_lsetxattr(_ path: String, _ name: String, _ value: UnsafeRawBufferPointer) -> CInt {
    inbox_lsetxattr(path, name, value.baseAddress, value.count)
}

func sys_fremovexattr(_ fd: CInt, _ name: String) -> CInt { inbox_fremovexattr(fd, name) }

func sys_flistxattr(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer?) -> Int {
    inbox_flistxattr(fd, buffer?.baseAddress?.assumingMemoryBound(to: CChar.self), buffer?.count ?? 0)
}

func sys_fdopendir(_ fd: CInt) -> OpaquePointer? { fdopendir(fd) }

func sys_opendir(_ path: String) -> OpaquePointer? { opendir(path) }


func sys_stat(_ path: String, _ st: inout stat) -> CInt { stat(path, &st) }

func sys_lstat(_ path: String, _ st: inout stat) -> CInt { lstat(path, &st) }

func sys_readlink(_ path: String, _ buffer: UnsafeMutableBufferPointer<CChar>) -> Int {
    readlink(path, buffer.baseAddress!, buffer.count)
}

func sys_mkdir(_ path: String, _ mode: mode_t) -> CInt { mkdir(path, mode) }

func sys_mkdtemp(_ template: UnsafeMutablePointer<CChar>) -> UnsafeMutablePointer<CChar>? { mkdtemp(template) }

func sys_fchownat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ uid: uid_t, _ gid: gid_t, _ flags: CInt) -> CInt {
    fchownat(dirfd, name, uid, gid, flags)
}

func sys_readdir(_ stream: OpaquePointer) -> UnsafeMutablePointer<dirent>? { readdir(stream) }

func sys_closedir(_ stream: OpaquePointer) -> CInt { closedir(stream) }

let O_PATH = CInt(INBOX_O_PATH)
let RENAME_NOREPLACE = INBOX_RENAME_NOREPLACE
let INBOX_SETLEASE = CInt(INBOX_F_SETLEASE)
let INBOX_GETLEASE = CInt(INBOX_F_GETLEASE)

func sys_access(_ path: String, _ mode: CInt) -> CInt { access(path, mode) }

func sys_mount_id(_ fd: CInt, _ id: inout UInt64) -> CInt {
    var raw: CUnsignedLongLong = 0
    let result = inbox_mount_id(fd, &raw)
    id = UInt64(raw)
    return result
}

/// fstatvfs(2) of `fd`: whether its mount is read-only (ST_RDONLY); false where the kernel cannot say.
func sys_read_only_mount(_ fd: CInt) -> Bool {
    var status = statvfs()
    return fstatvfs(fd, &status) == 0 && (status.f_flag & UInt(ST_RDONLY)) != 0
}

func sys_openat2(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ flags: CInt, _ resolve: UInt64) -> CInt {
    inbox_openat2(dirfd, name, flags, CUnsignedLongLong(resolve))
}

let RESOLVE_NO_XDEV = UInt64(INBOX_RESOLVE_NO_XDEV)
let RESOLVE_NO_MAGICLINKS = UInt64(INBOX_RESOLVE_NO_MAGICLINKS)
let RESOLVE_NO_SYMLINKS = UInt64(INBOX_RESOLVE_NO_SYMLINKS)
let RESOLVE_BENEATH = UInt64(INBOX_RESOLVE_BENEATH)
let RESOLVE_IN_ROOT = UInt64(INBOX_RESOLVE_IN_ROOT)
let AT_EMPTY_PATH = CInt(INBOX_AT_EMPTY_PATH)

/// statx(2) of `fd` for its mount: `id` 0 and `isRoot` nil where the kernel cannot say.
func sys_mount_status(_ fd: CInt, _ id: inout UInt64, _ isRoot: inout Bool?) -> CInt {
    var raw: CUnsignedLongLong = 0
    var root: CInt = -1
    let result = inbox_mount_status(fd, &raw, &root)
    id = UInt64(raw)
    isRoot = root < 0 ? nil : root != 0
    return result
}

func sys_chmod(_ path: String, _ mode: mode_t) -> CInt { chmod(path, mode) }
