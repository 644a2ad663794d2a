import Glibc

// The raw calls the package fuzz entry builds its hostile trees with, one tiny function per call. Nothing in the
// agent calls them.

func sys_symlinkat(_ target: UnsafePointer<CChar>, _ dirfd: CInt, _ name: UnsafePointer<CChar>) -> CInt {
    symlinkat(target, dirfd, name)
}

func sys_linkat(_ from: CInt, _ old: UnsafePointer<CChar>, _ to: CInt, _ new: UnsafePointer<CChar>) -> CInt {
    linkat(from, old, to, new, 0)
}

func sys_mkfifoat(_ dirfd: CInt, _ name: UnsafePointer<CChar>, _ mode: mode_t) -> CInt { mkfifoat(dirfd, name, mode) }

func sys_ftruncate(_ fd: CInt, _ size: Int64) -> CInt { ftruncate(fd, off_t(size)) }

/// A Unix socket bound at `path` (at most 107 bytes), its descriptor closed again: the socket file stays.
func sys_bind_unix_socket(_ path: [UInt8]) -> CInt {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return -1 }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.prefix($0.count - 1)) }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}
