import Glibc

// The raw calls behind FileDescriptor, Errno and the clocks, one tiny function per call.

func sys_close(_ fd: CInt) -> CInt { close(fd) }

func sys_read(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer) -> Int { read(fd, buffer.baseAddress, buffer.count) }

func sys_pread(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer, _ offset: off_t) -> Int {
    pread(fd, buffer.baseAddress, buffer.count, offset)
}

func sys_write(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) -> Int { write(fd, bytes.baseAddress, bytes.count) }

func sys_pwrite(_ fd: CInt, _ bytes: UnsafeRawBufferPointer, _ offset: off_t) -> Int {
    pwrite(fd, bytes.baseAddress, bytes.count, offset)
}

func sys_fsync(_ fd: CInt) -> CInt { fsync(fd) }

func sys_fchown(_ fd: CInt, _ uid: uid_t, _ gid: gid_t) -> CInt { fchown(fd, uid, gid) }

func sys_fchmod(_ fd: CInt, _ mode: mode_t) -> CInt { fchmod(fd, mode) }

func sys_fstat(_ fd: CInt, _ st: inout stat) -> CInt { fstat(fd, &st) }

func sys_fcntl(_ fd: CInt, _ command: CInt, _ value: CInt) -> CInt { fcntl(fd, command, value) }

func sys_lseek(_ fd: CInt, _ offset: Int64, _ whence: CInt) -> Int64 { Int64(lseek(fd, off_t(offset), whence)) }

func sys_poll(_ poller: inout pollfd, _ milliseconds: CInt) -> CInt { poll(&poller, 1, milliseconds) }

func sys_strerror(_ error: CInt) -> String { String(cString: strerror(error)) }

func sys_clock_gettime(_ clock: clockid_t, _ time: inout timespec) -> CInt { clock_gettime(clock, &time) }

func sys_gmtime_r(_ seconds: inout time_t, _ parts: inout tm) -> Bool { gmtime_r(&seconds, &parts) != nil }
