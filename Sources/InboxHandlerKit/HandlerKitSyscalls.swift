import CShims
import Glibc

// The raw calls of the handler kit, one tiny function per call. Nothing else in the kit calls libc or CShims.

@inline(__always)
func sys_receive_with_fd(_ socket: CInt, _ buffer: UnsafeMutableRawBufferPointer, _ fd: inout CInt,
                         _ truncated: inout CInt) -> Int {
    inbox_receive_with_fd(socket, buffer.baseAddress, buffer.count, &fd, &truncated, 0)
}

@inline(__always)
func sys_send(_ socket: CInt, _ bytes: UnsafeRawBufferPointer) -> Int {
    inbox_send_with_fd(socket, bytes.baseAddress, bytes.count, -1, 0)
}

@inline(__always)
func sys_read(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    read(fd, buffer.baseAddress, buffer.count)
}

@inline(__always)
func sys_close(_ fd: CInt) {
    _ = close(fd)
}

@inline(__always)
func sys_getenv(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

@inline(__always)
func sys_unsetenv(_ name: String) {
    _ = unsetenv(name)
}

@inline(__always)
func sys_getpid() -> Int32 {
    getpid()
}

@inline(__always)
func sys_errno() -> CInt {
    errno
}

@inline(__always)
func sys_strerror(_ code: CInt) -> String {
    String(cString: strerror(code))
}

@inline(__always)
func kitWrite(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) -> Int {
    write(fd, bytes.baseAddress, bytes.count)
}

@inline(__always)
func kitOpenAppend(_ path: String) -> CInt {
    open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
}
