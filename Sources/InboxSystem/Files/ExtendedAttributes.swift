import Glibc

/// Extended attributes of an open file (xattr(7)), bounded: nothing a sender controls can make
/// the agent allocate more than the limit it asks for.
public struct ExtendedAttributes {
    public let descriptor: FileDescriptor
    /// The names there were when `listed()` made this value: a read of any other name is `.absent` without a call.
    /// nil: every read asks the kernel.
    private var present: Set<String>?

    public init(_ descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// The same attributes, listed once (flistxattr(2)), so that the reads that follow ask the kernel only for the
    /// names that exist: one call instead of one per absent name. For reading only: an attribute set after the
    /// listing is not seen. When the list cannot be had (or is over 64 KiB), every read asks, as without it.
    public func listed() -> ExtendedAttributes {
        var copy = self
        copy.present = listedNames().map(Set.init)
        return copy
    }

    public enum ReadResult: Equatable {
        case absent
        case value([UInt8])
        case tooLarge(Int)
        case failed(Errno)
    }

    /// Reads one attribute if it is at most `limit` bytes: one fgetxattr(2) into scratch space of
    /// that size (the caller's, when it keeps one, else a temporary one); only an oversized value
    /// costs a second call, to say how large it is.
    public func read(_ name: String, limit: Int, scratch: UnsafeMutableRawBufferPointer? = nil) -> ReadResult {
        if let scratch, scratch.count >= limit {
            return read(name, into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<max(limit, 1)]), limit: limit)
        }
        return withUnsafeTemporaryAllocation(byteCount: max(limit, 1), alignment: 1) { read(name, into: $0, limit: limit) }
    }

    private func read(_ name: String, into buffer: UnsafeMutableRawBufferPointer, limit: Int) -> ReadResult {
        if let present, !present.contains(name) { return .absent }
        let count = sys_fgetxattr(descriptor.rawValue, name, buffer)
        if count >= 0 { return .value(Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))) }
        let error = Errno.current
        switch error {
        case .noData, .notSupported: return .absent
        case .rangeError: return .tooLarge(max(sys_fgetxattr(descriptor.rawValue, name, nil), limit + 1))
        default: return .failed(error)
        }
    }

    public func readString(_ name: String, limit: Int) -> String? {
        if case .value(let bytes) = read(name, limit: limit) { return String(validating: bytes, as: UTF8.self) }
        return nil
    }

    @discardableResult
    public func write(_ name: String, _ value: String) -> Errno? { write(name, Array(value.utf8)) }

    /// Sets an attribute to raw bytes (fsetxattr(2)), creating or replacing it.
    @discardableResult
    public func write(_ name: String, _ value: [UInt8]) -> Errno? {
        let result = value.withUnsafeBytes { sys_fsetxattr(descriptor.rawValue, name, $0) }
        return result == 0 ? nil : .current
    }

    @discardableResult
    public func remove(_ name: String) -> Errno? {
        let result = sys_fremovexattr(descriptor.rawValue, name)
        return result == 0 || errno == ENODATA ? nil : .current
    }

    /// Copies every `user.` attribute (what a sender set: its metadata) onto `target`, as a copy of a file or a
    /// package carries it; the first error, if one could not be written.
    public func copyUserAttributes(to target: ExtendedAttributes) -> Errno? {
        for name in names() where name.hasPrefix("user.") {
            if case .value(let bytes) = read(name, limit: 65536), let error = target.write(name, bytes) { return error }
        }
        return nil
    }

    /// Names of all attributes (bounded at 64 KiB of names), asked of the kernel now.
    public func names() -> [String] { listedNames() ?? [] }

    /// The names, or nil when they cannot be listed (an error, or more than 64 KiB of them).
    private func listedNames() -> [String]? {
        let size = sys_flistxattr(descriptor.rawValue, nil)
        if size == 0 { return [] }
        guard size > 0, size <= 65536 else { return nil }
        // One byte more, so that names added since the size was asked are seen as a list that grew (ERANGE).
        var bytes = [UInt8](repeating: 0, count: size + 1)
        let count = bytes.withUnsafeMutableBytes { sys_flistxattr(descriptor.rawValue, $0) }
        guard count >= 0 else { return nil }
        return bytes.prefix(count).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}
