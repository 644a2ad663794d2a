import CShims
import Glibc

// The raw calls behind CurrentProcess, one tiny function per call.

func sys_getpid() -> pid_t { getpid() }

func sys_getuid() -> uid_t { getuid() }

func sys_geteuid() -> uid_t { geteuid() }

func sys_getenv(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

func sys_getcwd(_ buffer: UnsafeMutableBufferPointer<CChar>) -> UnsafeMutablePointer<CChar>? {
    getcwd(buffer.baseAddress, buffer.count)
}

func sys_execv(_ path: UnsafePointer<CChar>, _ argv: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    execv(path, argv)
}

func sys_exit(_ status: CInt) -> Never { exit(status) }

func sys_environ() -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> { environ }

func sys_inbox_set_child_subreaper() -> CInt { inbox_set_child_subreaper() }

func sys_inbox_malloc_trim() -> CInt { inbox_malloc_trim() }

func sys_sysconf(_ name: CInt) -> Int { sysconf(name) }

/// gethostname(2); nil on failure.
func sys_hostname() -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
