import Glibc

extension FileDescriptor {
    /// What a descriptor is opened for: open(2)'s access mode.
    public enum AccessMode: Sendable {
        case readOnly, writeOnly, readWrite
        /// O_PATH: a handle on the entry itself, neither read nor written (for fstat, openat, Landlock rules).
        case pathOnly

        var rawValue: CInt {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            case .pathOnly: O_PATH
            }
        }
    }

    /// open(2)'s other flags. O_CLOEXEC is not among them: the typed opens always add it (every fd is close-on-exec
    /// from birth).
    public struct OpenOptions: OptionSet, Sendable {
        public let rawValue: CInt
        public init(rawValue: CInt) { self.rawValue = rawValue }

        /// O_CREAT: create the file when missing, with the given permissions less the umask.
        public static let create = OpenOptions(rawValue: O_CREAT)
        /// O_EXCL: with `create`, fail with EEXIST when the name is taken (by anything, a link included).
        public static let exclusive = OpenOptions(rawValue: O_EXCL)
        /// O_TRUNC.
        public static let truncate = OpenOptions(rawValue: O_TRUNC)
        /// O_NOFOLLOW: a final symlink fails with ELOOP (`Errno.tooManyLinks`) instead of being followed.
        public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
        /// O_NONBLOCK: opening a FIFO or device does not wait.
        public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
        /// O_NOCTTY: a terminal opened is not made our controlling terminal.
        public static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
        /// O_DIRECTORY: fail with ENOTDIR unless it is a directory.
        public static let directory = OpenOptions(rawValue: O_DIRECTORY)

        /// The flags for open(2) and openat(2), with O_CLOEXEC.
        func flags(_ access: AccessMode) -> CInt { access.rawValue | rawValue | O_CLOEXEC }
    }

    /// open(2) by path, close-on-exec. `permissions` is for a file `.create` makes (less the umask). EINTR (a FIFO
    /// waiting for its other end) is retried while `retryingInterrupted` says so, else thrown.
    public static func open(_ path: String, _ access: AccessMode, options: OpenOptions = [], permissions: mode_t = 0,
                            retryingInterrupted: () -> Bool = { true }) throws(Errno) -> FileDescriptor {
        guard !path.utf8.contains(0) else { throw .invalidArgument }
        let flags = options.flags(access)
        return FileDescriptor(rawValue: try retryingErrno(retryingInterrupted: retryingInterrupted) {
            sys_open(path, flags, permissions)
        }.get())
    }
}

extension Directory {
    /// openat(2) of an entry, close-on-exec; add `.noFollow` unless a link is meant to be followed. EINTR as for
    /// `FileDescriptor.open(_:_:options:permissions:retryingInterrupted:)`.
    public func openFile(_ name: [UInt8], _ access: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions = [],
                         permissions: mode_t = 0o600,
                         retryingInterrupted: () -> Bool = { true }) throws(Errno) -> FileDescriptor {
        let flags = options.flags(access)
        return FileDescriptor(rawValue: try retryingErrno(retryingInterrupted: retryingInterrupted) {
            withCName(name) { sys_openat(descriptor.rawValue, $0, flags, permissions) }
        }.get())
    }

    /// The same, for a name the program chose.
    public func openFile(_ name: String, _ access: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions = [],
                         permissions: mode_t = 0o600,
                         retryingInterrupted: () -> Bool = { true }) throws(Errno) -> FileDescriptor {
        try openFile(Array(name.utf8), access, options: options, permissions: permissions,
                     retryingInterrupted: retryingInterrupted)
    }
}

extension FileDescriptor {
    /// O_TMPFILE, a macro Swift does not import: `__O_TMPFILE | O_DIRECTORY` (the same value on x86-64 and arm64).
    private static let temporaryFileFlag = CInt(0o20_000_000) | O_DIRECTORY

    /// A new unnamed file in the directory `directory` refers to (openat(2) with O_TMPFILE), read and written,
    /// mode 0600: it has no name, so nothing else can open it, and it is gone when its last descriptor closes.
    public static func openTemporaryFile(in directory: FileDescriptor) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingErrno {
            sys_openat(directory.rawValue, ".", temporaryFileFlag | O_RDWR | O_CLOEXEC, 0o600)
        }.get())
    }
}
