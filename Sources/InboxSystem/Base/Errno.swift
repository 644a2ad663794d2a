import Glibc

/// A POSIX error number with the names we use.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let notPermitted = Errno(rawValue: EPERM)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let crossDevice = Errno(rawValue: EXDEV)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let diskQuota = Errno(rawValue: EDQUOT)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    public static let ioError = Errno(rawValue: EIO)
    public static let tooManyLinks = Errno(rawValue: ELOOP)
    public static let rangeError = Errno(rawValue: ERANGE)
    public static let noData = Errno(rawValue: ENODATA)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    public static let noSys = Errno(rawValue: ENOSYS)
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    public static let tooBig = Errno(rawValue: E2BIG)

    public var description: String { sys_strerror(rawValue) }
}

/// A failed system call: which one, on what path, and why.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let path: String?
    public let errno: Errno
    /// What to do about it, when there is something to say (which limit to raise).
    public let hint: String?

    public init(_ operation: String, path: String? = nil, errno: Errno, hint: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.hint = hint
    }

    public var description: String {
        let text = path.map { "\(operation) \($0): \(errno)" } ?? "\(operation): \(errno)"
        return hint.map { text + " (\($0))" } ?? text
    }
}

/// Runs a libc call that returns -1 and sets errno on failure, retrying on EINTR.
/// `close` must never go through here: Linux releases the fd even when it reports EINTR.
@inline(__always)
func retrying<T: BinaryInteger>(
    _ operation: String, path: String? = nil, _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        throw SystemError(operation, path: path, errno: error)
    }
}

/// The same, returning the bare `Errno` for callers that branch on it. A caller that must see a signal opts out with
/// `retryingInterrupted` (asked after each EINTR): false returns `.interrupted`.
@inline(__always)
func retryingErrno<T: BinaryInteger>(retryingInterrupted: () -> Bool = { true }, _ body: () -> T) -> Result<T, Errno> {
    while true {
        let result = body()
        if result != -1 { return .success(result) }
        let error = Errno.current
        if error == .interrupted && retryingInterrupted() { continue }
        return .failure(error)
    }
}
