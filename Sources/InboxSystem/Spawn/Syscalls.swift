import CShims
import Glibc

// The raw calls behind spawning, one tiny function per call. Nothing else in Spawn/ calls libc or CShims.

@inline(__always)
func sys_inbox_spawn(
    _ request: UnsafeMutablePointer<inbox_spawn_request>, _ pidfd: inout CInt, _ pid: inout pid_t
) -> CInt {
    inbox_spawn(request, &pidfd, &pid)
}

func sys_inbox_spawn_step_name(_ step: CInt) -> String {
    String(cString: inbox_spawn_step_name(step))
}

@inline(__always)
func sys_pidfd_send_signal(_ pidfd: CInt, _ signal: CInt) -> CInt {
    inbox_pidfd_send_signal(pidfd, signal)
}

@inline(__always)
func sys_pidfd_open(_ pid: pid_t) -> CInt {
    inbox_pidfd_open(pid)
}

@inline(__always)
func sys_waitid_pidfd(_ pidfd: CInt, _ code: inout CInt, _ status: inout CInt, _ options: CInt) -> CInt {
    inbox_waitid_pidfd(pidfd, &code, &status, options)
}

@inline(__always)
func sys_memfd_create(_ name: String, _ flags: CUnsignedInt) -> CInt {
    inbox_memfd_create(name, flags)
}

@inline(__always)
func sys_pwrite(_ fd: CInt, _ bytes: UnsafeRawBufferPointer, _ offset: off_t) -> Int {
    Glibc.pwrite(fd, bytes.baseAddress, bytes.count, offset)
}

@inline(__always)
func sys_fcntl(_ fd: CInt, _ command: CInt, _ value: CInt) -> CInt {
    Glibc.fcntl(fd, command, value)
}

@inline(__always)
func sys_open(_ path: String, _ flags: CInt) -> CInt {
    Glibc.open(path, flags)
}
