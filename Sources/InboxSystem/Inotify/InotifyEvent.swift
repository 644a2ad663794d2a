import Glibc

/// One event read from an inotify descriptor (inotify(7)).
public struct InotifyEvent: Sendable, Hashable {
    /// The event bits, named after the kernel's `IN_*` constants.
    public struct Mask: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let closeWrite = Mask(rawValue: UInt32(IN_CLOSE_WRITE))
        public static let movedTo = Mask(rawValue: UInt32(IN_MOVED_TO))
        public static let movedFrom = Mask(rawValue: UInt32(IN_MOVED_FROM))
        public static let create = Mask(rawValue: UInt32(IN_CREATE))
        public static let delete = Mask(rawValue: UInt32(IN_DELETE))
        public static let deleteSelf = Mask(rawValue: UInt32(IN_DELETE_SELF))
        public static let moveSelf = Mask(rawValue: UInt32(IN_MOVE_SELF))
        public static let unmount = Mask(rawValue: UInt32(IN_UNMOUNT))
        public static let attrib = Mask(rawValue: UInt32(IN_ATTRIB))
        public static let queueOverflow = Mask(rawValue: UInt32(IN_Q_OVERFLOW))
        public static let ignored = Mask(rawValue: UInt32(IN_IGNORED))
        public static let isDirectory = Mask(rawValue: UInt32(IN_ISDIR))
        public static let onlyDirectory = Mask(rawValue: UInt32(IN_ONLYDIR))
        public static let dontFollow = Mask(rawValue: UInt32(IN_DONT_FOLLOW))
        public static let maskAdd = Mask(rawValue: UInt32(IN_MASK_ADD))
        public static let excludeUnlinked = Mask(rawValue: UInt32(IN_EXCL_UNLINK))
    }

    public let watch: CInt
    public let mask: Mask
    public let cookie: UInt32
    /// The entry name inside the watched directory, raw bytes without the NUL padding; empty for the directory itself.
    public let name: [UInt8]

    public init(watch: CInt, mask: Mask, cookie: UInt32, name: [UInt8]) {
        self.watch = watch
        self.mask = mask
        self.cookie = cookie
        self.name = name
    }

    /// Size of `struct inotify_event` before its name.
    public static let headerSize = 16

    /// Turns one `read(2)` buffer into events. A truncated trailing record is dropped:
    /// the kernel never splits a record, so one means the buffer was not from inotify.
    public static func parse(_ buffer: UnsafeRawBufferPointer) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var offset = 0
        while offset + headerSize <= buffer.count {
            let watch = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerSize
            guard length <= buffer.count - nameStart else { break }
            var name = Array(buffer[nameStart..<(nameStart + length)])
            if let nul = name.firstIndex(of: 0) { name.removeSubrange(nul...) }
            events.append(InotifyEvent(watch: watch, mask: Mask(rawValue: mask), cookie: cookie, name: name))
            offset = nameStart + length
        }
        return events
    }

    /// Convenience for tests and callers holding bytes.
    public static func parse(_ bytes: [UInt8]) -> [InotifyEvent] {
        bytes.withUnsafeBytes { parse($0) }
    }
}
