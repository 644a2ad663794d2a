import Glibc

/// Reads a configuration file of at most `limit` bytes: a regular file, opened without blocking.
/// A final symlink is followed (handlers.d entries may be links); a FIFO or device is opened but never read.
public func readBounded(_ path: String, limit: Int) -> Result<[UInt8], ReadError> {
    let file: FileDescriptor
    switch retryingErrno({ sys_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }) {
    case .success(let fd): file = FileDescriptor(rawValue: fd)
    case .failure(let error): return .failure(ReadError("cannot open: \(error)"))
    }
    defer { file.close() }
    let st: stat
    do { st = try file.status() } catch { return .failure(ReadError("cannot stat: \(error)")) }
    guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(ReadError("not a regular file")) }
    guard st.st_size <= limit else { return .failure(ReadError("file too large (\(st.st_size) bytes, at most \(limit))")) }
    // One byte more than the size, so a file that grew since fstat is noticed; /proc files say 0 and grow the buffer.
    var bytes = [UInt8](repeating: 0, count: Int(st.st_size) + 1)
    var count = 0
    while count <= limit {
        if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: 65536)) }
        let start = count
        let read = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try file.read(fully: .init(rebasing: buffer[start...]), at: Int64(start)) }
        }
        switch read {
        case .success(let n): count += n
        case .failure(let error): return .failure(ReadError("cannot read: \(error)"))
        }
        if count < bytes.count { break }
    }
    guard count <= limit else { return .failure(ReadError("file too large (more than \(limit) bytes)")) }
    bytes.removeSubrange(count...)
    return .success(bytes)
}

public struct ReadError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
