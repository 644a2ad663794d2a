import CShims
import Glibc

/// An anonymous in-memory file holding `contents`, sealed against change, at offset 0, close-on-exec.
/// It hands a handler its stdin document: unlike a pipe, filling it never blocks however large the
/// document is. Give each child its own: the file offset is shared by everyone holding the file.
public func makeMemoryFile(name: String, contents: [UInt8]) throws(SystemError) -> FileDescriptor {
    guard !name.utf8.contains(0) else { throw SystemError("memfd_create", path: name, errno: .invalidArgument) }
    let raw: CInt
    switch retryingErrno({ sys_memfd_create(name, INBOX_MFD_CLOEXEC | INBOX_MFD_NOEXEC_SEAL) }) {
    case .success(let fd):
        raw = fd
    case .failure(.invalidArgument):
        // MFD_NOEXEC_SEAL is Linux 6.3+. Without it the file works the same; newer kernels merely log a warning.
        raw = try retrying("memfd_create", path: name) {
            sys_memfd_create(name, INBOX_MFD_CLOEXEC | INBOX_MFD_ALLOW_SEALING)
        }
    case .failure(let error):
        throw SystemError("memfd_create", path: name, errno: error)
    }
    let file = FileDescriptor(rawValue: raw)

    // pwrite leaves the file offset at 0, where the reader must start: no lseek needed.
    if let failure = contents.withUnsafeBytes({ file.write(all: $0, at: 0) }) {
        file.close()
        throw SystemError("pwrite", path: name, errno: failure)
    }

    // The document the handler reads is exactly the one we wrote, whoever else holds the file.
    let seals = INBOX_F_SEAL_WRITE | INBOX_F_SEAL_GROW | INBOX_F_SEAL_SHRINK | INBOX_F_SEAL_SEAL
    if case .failure(let error) = retryingErrno({ sys_fcntl(raw, INBOX_F_ADD_SEALS, seals) }) {
        file.close()
        throw SystemError("fcntl(F_ADD_SEALS)", path: name, errno: error)
    }
    return file
}

/// Opens /dev/null for reading and writing, close-on-exec: stdio for a child that gets no input or output.
public func openNullDevice() throws(SystemError) -> FileDescriptor {
    FileDescriptor(rawValue: try retrying("open", path: "/dev/null") { sys_open("/dev/null", O_RDWR | O_CLOEXEC) })
}
