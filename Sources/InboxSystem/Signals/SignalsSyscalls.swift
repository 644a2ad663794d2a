import Glibc

// The raw calls behind Signals, one tiny function per call.

func sys_sigemptyset(_ set: inout sigset_t) -> CInt { sigemptyset(&set) }

func sys_sigaddset(_ set: inout sigset_t, _ signal: CInt) -> CInt { sigaddset(&set, signal) }

func sys_pthread_sigmask(_ how: CInt, _ set: inout sigset_t) -> CInt { pthread_sigmask(how, &set, nil) }

func sys_sigtimedwait(_ set: inout sigset_t, _ timeout: inout timespec) -> CInt { sigtimedwait(&set, nil, &timeout) }

func sys_sigaction(_ signal: CInt, _ action: inout sigaction) -> CInt { sigaction(signal, &action, nil) }

func sys_signal(_ signal: CInt, _ handler: __sighandler_t?) -> __sighandler_t? { Glibc.signal(signal, handler) }

func sys_kill(_ pid: pid_t, _ signal: CInt) -> CInt { kill(pid, signal) }
