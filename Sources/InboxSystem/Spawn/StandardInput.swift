import CShims
import Glibc

/// A read descriptor that yields `contents` and then end-of-file: a pipe already filled when the
/// document fits in the pipe's buffer (the usual case, and cheaper), else a sealed memory file.
/// Either way the agent never blocks on a handler that does not read its stdin.
public func makeStandardInput(name: String, contents: [UInt8]) throws(SystemError) -> FileDescriptor {
    // pipe(7): 64 KiB by default, but as little as one page once a user exceeds pipe-user-pages-soft,
    // so the write end is non-blocking and a short write falls back to the memory file.
    if contents.count <= 4096 {
        var ends: [CInt] = [-1, -1]
        if inbox_pipe2(&ends, O_CLOEXEC | O_NONBLOCK) == 0 {
            let reader = FileDescriptor(rawValue: ends[0]), writer = FileDescriptor(rawValue: ends[1])
            defer { writer.close() }
            let written = contents.withUnsafeBytes { write(writer.rawValue, $0.baseAddress, $0.count) }
            if written == contents.count {
                // The handler's end must block as usual: O_NONBLOCK is per open file, and only the
                // write end, which the handler never sees, was meant to have it.
                _ = fcntl(reader.rawValue, F_SETFL, 0)
                return reader
            }
            reader.close()
        }
    }
    return try makeMemoryFile(name: name, contents: contents)
}
