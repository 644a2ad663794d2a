import Glibc

// The calls behind X11Connection, X11Clipboard and X11ClipboardServer: a stream socket to the X server's Unix socket
// (a path, or Linux's abstract name), the host's name for .Xauthority, and the owner's stdin put back to /dev/null.
// This file does not import CShims: in a release (whole-module) build, a file that imports both CShims and Glibc and
// names SOCK_* makes those constants invisible to the module's files that import Glibc alone.

/// socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC).
func sys_unix_stream_socket() -> CInt { socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0) }

/// connect(2) to the Unix socket `path`; `abstract`: the same name in the abstract namespace (a NUL before it).
func sys_connect_unix_name(_ fd: CInt, _ path: String, abstract: Bool) -> CInt {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = (abstract ? [0] : []) + Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { errno = ENAMETOOLONG; return -1 }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
    // An abstract name is exactly its bytes: the length says where it ends.
    let length = abstract ? MemoryLayout<sa_family_t>.size + bytes.count : MemoryLayout<sockaddr_un>.size
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(length)) }
    }
}

/// dup2(2).
func sys_dup2(_ from: CInt, _ to: CInt) -> CInt { dup2(from, to) }
