import CShims
import Glibc

func sys_openat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t = 0) -> CInt {
    openat(dirfd, name, flags, mode)
}

func sys_open(_ path: String, _ flags: CInt, _ mode: mode_t = 0) -> CInt { open(path, flags, mode) }

func sys_fstat(_ fd: CInt, _ st: inout stat) -> CInt { fstat(fd, &st) }

func sys_fstatat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ st: inout stat, _ flags: CInt) -> CInt {
    fstatat(dirfd, name, &st, flags)
}

func sys_mkdirat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ mode: mode_t) -> CInt { mkdirat(dirfd, name, mode) }

func sys_renameat2(_ from: CInt, _ old: UnsafePointer<CChar>, _ to: CInt, _ new: UnsafePointer<CChar>,
                   _ flags: CUnsignedInt) -> CInt {
    inbox_renameat2(from, old, to, new, flags)
}

func sys_unlinkat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ flags: CInt) -> CInt { unlinkat(dirfd, name, flags) }

func sys_fgetxattr(_ fd: CInt, _ name: String, _ buffer: UnsafeMutableRawBufferPointer?) -> Int {
    inbox_fgetxattr(fd, name, buffer?.baseAddress, buffer?.count ?? 0)
}

func sys_fsetxattr(_ fd: CInt, _ name: String, _ value: UnsafeRawBufferPointer) -> CInt {
    inbox_fsetxattr(fd, name, value.baseAddress, value.count)
}

func sys_fremovexattr(_ fd: CInt, _ name: String) -> CInt { inbox_fremovexattr(fd, name) }

func sys_flistxattr(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer?) -> Int {
    inbox_flistxattr(fd, buffer?.baseAddress?.assumingMemoryBound(to: CChar.self), buffer?.count ?? 0)
}

func sys_fchown(_ fd: CInt, _ uid: uid_t, _ gid: gid_t) -> CInt { fchown(fd, uid, gid) }

func sys_fchmod(_ fd: CInt, _ mode: mode_t) -> CInt { fchmod(fd, mode) }

func sys_read(_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(fd, buffer, count) }

func sys_fdopendir(_ fd: CInt) -> OpaquePointer? { fdopendir(fd) }

let O_PATH = CInt(INBOX_O_PATH)
let RENAME_NOREPLACE = INBOX_RENAME_NOREPLACE
