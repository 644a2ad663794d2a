import Glibc

/// What asking for a read lease on an open file found (fcntl(2), Leases).
public enum ReadLease: Equatable {
    /// Held: until this descriptor is closed, any open of the file for writing (or truncate) first breaks it, which
    /// `readLeaseIntact` sees.
    case held
    /// Someone has the file open for writing (EAGAIN): its content may still change.
    case busy
    /// Leases cannot be had here: not the file's owner and without CAP_LEASE (EACCES), or a filesystem without
    /// them (EINVAL). The content is then only as stable as its sender leaves it.
    case unavailable(Errno)
}

extension FileDescriptor {
    /// Takes a read lease (F_SETLEASE, F_RDLCK); the descriptor must be open for reading only.
    public func takeReadLease() -> ReadLease {
        switch retryingErrno({ sys_fcntl(rawValue, INBOX_SETLEASE, CInt(F_RDLCK)) }) {
        case .success: return .held
        case .failure(.wouldBlock): return .busy
        case .failure(let error): return .unavailable(error)
        }
    }

    /// Whether the read lease taken on this descriptor is still unbroken: nobody has tried to open the file for
    /// writing since. While a break is pending F_GETLEASE reports the type being broken to (F_UNLCK).
    public var readLeaseIntact: Bool {
        sys_fcntl(rawValue, INBOX_GETLEASE, 0) == CInt(F_RDLCK)
    }

    /// Gives the lease up (F_UNLCK): a writer waiting on it goes on.
    public func releaseLease() {
        _ = retryingErrno({ sys_fcntl(rawValue, INBOX_SETLEASE, CInt(F_UNLCK)) })
    }
}
