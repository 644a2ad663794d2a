import CSystemd
import Glibc

func sys_sd_journal_sendv(_ iov: UnsafePointer<iovec>, _ count: CInt) -> CInt { sd_journal_sendv(iov, count) }

func sys_sd_journal_stream_fd(_ identifier: String, _ priority: CInt, _ levelPrefix: CInt) -> CInt {
    sd_journal_stream_fd(identifier, priority, levelPrefix)
}

func sys_isatty(_ fd: CInt) -> CInt { isatty(fd) }
