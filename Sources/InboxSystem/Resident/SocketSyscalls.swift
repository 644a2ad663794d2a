import CShims
import Glibc

// The raw calls behind resident handlers' sockets, one tiny function per call. Nothing else in Resident/ calls libc
// or CShims.

@inline(__always)
func sys_seqpacket_pair(_ ends: inout [CInt]) -> CInt {
    inbox_seqpacket_pair(&ends)
}

@inline(__always)
func sys_send_with_fd(_ socket: CInt, _ bytes: UnsafeRawBufferPointer, _ fd: CInt) -> Int {
    inbox_send_with_fd(socket, bytes.baseAddress, bytes.count, fd, INBOX_MSG_DONTWAIT)
}

@inline(__always)
func sys_receive_with_fd(_ socket: CInt, _ buffer: UnsafeMutableRawBufferPointer, _ fd: inout CInt,
                         _ truncated: inout CInt) -> Int {
    inbox_receive_with_fd(socket, buffer.baseAddress, buffer.count, &fd, &truncated, INBOX_MSG_DONTWAIT)
}

@inline(__always)
func sys_shutdown(_ socket: CInt, _ how: CInt) -> CInt {
    shutdown(socket, how)
}
