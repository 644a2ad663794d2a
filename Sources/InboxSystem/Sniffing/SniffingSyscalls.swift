import CMagic
import CShims
import Glibc

// libmagic(3) and the sniffer's channel (a SOCK_SEQPACKET socket pair);
// nothing else in the module calls them.

func sys_magic_open(_ flags: CInt) -> OpaquePointer? { magic_open(flags) }
func sys_magic_load(_ cookie: OpaquePointer, _ path: UnsafePointer<CChar>?) -> CInt { magic_load(cookie, path) }
func sys_magic_setparam(_ cookie: OpaquePointer, _ parameter: CInt, _ value: Int) -> CInt {
    withUnsafePointer(to: value) { magic_setparam(cookie, parameter, $0) }
}
func sys_magic_buffer(_ cookie: OpaquePointer, _ bytes: UnsafeRawPointer, _ count: Int) -> UnsafePointer<CChar>? {
    magic_buffer(cookie, bytes, count)
}
func sys_magic_setflags(_ cookie: OpaquePointer, _ flags: CInt) -> CInt { magic_setflags(cookie, flags) }
func sys_magic_error(_ cookie: OpaquePointer) -> UnsafePointer<CChar>? { magic_error(cookie) }
func sys_magic_close(_ cookie: OpaquePointer) { magic_close(cookie) }
func sys_magic_version() -> CInt { magic_version() }

func sys_socketpair_seqpacket(_ fds: inout [CInt]) -> CInt {
    fds.withUnsafeMutableBufferPointer { inbox_seqpacket_pair($0.baseAddress) }
}
/// send(2) with MSG_NOSIGNAL: a peer that is gone is EPIPE, never SIGPIPE.
func sys_send(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) -> Int {
    send(fd, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL))
}
func sys_recv(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer) -> Int { recv(fd, buffer.baseAddress, buffer.count, 0) }
