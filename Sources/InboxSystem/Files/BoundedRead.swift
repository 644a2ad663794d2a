import Glibc

/// Reads a configuration file of at most `limit` bytes: a regular file, opened without blocking.
/// A final symlink is followed (handlers.d entries may be links); a FIFO or device is opened but never read.
public func readBounded(_ path: String, limit: Int) -> Result<[UInt8], ReadError> {
    readBounded(path, limit: limit, accepting: { _ in nil }).map(\.bytes)
}

/// `readBounded`, and what fstat(2) said of the opened file; `accepting` looks at that status before a byte is
/// read and returns why the file is refused (`ReadError.refused`), or nil.
public func readBounded(_ path: String, limit: Int, accepting: (FileStatus) -> String?)
    -> Result<(bytes: [UInt8], status: FileStatus), ReadError> {
    let file: FileDescriptor
    switch retryingErrno({ sys_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }) {
    case .success(let fd): file = FileDescriptor(rawValue: fd)
    case .failure(let error): return .failure(.cannotOpen(error))
    }
    defer { file.close() }
    let st: stat
    do { st = try file.status() } catch { return .failure(.cannotStat(error)) }
    guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(.notRegularFile) }
    if let reason = accepting(st) { return .failure(.refused(reason)) }
    guard st.st_size <= limit else { return .failure(.tooLarge(size: Int64(st.st_size), limit: limit)) }
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
        case .failure(let error): return .failure(.cannotRead(error))
        }
        if count < bytes.count { break }
    }
    guard count <= limit else { return .failure(.grewTooLarge(limit: limit)) }
    bytes.removeSubrange(count...)
    return .success((bytes, st))
}

/// Why `readBounded` read nothing. `description` is the text users see after the path.
public enum ReadError: Error, Sendable, Hashable, CustomStringConvertible {
    case cannotOpen(Errno)
    case cannotStat(Errno)
    case notRegularFile
    /// fstat said `size`, over `limit`.
    case tooLarge(size: Int64, limit: Int)
    /// It grew past `limit` while being read (or is a /proc file longer than that).
    case grewTooLarge(limit: Int)
    case cannotRead(Errno)
    /// The caller's check of the opened file's status refused it, for this reason.
    case refused(String)

    /// The system's reason, when there is one: `.noSuchFile` for a missing file.
    public var errno: Errno? {
        switch self {
        case .cannotOpen(let error), .cannotStat(let error), .cannotRead(let error): error
        case .notRegularFile, .tooLarge, .grewTooLarge, .refused: nil
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let error): "cannot open: \(error)"
        case .cannotStat(let error): "cannot stat: \(error)"
        case .notRegularFile: "not a regular file"
        case .tooLarge(let size, let limit): "file too large (\(size) bytes, at most \(limit))"
        case .grewTooLarge(let limit): "file too large (more than \(limit) bytes)"
        case .cannotRead(let error): "cannot read: \(error)"
        case .refused(let reason): reason
        }
    }
}
