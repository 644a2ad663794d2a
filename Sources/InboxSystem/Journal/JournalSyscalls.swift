import CSystemd
import Glibc

func sys_sd_journal_sendv(_ iov: UnsafePointer<iovec>, _ count: CInt) -> CInt { sd_journal_sendv(iov, count) }

func sys_sd_journal_stream_fd(_ identifier: String, _ priority: CInt, _ levelPrefix: CInt) -> CInt {
    sd_journal_stream_fd(identifier, priority, levelPrefix)
}

func sys_isatty(_ fd: CInt) -> CInt { isatty(fd) }

func sys_sd_journal_open(_ journal: UnsafeMutablePointer<OpaquePointer?>, _ flags: CInt) -> CInt {
    sd_journal_open(journal, flags)
}

func sys_sd_journal_add_match(_ journal: OpaquePointer, _ match: String) -> CInt {
    match.withCString { sd_journal_add_match(journal, $0, 0) }
}

func sys_sd_journal_seek_tail(_ journal: OpaquePointer) -> CInt { sd_journal_seek_tail(journal) }

func sys_sd_journal_previous(_ journal: OpaquePointer) -> CInt { sd_journal_previous(journal) }

func sys_sd_journal_get_data(_ journal: OpaquePointer, _ field: String, _ data: UnsafeMutablePointer<UnsafeRawPointer?>,
                             _ length: UnsafeMutablePointer<Int>) -> CInt {
    sd_journal_get_data(journal, field, data, length)
}

func sys_sd_journal_close(_ journal: OpaquePointer) { sd_journal_close(journal) }
