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
func sys_pipe2(_ ends: inout [CInt], _ flags: CInt) -> CInt {
    inbox_pipe2(&ends, flags)
}

@inline(__always)
func sys_waitpid(_ pid: pid_t, _ status: inout CInt, _ options: CInt) -> pid_t {
    waitpid(pid, &status, options)
}
