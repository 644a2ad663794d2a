import CShims
import CSystemd
import Glibc

// The service manager's notification socket (sd_notify(3)), spoken by ServiceNotifier over a datagram socket of its
// own: non-blocking and connected, so that a send never waits (MSG_DONTWAIT) and poll(2) says when the manager's
// queue has room again (unix(7)). sd_notify(3) itself would wait in sendmsg for as long as the manager does not read.

/// connect(2) to `address`: a path, or an abstract name (sun_path starts with a NUL and the length counts only the
/// name's bytes, unix(7)).
func sys_connect_notify(_ fd: CInt, _ address: NotifyAddress) -> CInt {
    var socketAddress = sockaddr_un()
    socketAddress.sun_family = sa_family_t(AF_UNIX)
    let (bytes, abstract): ([UInt8], Bool) = switch address {
    case .path(let path): (Array(path.utf8), false)
    case .abstract(let name): ([0] + Array(name.utf8), true)
    }
    guard bytes.count < MemoryLayout.size(ofValue: socketAddress.sun_path) else { errno = ENAMETOOLONG; return -1 }
    withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in raw.copyBytes(from: bytes) }
    let length = abstract ? MemoryLayout<sa_family_t>.size + bytes.count : MemoryLayout<sockaddr_un>.size
    return withUnsafePointer(to: &socketAddress) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(length)) }
    }
}

/// send(2) of one datagram without waiting.
func sys_send_dontwait(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) -> Int {
    send(fd, bytes.baseAddress, bytes.count, INBOX_MSG_DONTWAIT)
}

/// sd_watchdog_enabled(3): whether the manager asked for WATCHDOG=1 (WATCHDOG_USEC=, for this pid), and how often.
/// It only reads the environment.
func sys_sd_watchdog_enabled(_ usec: UnsafeMutablePointer<UInt64>) -> CInt { sd_watchdog_enabled(0, usec) }
