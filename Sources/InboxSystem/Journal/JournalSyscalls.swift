import CShims
import CSystemd
import Glibc

func sys_sd_journal_stream_fd(_ identifier: String, _ priority: CInt, _ levelPrefix: CInt) -> CInt {
    sd_journal_stream_fd(identifier, priority, levelPrefix)
}

func sys_isatty(_ fd: CInt) -> CInt { isatty(fd) }

// journald's native protocol over a datagram socket of our own (HandlerJournal), for what must never block the agent:
// non-blocking, connected, so that poll(2) says when journald's queue has room again (unix(7)).

func sys_socket(_ domain: CInt, _ type: CInt, _ proto: CInt) -> CInt { socket(domain, type, proto) }

/// connect(2) to a unix socket `path` (shorter than sun_path; journald's is).
func sys_connect_unix(_ fd: CInt, _ path: String) -> CInt {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { errno = ENAMETOOLONG; return -1 }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

func sys_setsockopt_int(_ fd: CInt, _ level: CInt, _ name: CInt, _ value: CInt) -> CInt {
    var value = value
    return setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<CInt>.size))
}

/// sendmsg(2) of one datagram gathered from `iov`, without waiting (MSG_DONTWAIT; the shim's constant, as Glibc's
/// MSG_* are not always imported). A datagram socket raises no SIGPIPE, and the agent ignores it anyway.
func sys_sendmsg_dontwait(_ fd: CInt, _ iov: UnsafeMutablePointer<iovec>, _ count: Int) -> Int {
    var header = msghdr()
    header.msg_iov = iov
    header.msg_iovlen = count
    return sendmsg(fd, &header, INBOX_MSG_DONTWAIT)
}

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
