import Glibc

/// Reads a configuration file of at most `limit` bytes: a regular file, opened without blocking.
public func readBounded(_ path: String, limit: Int) -> Result<[UInt8], ReadError> {
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
    if fd < 0 { return .failure(ReadError("cannot open: \(Errno.current)")) }
    defer { _ = close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else { return .failure(ReadError("cannot stat: \(Errno.current)")) }
    guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(ReadError("not a regular file")) }
    guard st.st_size <= limit else { return .failure(ReadError("file too large (\(st.st_size) bytes, at most \(limit))")) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while bytes.count <= limit {
        let n = chunk.withUnsafeMutableBytes { sys_read(fd, $0.baseAddress!, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return .failure(ReadError("cannot read: \(Errno.current)"))
        }
        if n == 0 { break }
        bytes += chunk.prefix(n)
    }
    guard bytes.count <= limit else { return .failure(ReadError("file too large (more than \(limit) bytes)")) }
    return .success(bytes)
}

public struct ReadError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
