import CShims
import Glibc

/// A read descriptor that yields `contents` and then end-of-file: a pipe already filled when the
/// document fits in the pipe's buffer (the usual case, and cheaper), else a sealed memory file.
/// Either way the agent never blocks on a handler that does not read its stdin.
public func makeStandardInput(name: String, contents: [UInt8]) throws(SystemError) -> FileDescriptor {
    // pipe(7): 64 KiB by default, and never less than one page even past pipe-user-pages-soft; a write
    // of at most PIPE_BUF (4096) bytes into an empty pipe is whole and never blocks. Larger documents
    // go to a memory file.
    if contents.count <= Int(PIPE_BUF) {
        var ends: [CInt] = [-1, -1]
        if sys_pipe2(&ends, O_CLOEXEC) == 0 {
            let reader = FileDescriptor(rawValue: ends[0]), writer = FileDescriptor(rawValue: ends[1])
            defer { writer.close() }
            if writer.write(all: contents) == nil { return reader }
            reader.close()
        }
    }
    return try makeMemoryFile(name: name, contents: contents)
}
